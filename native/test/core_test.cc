// Standalone test of native/core (no N-API), small enough to run under valgrind or ASan:
// kernels under every ISA the CPU offers, then an engine taken through append, batched range,
// top-k scan, seal, compact, the index (file / save / reopen / planner), a damaged index file, a
// damaged segment. Results are checked against a float64 oracle over the original float32
// vectors; any wrong answer exits 1. Build and run: scripts/test-leak.sh.
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "../core/engine.h"
#include "../core/kernels.h"
#include "../core/monitors.h"
#include "../core/pool.h"
#include "../core/scan.h"
#include "../core/segment.h"

using namespace nm;

namespace {

int failures = 0;

#define CHECK(cond, ...)                                      \
  do {                                                        \
    if (!(cond)) {                                            \
      failures++;                                             \
      std::fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      std::fprintf(stderr, __VA_ARGS__);                      \
      std::fprintf(stderr, "\n");                             \
    }                                                         \
  } while (0)

constexpr float kTol = 1e-4f;

struct Rev {
  uint64_t ord;
  size_t start, count;
  int64_t time;
  uint32_t source;
  uint8_t first;
};

// Clustered unit vectors: revisions around a few centroids, chunks around their revision.
struct Corpus {
  std::vector<Rev> revs;
  std::vector<float> vec;  // rows * kDims
  uint64_t label_base;
  size_t rows() const { return vec.size() / kDims; }
  const float* row(size_t r) const { return vec.data() + r * kDims; }
};

void normalise(float* v) {
  double s = 0;
  for (size_t i = 0; i < kDims; i++) s += (double)v[i] * v[i];
  float inv = (float)(1 / std::sqrt(s));
  for (size_t i = 0; i < kDims; i++) v[i] *= inv;
}

// About normal (Irwin-Hall of four uniforms, variance 1): cheap, so valgrind stays fast.
float gauss(std::mt19937_64& rng) {
  uint64_t x = rng();
  float s = 0;
  for (int i = 0; i < 4; i++, x >>= 16) s += (float)(x & 0xffff) / 65536.0f;
  return (s - 2.0f) * 1.7320508f;
}

std::vector<float> jitter(std::mt19937_64& rng, const float* base, float sigma) {
  std::vector<float> v(kDims);
  for (size_t i = 0; i < kDims; i++) v[i] = (base ? base[i] : 0) + gauss(rng) * sigma / 32;
  normalise(v.data());
  return v;
}

Corpus make_corpus(uint64_t seed, size_t nrevs, uint64_t label_base, uint64_t ord_base) {
  std::mt19937_64 rng(seed);
  Corpus c;
  c.label_base = label_base;
  std::vector<std::vector<float>> centroids;
  for (int i = 0; i < 6; i++) centroids.push_back(jitter(rng, nullptr, 1));
  for (size_t r = 0; r < nrevs; r++) {
    Rev rev;
    rev.ord = ord_base + 7 * ((r * 37) % nrevs) + 1;  // a permutation: ords out of label order
    rev.start = c.rows();
    rev.count = 1 + rng() % 4;
    rev.time = 1700000000 + 3600 * (int64_t)(rng() % 20);
    rev.source = r == nrevs / 2 ? 37 : (uint32_t)(rng() % 10);
    rev.first = rng() % 10 < 7;
    std::vector<float> center = jitter(rng, centroids[rng() % centroids.size()].data(), 1.1f);
    for (size_t k = 0; k < rev.count; k++) {
      std::vector<float> v = jitter(rng, center.data(), 0.7f);
      c.vec.insert(c.vec.end(), v.begin(), v.end());
    }
    c.revs.push_back(rev);
  }
  return c;
}

std::vector<RowInput> rows_of(const Corpus& c, size_t from, size_t to) {
  std::vector<RowInput> out;
  for (size_t r = from; r < to; r++) {
    const Rev& rev = c.revs[r];
    for (size_t i = rev.start; i < rev.start + rev.count; i++)
      out.push_back({c.label_base + i, rev.ord, rev.time, rev.source, rev.first, c.row(i)});
  }
  return out;
}

bool allowed(const Rev& r, const Filter& f) {
  return r.time >= f.tmin && r.time <= f.tmax && (!f.first_only || r.first) && source_allowed(f, r.source);
}

struct OHit {
  uint64_t ord, label;
  double score;
};

// Every row's cosine with q, in float64 over the float32 inputs.
std::vector<double> row_scores(const Corpus& c, const float* q) {
  std::vector<double> s(c.rows());
  for (size_t i = 0; i < c.rows(); i++)
    for (size_t d = 0; d < kDims; d++) s[i] += (double)q[d] * c.row(i)[d];
  return s;
}

// Allowed revisions among [0, upto) with their best chunk, best first.
std::vector<OHit> oracle(const Corpus& c, const std::vector<double>& s, const Filter& f, size_t upto) {
  std::vector<OHit> out;
  for (size_t r = 0; r < upto; r++) {
    const Rev& rev = c.revs[r];
    if (!allowed(rev, f)) continue;
    OHit best{rev.ord, 0, -1e9};
    for (size_t i = rev.start; i < rev.start + rev.count; i++)
      if (s[i] > best.score) best.score = s[i], best.label = c.label_base + i;
    out.push_back(best);
  }
  std::sort(out.begin(), out.end(), [](const OHit& a, const OHit& b) { return a.score > b.score; });
  return out;
}

// A threshold in a gap of at least 3e-4 between revision scores, near rank `target`.
float gap_threshold(const std::vector<OHit>& all, size_t target) {
  for (size_t d = 0; d < all.size(); d++)
    for (long i : {(long)(target + d), (long)target - (long)d})
      if (i >= 1 && i < (long)all.size() && all[i - 1].score - all[i].score > 3e-4) return (float)((all[i - 1].score + all[i].score) / 2);
  return 2;
}

void check_range(const RangeResult& got, const std::vector<OHit>& o, float threshold, const char* what) {
  std::map<uint64_t, const OHit*> want;
  for (auto& h : o)
    if (h.score >= threshold) want[h.ord] = &h;
  CHECK(!got.overflow, "%s", what);
  CHECK(got.hits.size() == want.size(), "%s: %zu hits, oracle %zu", what, got.hits.size(), want.size());
  for (auto& h : got.hits) {
    auto it = want.find(h.ord);
    CHECK(it != want.end(), "%s: ord %llu not in the oracle set", what, (unsigned long long)h.ord);
    if (it == want.end()) continue;
    CHECK(std::fabs(h.score - it->second->score) <= kTol, "%s: ord %llu score %f vs %f", what, (unsigned long long)h.ord, h.score,
          it->second->score);
    CHECK(h.label == it->second->label, "%s: ord %llu best label", what, (unsigned long long)h.ord);
  }
}

void check_topk(const std::vector<Hit>& got, const std::vector<OHit>& o, size_t k, const char* what) {
  CHECK(got.size() == std::min(k, o.size()), "%s: %zu rows, want %zu", what, got.size(), std::min(k, o.size()));
  for (size_t i = 0; i < got.size() && i < o.size(); i++) {
    CHECK(std::fabs(got[i].score - o[i].score) <= kTol, "%s: rank %zu score %f vs %f", what, i, got[i].score, o[i].score);
    if (i > 0) CHECK(got[i].score <= got[i - 1].score, "%s: order", what);
  }
}

std::string make_temp_dir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/nm-core-test-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back(0);
  if (!::mkdtemp(buf.data())) throw std::runtime_error("mkdtemp failed");
  return buf.data();
}

