// The relevance index against graphs, side by side on the same rows and queries: usearch HNSW
// over f16 codes, int8 codes (per-row scale) and binary codes (1 bit a dimension after
// centring), each searched by usearch and its chunk results grouped into revisions and scored
// exactly in f16, beside the shipped index (nm::Engine, planned as the service plans it).
// Recall is of the oracle's top 50 revisions (bench/search.ts writes it), per query class.
//
// Run by bench/search.ts: compare ENGINE_DIR WORK_DIR THREADS, where WORK_DIR holds
// queries.f32 (n x 1024), classes.txt (n lines) and truth.f64 (n x 51: the top 50 ords, then
// the 50th score). Built with g++ against native/core and usearch's headers; not shipped.
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <usearch/index_dense.hpp>

#include "engine.h"
#include "kernels.h"
#include "scan.h"
#include "segment.h"

using namespace nm;
using namespace unum::usearch;

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

template <typename T>
std::vector<T> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw std::runtime_error("open " + path);
  std::vector<T> v((size_t)in.tellg() / sizeof(T));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(v.data()), (std::streamsize)(v.size() * sizeof(T)));
  return v;
}

// The codes: int8 with its scale, and the code sum for the VNNI offset (as the engine's kernels).
constexpr size_t kI8Bytes = kDims + 8;
float dot_i8(const uint8_t* a, const uint8_t* b) {
  int32_t sum_b;
  float sa, sb;
  std::memcpy(&sa, a + kDims, 4);
  std::memcpy(&sb, b + kDims, 4);
  std::memcpy(&sum_b, b + kDims + 4, 4);
  return sa * sb * (float)kernels().dot_i8(reinterpret_cast<const int8_t*>(a), reinterpret_cast<const int8_t*>(b), sum_b, kDims);
}
distance_punned_t metric_i8(std::size_t a, std::size_t b) { return 1.0f - dot_i8((const uint8_t*)a, (const uint8_t*)b); }
// f16 x f16 (the engine no longer needs one): AVX-512 F16 conversion and FMA.
__attribute__((target("avx512f,f16c,fma"))) distance_punned_t metric_f16(std::size_t a, std::size_t b) {
  const uint16_t* x = (const uint16_t*)a;
  const uint16_t* y = (const uint16_t*)b;
  __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
  for (size_t i = 0; i < kDims; i += 32) {
    s0 = _mm512_fmadd_ps(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)(x + i))), _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)(y + i))), s0);
    s1 = _mm512_fmadd_ps(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)(x + i + 16))), _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)(y + i + 16))), s1);
  }
  return 1.0f - _mm512_reduce_add_ps(_mm512_add_ps(s0, s1));
}
distance_punned_t metric_b1(std::size_t a, std::size_t b) {
  const uint64_t* x = (const uint64_t*)a;
  const uint64_t* y = (const uint64_t*)b;
  int d = 0;
  for (size_t i = 0; i < kDims / 64; i++) d += __builtin_popcountll(x[i] ^ y[i]);
  return (float)d;
}