void remove_dir(const std::string& dir) {
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      std::string n = e->d_name;
      if (n != "." && n != "..") ::unlink((dir + "/" + n).c_str());
    }
    ::closedir(d);
  }
  ::rmdir(dir.c_str());
}

std::vector<std::string> segment_files(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      std::string n = e->d_name;
      if (n.rfind("seg-", 0) == 0) out.push_back(n);
    }
    ::closedir(d);
  }
  return out;
}

// ---- kernels ----

void test_kernels() {
  // f16: every finite half survives f16 -> f32 -> f16.
  for (uint32_t h = 0; h < 65536; h++) {
    if (((h >> 10) & 0x1f) == 0x1f) continue;
    CHECK(f32_to_f16(f16_to_f32((uint16_t)h)) == h, "f16 round trip of 0x%04x", h);
  }
  CHECK(f32_to_f16(1.0f) == 0x3c00, "f16(1)");
  CHECK(f32_to_f16(65520.0f) == 0x7c00, "f16 overflow rounds to inf");

  std::mt19937_64 rng(5);
  std::vector<float> a = jitter(rng, nullptr, 1), b = jitter(rng, nullptr, 1);
  std::vector<uint16_t> a16(kDims), b16(kDims);
  f32_to_f16_n(a.data(), a16.data(), kDims);
  f32_to_f16_n(b.data(), b16.data(), kDims);
  // Four rows and four queries of int8 codes, extremes included (every code +-127).
  std::vector<std::vector<int8_t>> rows8(4, std::vector<int8_t>(kDims)), qs8(4, std::vector<int8_t>(kDims));
  std::vector<float> scale8(4);
  for (size_t i = 0; i < 4; i++) {
    std::vector<float> v = jitter(rng, nullptr, 1);
    scale8[i] = quantize_i8(v.data(), rows8[i].data(), kDims);
    quantize_i8(jitter(rng, nullptr, 1).data(), qs8[i].data(), kDims);
  }
  std::fill(rows8[3].begin(), rows8[3].end(), (int8_t)127);
  std::fill(qs8[3].begin(), qs8[3].end(), (int8_t)-127);
  const int8_t* rp[4] = {rows8[0].data(), rows8[1].data(), rows8[2].data(), rows8[3].data()};
  const int8_t* qp[4] = {qs8[0].data(), qs8[1].data(), qs8[2].data(), qs8[3].data()};
  int32_t qsum[4] = {0, 0, 0, 0};
  int32_t want[16];
  for (size_t j = 0; j < 4; j++)
    for (size_t x = 0; x < kDims; x++) qsum[j] += qp[j][x];
  for (size_t r = 0; r < 4; r++)
    for (size_t j = 0; j < 4; j++) {
      want[r * 4 + j] = 0;
      for (size_t x = 0; x < kDims; x++) want[r * 4 + j] += (int32_t)rp[r][x] * qp[j][x];
    }
  double exact = 0;
  for (size_t i = 0; i < kDims; i++) exact += (double)a[i] * b[i];
  std::vector<int8_t> a8(kDims);
  float sa = quantize_i8(a.data(), a8.data(), kDims);
  Prepared pb;
  prepare(b.data(), &pb);

  CHECK(set_kernels("generic"), "generic is always available");
  const Kernels& g = kernels();
  float ref_f32 = g.dot_f16_f32(a16.data(), b.data(), kDims);
  CHECK(std::fabs(ref_f32 - exact) < kTol, "f16 x f32 dot %f vs %f", ref_f32, exact);
  float est = sa * pb.scale * g.dot_i8(a8.data(), pb.code, pb.sum, kDims);
  CHECK(std::fabs(est - exact) <= sa * pb.half_l1 + pb.fixed, "int8 estimate %f vs %f outside its bound", est, exact);
  CHECK(std::fabs(est - exact) < 0.03, "int8 estimate %f vs %f", est, exact);
  for (const char* isa : {"generic", "avx2", "avx512", "avx512vnni"}) {
    if (!set_kernels(isa)) {
      std::printf("  kernels: %s not supported here, skipped\n", isa);
      continue;
    }
    const Kernels& k = kernels();
    CHECK(std::strcmp(k.isa, isa) == 0, "active ISA %s", k.isa);
    CHECK(std::fabs(k.dot_f16_f32(a16.data(), b.data(), kDims) - ref_f32) < 1e-5, "%s dot_f16_f32", isa);
    // The integer dots are exact on every ISA: one product each way, a tile, four rows.
    int32_t tile[16], col[4];
    k.dot_i8_4x4(rp, qp, qsum, kDims, tile);
    for (size_t j = 0; j < 4; j++) {
      k.dot_i8_4x1(rp, qp[j], qsum[j], kDims, col);
      for (size_t r = 0; r < 4; r++) {
        CHECK(tile[r * 4 + j] == want[r * 4 + j], "%s dot_i8_4x4 [%zu][%zu]", isa, r, j);
        CHECK(col[r] == want[r * 4 + j], "%s dot_i8_4x1 [%zu][%zu]", isa, r, j);
        CHECK(k.dot_i8(rp[r], qp[j], qsum[j], kDims) == want[r * 4 + j], "%s dot_i8 [%zu][%zu]", isa, r, j);
      }
    }
    std::vector<uint8_t> bytes(4096);
    uint64_t sum = 0;
    for (size_t i = 0; i < bytes.size(); i++) sum += bytes[i] = (uint8_t)(i * 7);
    CHECK(k.sum_bytes(bytes.data(), bytes.size()) == sum, "%s sum_bytes", isa);
    // Conversion and quantisation agree bit for bit, ties, subnormals and overflow included.
    std::vector<float> edge(a);
    const float special[] = {0.0f, -0.0f, 1.0f, 65504.0f, 65520.0f, -70000.0f, 1e-7f, -6e-8f, 3e-8f, 1.00048828125f, 1.00146484375f,
                             2.9802322e-8f, std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()};
    for (size_t i = 0; i < sizeof special / sizeof *special; i++) edge[i * 37] = special[i];
    std::vector<uint16_t> gh(kDims), kh(kDims);
    for (const std::vector<float>* v : {&a, &b, &edge}) {
      g.to_f16(v->data(), gh.data(), kDims);
      k.to_f16(v->data(), kh.data(), kDims);
      CHECK(gh == kh, "%s to_f16", isa);
    }
    std::vector<int8_t> gq(kDims), kq(kDims);
    std::vector<float> halves(kDims);  // codes landing exactly on .5: rounded to even both ways
    for (size_t i = 0; i < kDims; i++) halves[i] = (float)((int)(i % 255) - 127) + ((i % 3 == 0) ? 0.5f : 0.0f);
    halves[0] = 127.0f;
    std::vector<float> zeros(kDims, 0.0f);
    for (const std::vector<float>* v : {&a, &b, &halves, &zeros}) {
      float gs = g.quantize_i8(v->data(), gq.data(), kDims), ks = k.quantize_i8(v->data(), kq.data(), kDims);
      CHECK(gs == ks && gq == kq, "%s quantize_i8", isa);
    }
    std::printf("  kernels: %s agrees with generic\n", isa);
  }
  CHECK(!set_kernels("sse9"), "an unknown ISA is refused");
  CHECK(set_kernels("auto"), "auto");
}