struct Rows {
  std::vector<std::unique_ptr<Segment>> segs;
  std::vector<std::pair<uint32_t, uint32_t>> at;  // key -> (segment, row)
  const Cols& cols(uint64_t key) const { return segs[at[key].first]->cols(); }
  size_t row(uint64_t key) const { return at[key].second; }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: compare ENGINE_DIR WORK_DIR THREADS\n");
    return 2;
  }
  std::string engine_dir = argv[1], work = argv[2];
  size_t threads = std::max(1, std::atoi(argv[3]));
  Rows rows;
  {
    std::ifstream m(engine_dir + "/manifest");
    std::string k, v;
    while (m >> k >> v)
      if (k == "segment") rows.segs.push_back(std::make_unique<Segment>(engine_dir + "/" + v));
  }
  for (uint32_t s = 0; s < rows.segs.size(); s++)
    for (uint32_t r = 0; r < rows.segs[s]->cols().n; r++) rows.at.push_back({s, r});
  size_t n = rows.at.size();
  std::vector<float> qs = read_file<float>(work + "/queries.f32");
  std::vector<double> truth = read_file<double>(work + "/truth.f64");
  size_t nq = qs.size() / kDims;
  std::vector<std::string> cls;
  {
    std::ifstream in(work + "/classes.txt");
    std::string line;
    while (std::getline(in, line)) cls.push_back(line);
  }
  std::vector<std::string> classes;
  for (auto& c : cls)
    if (std::find(classes.begin(), classes.end(), c) == classes.end()) classes.push_back(c);

  // Recall of one query's answer against the oracle's top 50 (ties within 1e-4 of the 50th count).
  auto recall = [&](size_t qi, const std::vector<Hit>& hits) {
    std::set<uint64_t> top;
    for (size_t j = 0; j < 50; j++) top.insert((uint64_t)truth[qi * 51 + j]);
    double kth = truth[qi * 51 + 50];
    size_t found = 0;
    for (size_t i = 0; i < std::min<size_t>(50, hits.size()); i++) found += top.count(hits[i].ord) || hits[i].score >= kth - 1e-4;
    return std::min<size_t>(found, 50) / 50.0;
  };
  // Chunk results of a graph, as revisions scored exactly (every chunk of each, in f16).
  auto revisions = [&](size_t qi, const std::vector<uint64_t>& keys) {
    std::unordered_map<uint64_t, Hit> by;
    for (uint64_t key : keys) {
      const Cols& c = rows.cols(key);
      uint64_t ord = c.ord[rows.row(key)];
      if (!by.count(ord)) by[ord] = score_revision(c, rows.row(key), &qs[qi * kDims]);
    }
    std::vector<Hit> hits;
    for (auto& [o, h] : by) hits.push_back(h);
    std::sort(hits.begin(), hits.end(), better);
    if (hits.size() > 50) hits.resize(50);
    return hits;
  };
  // Per class: recall and µs a query.
  auto report = [&](const std::string& name, const std::string& extra, const std::vector<double>& rec, const std::vector<double>& us) {
    std::ostringstream o;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%-34s", name.c_str());
    o << buf;
    double all_us = 0;
    for (auto& c : classes) {
      double r = 0, m = 1;
      size_t k = 0;
      for (size_t i = 0; i < nq; i++)
        if (cls[i] == c) r += rec[i], m = std::min(m, rec[i]), k++;
      std::snprintf(buf, sizeof buf, " %6.4f", k ? r / k : 1.0);
      o << buf;
    }
    for (double u : us) all_us += u;
    std::snprintf(buf, sizeof buf, " %9.0f", all_us / nq);
    o << buf << "  " << extra << "\n";
    std::fputs(o.str().c_str(), stdout);
    std::fflush(stdout);
  };

  std::printf("relevance: the index and HNSW graphs on the same %zu chunks and %zu queries (top-50 recall by class, µs a query on one thread)\n", n, nq);
  std::printf("%-34s", "");
  for (auto& c : classes) std::printf(" %6.6s", c.c_str());
  std::printf(" %9s  %s\n", "µs/query", "build, bytes a vector");

  // The shipped index, as the service plans it.
  {
    EngineOptions o;
    o.dir = engine_dir;
    o.threads = threads;
    Engine e(o);
    TopkOptions t;
    std::vector<double> rec(nq), us(nq);
    std::map<std::string, std::pair<int, double>> plans;  // queries and µs by plan
    for (size_t i = 0; i < nq; i++) {
      Engine::Plan plan;
      double t0 = now();
      auto hits = e.topk_planned(&qs[i * kDims], 50, -1, Filter{}, t, &plan, nullptr);
      us[i] = (now() - t0) * 1e6;
      rec[i] = recall(i, hits);
      auto& p = plans[plan == Engine::Plan::Index ? "index" : plan == Engine::Plan::ScanFar ? "scan-far" : plan == Engine::Plan::Scan ? "scan" : "index-then-scan"];
      p.first++, p.second += us[i];
    }
    std::ostringstream p;
    p << "lists of int8 rows, 1,056 B a row; by plan:";
    for (auto& [k, v] : plans) p << " " << k << " " << v.first << " at " << (long)(v.second / v.first) << " µs";
    report("index (shipped, planned)", p.str(), rec, us);
    e.close();
  }

  // The graphs: connectivity 16, expansion_add 128 (the fastest build that kept recall, measured).
  // Binary codes are signs about the mean (every vector shares a common direction).
  std::vector<float> mean(kDims, 0.f);
  {
    size_t m = 0;
    for (size_t key = 0; key < n; key += 16, m++) {
      const Cols& c = rows.cols(key);
      for (size_t i = 0; i < kDims; i++) mean[i] += nm::f16_to_f32(c.f16[rows.row(key) * kDims + i]);
    }
    for (auto& x : mean) x /= (float)std::max<size_t>(1, m);
  }
  struct Variant {
    const char* name;
    size_t bytes;
    distance_punned_t (*metric)(std::size_t, std::size_t);
  };
  for (Variant var : {Variant{"HNSW over f16 codes", kDims * 2, metric_f16}, Variant{"HNSW over int8 codes", kI8Bytes, metric_i8},
                      Variant{"HNSW over binary codes", kDims / 8, metric_b1}}) {
    std::string vn = var.name;
    auto encode = [&](const float* v, uint8_t* out) {
      if (var.bytes == kDims * 2) f32_to_f16_n(v, reinterpret_cast<uint16_t*>(out), kDims);
      else if (var.bytes == kI8Bytes) {
        float s = quantize_i8(v, reinterpret_cast<int8_t*>(out), kDims);
        int32_t sum = 0;
        for (size_t i = 0; i < kDims; i++) sum += reinterpret_cast<int8_t*>(out)[i];
        std::memcpy(out + kDims, &s, 4);
        std::memcpy(out + kDims + 4, &sum, 4);
      } else {
        std::memset(out, 0, kDims / 8);
        for (size_t i = 0; i < kDims; i++)
          if (v[i] - mean[i] > 0) out[i >> 3] |= (uint8_t)(1 << (i & 7));
      }
    };
    metric_punned_t metric(var.bytes, (std::uintptr_t)var.metric, metric_punned_signature_t::array_array_k, metric_kind_t::unknown_k, scalar_kind_t::u8_k);
    auto made = index_dense_t::make(metric, index_dense_config_t(16, 128, 64));
    index_dense_t idx = std::move(made.index);
    idx.reserve(index_limits_t(n, threads));
    double t0 = now();
    std::vector<std::thread> pool;
    for (size_t t = 0; t < threads; t++)
      pool.emplace_back([&, t] {
        std::vector<float> v(kDims);
        std::vector<uint8_t> code(var.bytes);
        for (size_t key = t; key < n; key += threads) {
          const Cols& c = rows.cols(key);
          for (size_t i = 0; i < kDims; i++) v[i] = nm::f16_to_f32(c.f16[rows.row(key) * kDims + i]);
          encode(v.data(), code.data());
          idx.add(key, code.data(), t);
        }
      });
    for (auto& th : pool) th.join();
    double build = now() - t0;
    char extra[128];
    std::snprintf(extra, sizeof extra, "built at %.0f chunks/s, %zu B a vector", n / build, var.bytes);
    // usearch's own search; ef is how far it looks, the 200 nearest chunks become revisions.
    for (size_t ef : {128, 512}) {
      idx.change_expansion_search(ef);
      std::vector<double> rec(nq), us(nq);
      std::vector<uint8_t> code(var.bytes);
      for (size_t i = 0; i < nq; i++) {
        double t1 = now();
        encode(&qs[i * kDims], code.data());
        auto r = idx.search(code.data(), 200, 0);
        std::vector<uint64_t> keys(r.count);
        std::vector<float> d(r.count);
        r.dump_to(keys.data(), d.data());
        auto hits = revisions(i, keys);
        us[i] = (now() - t1) * 1e6;
        rec[i] = recall(i, hits);
      }
      report(vn + ", ef " + std::to_string(ef), extra, rec, us);
    }
  }
  return 0;
}