// ---- engine ----

EngineOptions options(const std::string& dir) {
  EngineOptions o;
  o.dir = dir;
  o.index_min_rows = 40;  // a small corpus, indexed: valgrind runs this
  o.threads = 2;
  return o;
}

void test_engine(uint64_t label_base, uint64_t ord_base, size_t nrevs) {
  std::printf("  engine: %zu revisions, labels from %llu, ords from %llu\n", nrevs, (unsigned long long)label_base, (unsigned long long)ord_base);
  Corpus c = make_corpus(label_base + 17, nrevs, label_base, ord_base);
  const size_t n = c.revs.size();
  std::mt19937_64 rng(3);
  std::vector<std::vector<float>> qs;
  std::vector<std::vector<double>> scores;
  for (int i = 0; i < 4; i++) {
    qs.push_back(jitter(rng, c.row(rng() % c.rows()), 0.8f));
    scores.push_back(row_scores(c, qs.back().data()));
  }
  std::string dir = make_temp_dir();

  Filter all;
  Filter window;
  window.tmin = 1700000000 + 3600 * 5;
  window.tmax = 1700000000 + 3600 * 12;
  Filter sources;
  sources.sources = {0b10100110, 0b11, 0, 0, 1 << (37 & 7)};  // 1 2 5 7 8 9 and 37
  sources.first_only = true;
  const Filter* filters[] = {&all, &window, &sources};

  // Every query under every filter, in one batch (3 queries x 3 filters = 9 per pass), checked.
  auto check_all = [&](const Engine& e, size_t upto, const char* what) {
    std::vector<RangeQuery> batch;
    std::vector<float> thresholds;
    std::vector<size_t> which;
    for (size_t i = 0; i < 3; i++)
      for (const Filter* f : filters) {
        float t = gap_threshold(oracle(c, scores[i], all, n), 20 + 15 * i);
        batch.push_back({qs[i].data(), t, *f, SIZE_MAX});
        thresholds.push_back(t);
        which.push_back(i);
      }
    std::vector<RangeResult> got = e.range(batch);
    CHECK(got.size() == batch.size(), "%s: batch size", what);
    for (size_t j = 0; j < got.size() && j < batch.size(); j++) {
      char buf[128];
      std::snprintf(buf, sizeof buf, "%s, range %zu", what, j);
      check_range(got[j], oracle(c, scores[which[j]], batch[j].filter, upto), thresholds[j], buf);
    }
    for (size_t i = 0; i < 3; i++)
      for (const Filter* f : filters) {
        char buf[128];
        std::snprintf(buf, sizeof buf, "%s, top-k %zu", what, i);
        check_topk(e.topk(qs[i].data(), 15, -1, *f), oracle(c, scores[i], *f, upto), 15, buf);
      }
  };

  {
    const size_t a = n / 3, b = 2 * n / 3;
    Engine e(options(dir));
    e.append(rows_of(c, 0, a));
    check_all(e, a, "delta");
    e.seal();
    check_all(e, a, "one segment");
    e.append(rows_of(c, a, b));
    e.seal();
    e.append(rows_of(c, b, n));
    CHECK(e.stats().segments == 2, "two segments");
    check_all(e, n, "two segments + delta");

    // The cap: overflow with cap + 1 hits.
    std::vector<RangeQuery> capped{{qs[0].data(), -1, all, 5}};
    RangeResult r = e.range(capped)[0];
    CHECK(r.overflow && r.hits.size() == 6, "cap 5: overflow %d, %zu hits", (int)r.overflow, r.hits.size());

    bool threw = false;
    try {
      e.append(rows_of(c, 0, 1));
    } catch (const std::runtime_error&) {
      threw = true;
    }
    CHECK(threw, "a label that is not new is refused");

    e.compact();
    CHECK(e.stats().segments == 1, "compacted into one segment");
    CHECK(segment_files(dir).size() == 1, "old segment files removed");
    check_all(e, n, "compacted + delta");

    bool complete = true, far = false;
    TopkOptions wide;
    wide.probe_max_rows = c.rows();
    wide.far_score = -1;
    CHECK(e.stats().index_lists == 0 && e.stats().index_pending == c.rows(), "no index before filing");
    e.topk_index(qs[0].data(), 5, -1, all, wide, &complete, &far, nullptr);
    CHECK(!complete, "no index yet: incomplete");
    while (e.index_pending(100) > 0) {
    }
    e.seal();
    e.save_index();
    EngineStats s = e.stats();
    CHECK(s.segment_rows == c.rows() && s.delta_rows == 0 && s.index_rows == c.rows() && s.index_pending == 0 && s.index_lists == 16,
          "stats after save");
    for (auto& q : qs) {
      std::vector<Hit> h = e.topk_index(q.data(), 5, -1, all, wide, &complete, &far, nullptr);
      CHECK(complete && h.size() == 5, "the index fills k");
    }
    e.close();
  }
  {
    Engine e(options(dir));  // reopen: segments mapped, index file read
    EngineStats s = e.stats();
    CHECK(s.segments == 2 && s.segment_rows == c.rows() && s.index_rows == c.rows() && s.index_pending == 0 &&
              s.next_label == label_base + c.rows(),
          "stats after reopen");
    // The walk after open touches each segment's int8 column and the index file's codes (just
    // written, so in the page cache): whole pages, at most two more a region than the bytes.
    while (!e.stats().warm_done) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    const uint64_t page = (uint64_t)::sysconf(_SC_PAGESIZE), bytes = 2 * c.rows() * kDims;
    CHECK(e.stats().warmed_bytes >= bytes && e.stats().warmed_bytes <= bytes + 3 * 2 * page, "the mappings warmed: %llu bytes for %llu",
          (unsigned long long)e.stats().warmed_bytes, (unsigned long long)bytes);
    check_all(e, n, "reopened");
    TopkOptions wide;
    wide.probe_max_rows = c.rows();
    wide.far_score = -1;
    for (size_t i = 0; i < qs.size(); i++)
      for (const Filter* f : filters) {
        bool complete = false, far = false;
        ProbeStats ps;
        wide.threads = 1 + i % 2;  // every other query sweeps its lists on two threads
        std::vector<Hit> h = e.topk_index(qs[i].data(), 10, -1, *f, wide, &complete, &far, &ps);
        std::vector<OHit> o = oracle(c, scores[i], *f, n);
        std::map<uint64_t, double> score;
        for (auto& x : o) score[x.ord] = x.score;
        CHECK(complete && !far, "the index is complete after reopen");
        if (complete) CHECK(h.size() == std::min<size_t>(10, o.size()), "the index fills k under a filter: %zu of %zu", h.size(), o.size());
        for (auto& x : h) {
          CHECK(score.count(x.ord), "an index hit inside the filter");
          if (score.count(x.ord)) CHECK(std::fabs(x.score - score[x.ord]) <= kTol, "an index score rescored exactly");
        }
        Engine::Plan plan;
        TopkOptions planned = wide;
        planned.scan_max_rows = 0;
        std::vector<Hit> p = e.topk_planned(qs[i].data(), 10, -1, *f, planned, &plan, nullptr);
        CHECK(p.size() == std::min<size_t>(10, o.size()), "the planner fills k");
      }
    e.close();
  }
  {
    // A damaged index file is rebuilt, not fatal; a damaged segment: the constructor throws.
    std::string idx = dir + "/index.nmi";
    CHECK(::truncate(idx.c_str(), 40) == 0, "truncate the index file");
    {
      Engine e(options(dir));
      CHECK(e.stats().index_lists == 0 && e.stats().index_pending == c.rows(), "a damaged index file: every row pending");
      while (e.index_pending(1000) > 0) {
      }
      CHECK(e.stats().index_rows == c.rows(), "filed again");
      e.close();
    }
    std::vector<std::string> segs = segment_files(dir);
    CHECK(segs.size() == 2, "the compacted segment and the last seal on disk (%zu)", segs.size());
    if (!segs.empty()) {
      std::string p = dir + "/" + segs[0];
      struct stat st;
      ::stat(p.c_str(), &st);
      CHECK(::truncate(p.c_str(), st.st_size - 64) == 0, "truncate");
      bool threw = false;
      try {
        Engine e(options(dir));
      } catch (const std::runtime_error& x) {
        threw = std::strstr(x.what(), "damaged") != nullptr;
      }
      CHECK(threw, "a truncated segment is refused with 'damaged'");
    }
  }
  remove_dir(dir);
}

size_t open_fds() {
  size_t n = 0;
  if (DIR* d = ::opendir("/proc/self/fd")) {
    while (::readdir(d)) n++;
    ::closedir(d);
  }
  return n;
}

void test_refusals() {
  Corpus c = make_corpus(9, 6, 0, 0);
  std::string dir = make_temp_dir();
  {
    // Labels must be new and increasing within a batch too (a repeated label would later make
    // index_pending read a row it never copied).
    Engine e(options(dir));
    std::vector<RowInput> rows = rows_of(c, 0, 2);
    rows.push_back(rows.back());
    bool threw = false;
    try {
      e.append(rows);
    } catch (const std::runtime_error&) {
      threw = true;
    }
    CHECK(threw, "a batch repeating a label is refused");
    CHECK(e.stats().delta_rows == 0, "a refused batch adds no rows (%zu)", e.stats().delta_rows);
    e.close();
  }
  {
    // A failed open (damaged manifest) must not keep the directory's lock file open.
    std::FILE* m = std::fopen((dir + "/manifest").c_str(), "w");
    std::fputs("bogus 1\n", m);
    std::fclose(m);
    size_t before = open_fds();
    bool threw = false;
    try {
      Engine e(options(dir));
    } catch (const std::runtime_error&) {
      threw = true;
    }
    CHECK(threw, "an unknown manifest entry is refused");
    CHECK(open_fds() == before, "a failed open leaks no file descriptor (%zu open, %zu before)", open_fds(), before);
  }
  remove_dir(dir);
}

// ---- monitors ----

// A monitor batch against the float64 oracle: every (monitor, revision) whose best chunk scores
// >= floor + kTol is found, nothing below floor - kTol is, scores within kTol, each revision
// once with a best chunk (a label whose own score is within kTol of the best).
void check_monitors(const MonitorResult& got, const std::vector<std::vector<double>>& s, const std::vector<float>& floors,
                    const std::vector<uint64_t>& ords, const std::vector<uint64_t>& labels, const char* what) {
  std::map<std::pair<uint32_t, uint64_t>, std::pair<double, uint64_t>> best;  // (monitor, ord) -> (score, label)
  std::map<std::pair<uint32_t, uint64_t>, double> by_label;                    // (monitor, label) -> score
  for (uint32_t q = 0; q < s.size(); q++)
    for (size_t r = 0; r < ords.size(); r++) {
      by_label[{q, labels[r]}] = s[q][r];
      auto it = best.find({q, ords[r]});
      if (it == best.end() || s[q][r] > it->second.first) best[{q, ords[r]}] = {s[q][r], labels[r]};
    }
  std::map<std::pair<uint32_t, uint64_t>, const MonitorMatch*> seen;
  for (size_t i = 0; i < got.matches.size(); i++) {
    const MonitorMatch& h = got.matches[i];
    if (i > 0) {
      const MonitorMatch& p = got.matches[i - 1];
      CHECK(p.monitor < h.monitor || (p.monitor == h.monitor && p.ord < h.ord), "%s: order at %zu", what, i);
    }
    CHECK(seen.emplace(std::make_pair(h.monitor, h.ord), &h).second, "%s: monitor %u ord %llu twice", what, h.monitor, (unsigned long long)h.ord);
    auto it = best.find({h.monitor, h.ord});
    CHECK(it != best.end(), "%s: monitor %u ord %llu not in the batch", what, h.monitor, (unsigned long long)h.ord);
    if (it == best.end()) continue;
    CHECK(h.score >= floors[h.monitor], "%s: monitor %u score %f below its floor %f", what, h.monitor, h.score, floors[h.monitor]);
    CHECK(std::fabs(h.score - it->second.first) <= kTol, "%s: monitor %u ord %llu score %f vs %f", what, h.monitor, (unsigned long long)h.ord,
          h.score, it->second.first);
    auto bl = by_label.find({h.monitor, h.label});
    CHECK(bl != by_label.end() && it->second.first - bl->second <= kTol, "%s: monitor %u ord %llu label %llu is not its best chunk", what,
          h.monitor, (unsigned long long)h.ord, (unsigned long long)h.label);
  }
  for (auto& [key, v] : best)
    if (v.first >= floors[key.first] + kTol)
      CHECK(seen.count(key), "%s: monitor %u missed ord %llu scoring %f (floor %f)", what, key.first, (unsigned long long)key.second, v.first,
            floors[key.first]);
}

void test_monitors() {
  Pool pool(2);
  Corpus c = make_corpus(31, 70, 1000, 5000);
  // The batch in a shuffled order: a revision's chunks need not be adjacent.
  std::mt19937_64 rng(8);
  std::vector<size_t> perm(c.rows());
  for (size_t i = 0; i < perm.size(); i++) perm[i] = i;
  std::shuffle(perm.begin(), perm.end(), rng);
  std::vector<uint64_t> row_ord(c.rows());
  for (const Rev& r : c.revs)
    for (size_t i = r.start; i < r.start + r.count; i++) row_ord[i] = r.ord;
  std::vector<float> chunks;
  std::vector<uint64_t> ords, labels;
  for (size_t i : perm) {
    chunks.insert(chunks.end(), c.row(i), c.row(i) + kDims);
    ords.push_back(row_ord[i]);
    labels.push_back(c.label_base + i);
  }
  const size_t n = perm.size();
  // 23 monitors (not a multiple of the tile's four): most near a chunk, a few anywhere.
  const size_t m = 23;
  std::vector<float> mon;
  for (size_t q = 0; q < m; q++) {
    std::vector<float> v = q % 5 == 4 ? jitter(rng, nullptr, 1) : jitter(rng, c.row(rng() % c.rows()), q % 2 ? 0.6f : 1.0f);
    mon.insert(mon.end(), v.begin(), v.end());
  }
  std::vector<std::vector<double>> s(m, std::vector<double>(n, 0.0));
  for (size_t q = 0; q < m; q++)
    for (size_t r = 0; r < n; r++)
      for (size_t d = 0; d < kDims; d++) s[q][r] += (double)mon[q * kDims + d] * chunks[r * kDims + d];
  // Floors in gaps of each monitor's revision scores, at varied depths; one at -1 (everything).
  std::vector<float> floors(m);
  for (size_t q = 0; q < m; q++) {
    std::map<uint64_t, double> rev;
    for (size_t r = 0; r < n; r++) rev[ords[r]] = std::max(rev.count(ords[r]) ? rev[ords[r]] : -9.0, s[q][r]);
    std::vector<OHit> all;
    for (auto& [o, sc] : rev) all.push_back({o, 0, sc});
    std::sort(all.begin(), all.end(), [](const OHit& a, const OHit& b) { return a.score > b.score; });
    floors[q] = q == 7 ? -1.0f : gap_threshold(all, 1 + (q * 7) % 30);
  }
  MonitorSet set = prepare_monitors(mon.data(), floors.data(), m, pool);
  ChunkBatch batch{chunks.data(), ords.data(), labels.data(), n};
  int64_t ref_dots = 0;
  size_t ref_matches = 0;
  for (const char* isa : {"generic", "avx2", "avx512", "avx512vnni"}) {
    if (!set_kernels(isa)) continue;
    std::string what = std::string("monitors ") + isa;
    MonitorResult got = score_monitors(set, batch, pool);
    check_monitors(got, s, floors, ords, labels, what.c_str());
    CHECK(got.rescored < m * n, "%s: the int8 pass ruled out nothing (%llu)", what.c_str(), (unsigned long long)got.rescored);
    if (ref_matches == 0) ref_matches = got.matches.size();
    CHECK(got.matches.size() == ref_matches, "%s: %zu matches, generic %zu", what.c_str(), got.matches.size(), ref_matches);
    // Passes of 16 rows: revisions cut by pass edges (the rows are shuffled) merged to their best chunk.
    MonitorResult passes = score_monitors(set, batch, pool, 16);
    check_monitors(passes, s, floors, ords, labels, (what + " passes").c_str());
    CHECK(passes.matches.size() == got.matches.size(), "%s: %zu matches in passes, %zu in one", what.c_str(), passes.matches.size(), got.matches.size());
    for (size_t i = 0; i < passes.matches.size() && i < got.matches.size(); i++)
      CHECK(passes.matches[i].ord == got.matches[i].ord && passes.matches[i].label == got.matches[i].label && passes.matches[i].score == got.matches[i].score,
            "%s: passes differ at %zu", what.c_str(), i);
    int64_t dots = monitor_dots(set, chunks.data(), n, pool);
    CHECK(monitor_dots(set, chunks.data(), n, pool, 16) == dots, "%s: monitor_dots in passes", what.c_str());
    if (ref_dots == 0) ref_dots = dots;
    CHECK(dots == ref_dots, "%s: monitor_dots %lld vs %lld", what.c_str(), (long long)dots, (long long)ref_dots);
    // Edges: one monitor, one chunk, nothing.
    std::vector<std::vector<double>> s1(1, std::vector<double>(s[3].begin(), s[3].begin() + 1));
    std::vector<float> f1{floors[3]};
    MonitorSet one = prepare_monitors(mon.data() + 3 * kDims, f1.data(), 1, pool);
    check_monitors(score_monitors(one, ChunkBatch{chunks.data(), ords.data(), labels.data(), 1}, pool), s1, f1, {ords[0]}, {labels[0]},
                   (what + " m=1 n=1").c_str());
    std::vector<std::vector<double>> sm1(1, s[5]);
    std::vector<float> fm1{floors[5]};
    MonitorSet m1 = prepare_monitors(mon.data() + 5 * kDims, fm1.data(), 1, pool);
    check_monitors(score_monitors(m1, batch, pool), sm1, fm1, ords, labels, (what + " m=1").c_str());
    std::vector<std::vector<double>> sn1(m);
    for (size_t q = 0; q < m; q++) sn1[q] = {s[q][n - 1]};
    check_monitors(score_monitors(set, ChunkBatch{chunks.data() + (n - 1) * kDims, ords.data() + n - 1, labels.data() + n - 1, 1}, pool), sn1,
                   floors, {ords[n - 1]}, {labels[n - 1]}, (what + " n=1").c_str());
    CHECK(score_monitors(set, ChunkBatch{chunks.data(), ords.data(), labels.data(), 0}, pool).matches.empty(), "%s: n=0", what.c_str());
    MonitorSet none = prepare_monitors(mon.data(), floors.data(), 0, pool);
    CHECK(score_monitors(none, batch, pool).matches.empty(), "%s: m=0", what.c_str());
    // Floors 2e-4 under a pair's score (it must be found: the int8 estimate alone, ~0.01 off,
    // misses about half), at it, and 2e-4 over it (it must not be).
    for (double off : {-2e-4, 0.0, 2e-4}) {
      std::vector<float> edge(m);
      for (size_t q = 0; q < m; q++) edge[q] = (float)(s[q][(q * 13 + (size_t)(off * 1e4 + 2)) % n] + off);
      MonitorSet es = prepare_monitors(mon.data(), edge.data(), m, pool);
      check_monitors(score_monitors(es, batch, pool), s, edge, ords, labels, (what + " edge floors").c_str());
    }
    std::printf("  monitors: %s: %zu matches, %llu of %zu pairs rescored\n", isa, got.matches.size(), (unsigned long long)got.rescored, m * n);
  }
  CHECK(ref_matches > m, "monitors: the data should give some matches (%zu)", ref_matches);

  // A window of the ingest sequence read from an engine's rows (two segments and the delta):
  // the same matches as the same chunks handed in as floats, on the background pool's shape
  // (workers at nice 10, the caller waiting).
  {
    std::string dir = make_temp_dir();
    Pool background(2, 10);
    {
      Engine e(options(dir));
      const size_t revs = c.revs.size(), a = revs / 3, b = 2 * revs / 3;
      e.append(rows_of(c, 0, a));
      e.seal();
      e.append(rows_of(c, a, b));
      e.seal();
      e.append(rows_of(c, b, revs));
      // Labels [lo, hi) as floats, in label order.
      auto floats = [&](uint64_t lo, uint64_t hi, std::vector<float>* v, std::vector<uint64_t>* o, std::vector<uint64_t>* l) {
        for (uint64_t label = lo; label < hi; label++) {
          size_t i = label - c.label_base;
          v->insert(v->end(), c.row(i), c.row(i) + kDims);
          o->push_back(row_ord[i]);
          l->push_back(label);
        }
      };
      const uint64_t lo = c.label_base, hi = c.label_base + c.rows();
      CHECK(c.rows() > 100, "labels: the corpus has %zu rows", c.rows());
      // The whole sequence, a window cut inside revisions, and one row; in one pass and in passes of 16.
      for (auto [from, to] : {std::pair<uint64_t, uint64_t>{lo, hi}, {lo + 37, hi - 23}, {hi - 1, hi}}) {
        for (size_t pass : {kMonitorPassRows, (size_t)16}) {
          std::vector<float> v;
          std::vector<uint64_t> o, l;
          floats(from, to, &v, &o, &l);
          MonitorResult want = score_monitors(set, ChunkBatch{v.data(), o.data(), l.data(), o.size()}, pool, pass);
          MonitorResult got = score_monitor_labels(set, e, from, to, background, pass);
          CHECK(got.matches.size() == want.matches.size(), "labels [%llu, %llu) pass %zu: %zu matches, %zu from floats", (unsigned long long)from,
                (unsigned long long)to, pass, got.matches.size(), want.matches.size());
          for (size_t i = 0; i < got.matches.size() && i < want.matches.size(); i++)
            CHECK(got.matches[i].monitor == want.matches[i].monitor && got.matches[i].ord == want.matches[i].ord &&
                      got.matches[i].label == want.matches[i].label && got.matches[i].score == want.matches[i].score,
                  "labels [%llu, %llu) pass %zu: match %zu differs", (unsigned long long)from, (unsigned long long)to, pass, i);
        }
      }
      CHECK(score_monitor_labels(set, e, lo, hi, background).matches.size() > m, "labels: the whole sequence gives matches");
      CHECK(score_monitor_labels(set, e, hi, hi + 100, background).matches.empty() && score_monitor_labels(set, e, 0, lo, background).matches.empty() &&
                score_monitor_labels(set, e, hi, lo, background).matches.empty(),
            "labels the engine does not hold give nothing");
    }
    remove_dir(dir);
  }
  CHECK(first_nonfinite(chunks.data(), chunks.size()) == chunks.size(), "finite chunks");
  chunks[5] = NAN;
  CHECK(first_nonfinite(chunks.data(), chunks.size()) == 5, "a NaN is found");
  set_kernels("auto");
}

}  // namespace

int main() {
  try {
    std::printf("core_test: kernels (%s by default)\n", kernels().isa);
    test_kernels();
    std::printf("core_test: engine\n");
    test_engine(0, 0, 80);
    test_engine((1ull << 40) + 3, (1ull << 32) + 1, 50);
    std::printf("core_test: refusals\n");
    test_refusals();
    std::printf("core_test: monitors\n");
    test_monitors();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "FAIL: uncaught exception: %s\n", e.what());
    return 1;
  }
  if (failures) {
    std::fprintf(stderr, "core_test: %d check(s) failed\n", failures);
    return 1;
  }
  std::printf("core_test: all checks passed\n");
  return 0;
}
