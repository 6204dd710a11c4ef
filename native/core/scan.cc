#include "scan.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <mutex>
#include <queue>

#include "kernels.h"
#include "pool.h"

namespace nm {

void prepare(const float* q, Prepared* p) {
  p->scale = quantize_i8(q, p->code, kDims);
  int32_t sum = 0;
  int64_t l1 = 0;
  double err = 0;
  // The rounding, kept to be rounded in turn (code2 below).
  alignas(64) float r[kDims];
  for (size_t i = 0; i < kDims; i++) {
    sum += p->code[i];
    l1 += std::abs((int32_t)p->code[i]);
    double e = (double)q[i] - (double)p->scale * p->code[i];
    err += e * e;
    r[i] = (float)e;
  }
  p->sum = sum;
  p->half_l1 = (float)(0.5 * p->scale * (double)l1);
  p->f16_slack = (float)(4.9e-4 + 1e-5);
  p->fixed = (float)std::sqrt(err) + p->f16_slack;
  // The rounding's own codes; q2 and what is left of q are measured in double from the codes.
  p->scale2 = quantize_i8(r, p->code2, kDims);
  int32_t sum2 = 0;
  double hat2 = 0, l1b = 0, n2 = 0, res = 0;
  for (size_t i = 0; i < kDims; i++) {
    sum2 += p->code2[i];
    double h = (double)p->scale * p->code[i], b = h + (double)p->scale2 * p->code2[i], e = (double)q[i] - b;
    hat2 += h * h;
    l1b += std::fabs(b);
    n2 += b * b;
    res += e * e;
  }
  p->sum2 = sum2;
  p->code_norm = (float)(std::sqrt(hat2) * (1 + 1e-6));
  p->q2_half_l1 = (float)(0.5 * l1b * (1 + 1e-6));
  p->q2_norm = (float)(std::sqrt(n2) * (1 + 1e-6));
  // Plus 1e-6: the float arithmetic of the refined estimate (two products of ~1e6-sized dots).
  p->resid2 = (float)(std::sqrt(res) * (1 + 1e-6) + 1e-6);
}

namespace {

// Rows a scan task reads at a time: 128 KB of int8 codes, which stay in L2 while every query
// group is scored against them.
constexpr size_t kBlock = 128;
// Rows per task at least: a task's setup is paid once per ~16 MB read.
constexpr size_t kTaskRows = 16384;

// [begin, end) cut into about `parts` pieces whose edges fall between revisions (a revision's
// rows are adjacent and must be scored by one task).
std::vector<std::pair<size_t, size_t>> split(const Cols& c, size_t begin, size_t end, size_t parts) {
  std::vector<std::pair<size_t, size_t>> out;
  size_t n = end - begin;
  if (n == 0) return out;
  parts = std::max<size_t>(1, std::min(parts, (n + kTaskRows - 1) / kTaskRows));
  size_t at = begin;
  for (size_t i = 1; i <= parts && at < end; i++) {
    size_t cut = i == parts ? end : begin + n * i / parts;
    while (cut > at && cut < end && c.ord[cut] == c.ord[cut - 1]) cut++;
    if (cut > at) out.push_back({at, cut}), at = cut;
  }
  return out;
}

// Float max on an atomic, for a floor several tasks raise.
void raise(std::atomic<float>& a, float v) {
  float cur = a.load(std::memory_order_relaxed);
  while (v > cur && !a.compare_exchange_weak(cur, v, std::memory_order_relaxed)) {
  }
}

}  // namespace

Hit score_revision(const Cols& c, size_t r, const float* q) {
  const Kernels& K = kernels();
  size_t lo = r, hi = r + 1;
  while (lo > 0 && c.ord[lo - 1] == c.ord[r]) lo--;
  while (hi < c.n && c.ord[hi] == c.ord[r]) hi++;
  Hit best{c.ord[r], c.label[lo], -INFINITY};
  for (size_t x = lo; x < hi; x++) {
    float s = K.dot_f16_f32(c.f16 + x * kDims, q, kDims);
    if (s > best.score) best.score = s, best.label = c.label[x];
  }
  return best;
}

namespace {

// A revision a scan kept: one of its rows, and the upper bound of its score.
struct Kept {
  const Cols* c;
  size_t row;
  float hi;
};

// The top k of the kept revisions, scored exactly (f16, every row of the revision) in order of
// their upper bounds, `round` at a time (in parallel on `pool` if given), until the next bound
// is below the k-th best score found: no revision after it can enter the top k. A query far
// from the data has many revisions within its bounds of the k-th; most are never scored.
std::vector<Hit> rescore_top(std::vector<Kept>& kept, const float* q, size_t k, float min_score, Pool* pool) {
  if (k == 0) return {};
  std::sort(kept.begin(), kept.end(), [](const Kept& a, const Kept& b) { return a.hi > b.hi; });
  std::vector<Hit> best;  // a min-heap by `better`: its front is the k-th
  auto worse = [](const Hit& a, const Hit& b) { return better(a, b); };
  size_t round = pool ? 64 * pool->width() : 16;
  std::vector<Hit> hits;
  std::vector<char> keep;
  for (size_t at = 0; at < kept.size();) {
    if (best.size() == k && kept[at].hi < best.front().score) break;
    size_t end = std::min(kept.size(), at + round);
    hits.assign(end - at, Hit{});
    keep.assign(end - at, 0);
    auto score = [&](size_t i) {
      Hit h = score_revision(*kept[at + i].c, kept[at + i].row, q);
      if (h.score >= min_score) hits[i] = h, keep[i] = 1;
    };
    if (pool) {
      constexpr size_t kSlice = 64;
      pool->run((end - at + kSlice - 1) / kSlice, [&](size_t s) {
        for (size_t i = s * kSlice; i < std::min(end - at, (s + 1) * kSlice); i++) score(i);
      });
    } else {
      for (size_t i = 0; i < end - at; i++) score(i);
    }
    for (size_t i = 0; i < end - at; i++) {
      if (!keep[i]) continue;
      if (best.size() < k) {
        best.push_back(hits[i]);
        std::push_heap(best.begin(), best.end(), worse);
      } else if (better(hits[i], best.front())) {
        std::pop_heap(best.begin(), best.end(), worse);
        best.back() = hits[i];
        std::push_heap(best.begin(), best.end(), worse);
      }
    }
    at = end;
  }
  std::sort(best.begin(), best.end(), better);
  return best;
}

// Prefetches `rows` rows from `from` (null: none) in `steps` shares, one before each of a
// block's tiles: a burst of a whole block's lines stalls on the line-fill buffers.
class Ahead {
 public:
  Ahead(const int8_t* from, size_t rows, size_t steps)
      : from_(from), lines_(from ? rows * kDims / 64 : 0), per_(steps ? (lines_ + steps - 1) / steps : lines_) {}
  void next() {
    for (size_t e = std::min(line_ + per_, lines_); line_ < e; line_++) __builtin_prefetch(from_ + line_ * 64);
  }
  // What the shares left (fewer tiles than planned).
  void rest() {
    for (; line_ < lines_; line_++) __builtin_prefetch(from_ + line_ * 64);
  }

 private:
  const int8_t* from_;
  size_t lines_, per_, line_ = 0;
};

// A pass's queries in groups of 16 (the last padded with copies of the last query; a padding
// query's floor is +inf, so it never passes), as 16 rows at a time are scored and tested
// against them: dots laid out [group][row of 16][query of 16], one vector test a row and group.
struct Groups16 {
  size_t nq, groups;
  std::vector<const int8_t*> code;
  std::vector<int32_t> sum;
  std::vector<float> scale, half_l1;
  std::vector<int8_t> packed;  // AMX's right-hand tiles (pack_tiles), where the CPU has AMX

  Groups16(const std::vector<Prepared>& prep, const Kernels& K)
      : nq(prep.size()), groups((prep.size() + 15) / 16), code(groups * 16), sum(groups * 16), scale(groups * 16), half_l1(groups * 16) {
    for (size_t j = 0; j < groups * 16; j++) {
      const Prepared& p = prep[std::min(j, nq - 1)];
      code[j] = p.code, sum[j] = p.sum, scale[j] = p.scale, half_l1[j] = p.half_l1;
    }
    if (K.dot_i8_16rows) {
      packed.resize(groups * kDims * 16);
      for (size_t g = 0; g < groups; g++) pack_tiles(code.data() + g * 16, kDims, packed.data() + g * kDims * 16);
    }
  }

  // Dots of rows [r, r + n) of c (n <= 16) against every query: one tile call for 16 rows
  // with AMX (the rows two chunks ahead prefetched meanwhile, within [.., te)); otherwise 4x4
  // tiles and single dots over the real queries' columns only (the padding's are never read
  // as candidates).
  void dots(const Kernels& K, const Cols& c, size_t r, size_t n, size_t te, int32_t* out) const {
    if (n == 16 && K.dot_i8_16rows) {
      const int8_t* ahead = r + 48 <= te ? c.i8 + (r + 32) * kDims : nullptr;
      K.dot_i8_16rows(c.i8 + r * kDims, packed.data(), kDims, groups, out, ahead);
      return;
    }
    Ahead ahead(r + 48 <= te ? c.i8 + (r + 32) * kDims : nullptr, 16, (n / 4) * ((nq + 3) / 4));
    int32_t tile[16];
    size_t x = 0;
    for (; x + 4 <= n; x += 4) {
      const int8_t* rows[4] = {c.i8 + (r + x) * kDims, c.i8 + (r + x + 1) * kDims, c.i8 + (r + x + 2) * kDims, c.i8 + (r + x + 3) * kDims};
      for (size_t j = 0; j < nq; j += 4) {
        ahead.next();
        K.dot_i8_4x4(rows, code.data() + j, sum.data() + j, kDims, tile);
        for (size_t y = 0; y < 4; y++)
          for (size_t z = 0; z < 4; z++) out[(j / 16) * 256 + (x + y) * 16 + j % 16 + z] = tile[y * 4 + z];
      }
    }
    ahead.rest();
    for (; x < n; x++)
      for (size_t j = 0; j < nq; j++) out[(j / 16) * 256 + x * 16 + j % 16] = K.dot_i8(c.i8 + (r + x) * kDims, code[j], sum[j], kDims);
  }

  // fn(query, row, dot) for each of rows [r, r + n) whose bound reaches its query's `floor`
  // (row_mask16's test; floor: groups * 16 entries).
  template <class Fn>
  void candidates(const Kernels& K, const Cols& c, size_t r, size_t n, const int32_t* dots, const float* floor, Fn&& fn) const {
    for (size_t x = 0; x < n; x++)
      for (size_t g = 0; g < groups; g++) {
        const int32_t* d = dots + g * 256 + x * 16;
        for (uint32_t m = K.row_mask16(d, c.scale[r + x], scale.data() + g * 16, half_l1.data() + g * 16, floor + g * 16); m; m &= m - 1) {
          unsigned j = (unsigned)__builtin_ctz(m);
          fn(g * 16 + j, r + x, d[j]);
        }
      }
  }
};

}  // namespace

std::vector<RangeResult> range_batch(const std::vector<Cols>& views, const std::vector<RangeQuery>& queries, Pool& pool) {
  const Kernels& K = kernels();
  size_t nq = queries.size();
  std::vector<RangeResult> out(nq);
  if (nq == 0) return out;
  // Queries in groups of four (the kernel's tile); the last group is padded with copies of a
  // real query whose results are ignored.
  size_t groups = (nq + 3) / 4;
  std::vector<Prepared> prep(nq);
  for (size_t i = 0; i < nq; i++) prepare(queries[i].q, &prep[i]);
  // With AMX, the queries in groups of 16 (a tile's columns), each tested against its
  // threshold less its fixed error, as the 4 x 4 tiles below are.
  const bool tiles = K.dot_i8_16rows != nullptr;
  Groups16 g16(prep, K);
  std::vector<float> fl16(g16.groups * 16, INFINITY);
  for (size_t i = 0; i < nq; i++) fl16[i] = queries[i].threshold - prep[i].fixed;
  std::vector<std::atomic<size_t>> total(nq);
  std::vector<std::atomic<bool>> done(nq);
  for (size_t i = 0; i < nq; i++) total[i] = 0, done[i] = false;
  std::mutex out_mu;

  for (const Cols& c : views) {
    if (c.n == 0) continue;
    std::vector<size_t> lo(nq), hi(nq);
    size_t vlo = c.n, vhi = 0;
    for (size_t i = 0; i < nq; i++) {
      time_range(c, queries[i].filter.tmin, queries[i].filter.tmax, &lo[i], &hi[i]);
      // A view whose labels all lie before the query's label window holds none of its rows.
      if (c.max_label < queries[i].filter.lmin) lo[i] = hi[i] = 0;
      if (lo[i] < hi[i] && !done[i]) vlo = std::min(vlo, lo[i]), vhi = std::max(vhi, hi[i]);
    }
    if (vlo >= vhi) continue;
    auto tasks = split(c, vlo, vhi, pool.width() * 4);
    pool.run(tasks.size(), [&](size_t t) {
      auto [tb, te] = tasks[t];
      std::vector<std::vector<Hit>> hits(nq);
      std::vector<std::vector<uint32_t>> cand(nq);
      int32_t dots[16];
      // Per group of four queries: codes, sums, and the tile test's terms: estimate + bound >=
      // threshold, as row_scale * (q_scale * dot + half_l1) >= threshold - fixed (a padding
      // query never passes).
      struct Group {
        const int8_t* qc[4];
        int32_t qs[4];
        float qscale[4], hl[4], fl[4];
        size_t q0, qn, lo, hi;  // queries [q0, q0 + qn); rows of this block any of them reads
      };
      std::vector<Group> gs(groups);
      std::vector<int32_t> dots16(g16.groups * 256);
      for (size_t g = 0; g < groups; g++) {
        Group& G = gs[g];
        G.q0 = g * 4, G.qn = std::min<size_t>(4, nq - G.q0);
        for (size_t j = 0; j < 4; j++) {
          const Prepared& p = prep[G.q0 + std::min(j, G.qn - 1)];
          G.qc[j] = p.code, G.qs[j] = p.sum, G.qscale[j] = p.scale, G.hl[j] = p.half_l1;
          G.fl[j] = j < G.qn ? queries[G.q0 + j].threshold - p.fixed : INFINITY;
        }
      }
      // A candidate of the coarse test is tested again while its row is in cache, its codes
      // against the query's rounding too (Prepared::code2): that bound lacks almost all of the
      // query's rounding (~0.009), so fewer rows reach the f16 rescoring, each a 2 KB read from
      // elsewhere.
      auto take = [&](size_t r, size_t i, int32_t dot) {
        if (r < lo[i] || r >= hi[i] || !row_allowed(c, r, queries[i].filter)) return;
        const Prepared& p = prep[i];
        const int8_t* code = c.i8 + r * kDims;
        if (refined(c.scale[r], p, dot, K.dot_i8(code, p.code2, p.sum2, kDims)) + refined_bound(c.scale[r], INFINITY, p) < queries[i].threshold) return;
        cand[i].push_back((uint32_t)(r - tb));
      };
      for (size_t b = tb; b < te; b += kBlock) {
        size_t be = std::min(te, b + kBlock);
        bool any = false;
        for (Group& G : gs) {
          G.lo = be, G.hi = b;
          for (size_t j = 0; j < G.qn; j++)
            if (!done[G.q0 + j].load(std::memory_order_relaxed)) G.lo = std::min(G.lo, std::max(b, lo[G.q0 + j])), G.hi = std::max(G.hi, std::min(be, hi[G.q0 + j]));
          any |= G.lo < G.hi;
        }
        size_t r = b;
        // AMX: 16 rows at a time against every group of 16 (their 16 KB read once; the rows
        // two blocks ahead are prefetched meanwhile).
        if (tiles && any)
          for (; r + 16 <= be; r += 16) {
            g16.dots(K, c, r, 16, te, dots16.data());
            g16.candidates(K, c, r, 16, dots16.data(), fl16.data(), [&](size_t i, size_t row, int32_t dot) { take(row, i, dot); });
          }
        // Four rows at a time against every group: the rows stay in L1 while all the queries
        // (16 KB for 16) are scored against them, and memory is read as one steady stream.
        for (; r + 4 <= be; r += 4) {
          const int8_t* rows[4] = {c.i8 + r * kDims, c.i8 + (r + 1) * kDims, c.i8 + (r + 2) * kDims, c.i8 + (r + 3) * kDims};
          // The hardware's streamer alone falls behind: ask for the rows two tile rows ahead, a
          // share before each group's tile (a burst of 64 prefetches stalled on the line-fill
          // buffers). On a 2-core AMD EPYC (Zen 5) guest at 1M: one query a pass 29-36 -> 20-23
          // ms, 16 queries 42-44 -> 37-39 ms.
          Ahead ahead(r + 12 <= te ? c.i8 + (r + 8) * kDims : nullptr, 4, groups);
          for (const Group& G : gs) {
            ahead.next();
            if (r + 4 <= G.lo || r >= G.hi) continue;
            if (G.qn == 1) {
              // One query: a 4 x 4 tile would compute three padding columns for nothing.
              K.dot_i8_4x1(rows, G.qc[0], G.qs[0], kDims, dots);
              for (size_t x = 0; x < 4; x++)
                if (c.scale[r + x] * (G.qscale[0] * (float)dots[x] + G.hl[0]) >= G.fl[0]) take(r + x, G.q0, dots[x]);
              continue;
            }
            K.dot_i8_4x4(rows, G.qc, G.qs, kDims, dots);
            for (uint32_t m = K.tile_mask(dots, c.scale + r, G.qscale, G.hl, G.fl); m; m &= m - 1) {
              unsigned bit = (unsigned)__builtin_ctz(m);
              take(r + bit / 4, G.q0 + bit % 4, dots[bit]);
            }
          }
        }
        for (; r < be; r++)
          for (const Group& G : gs) {
            if (r < G.lo || r >= G.hi) continue;
            for (size_t j = 0; j < G.qn; j++) {
              int32_t dot = K.dot_i8(c.i8 + r * kDims, G.qc[j], G.qs[j], kDims);
              if (c.scale[r] * (G.qscale[j] * (float)dot + G.hl[j]) >= G.fl[j]) take(r, G.q0 + j, dot);
            }
          }
        // Rescore this block's candidates in f16; a revision's candidates are adjacent rows,
        // and one cut by the block edge continues the hit before it. Each is a 2 KB read from
        // elsewhere: all of them asked for first, so their misses overlap instead of queueing
        // one after another (at 1M, 16 queries a pass rescore ~24,000 rows; the pass fell
        // from 39.3 to 36.8 ms, one query's pass unchanged, alternated in one run).
        for (size_t i = 0; i < nq; i++)
          for (uint32_t x : cand[i])
            for (size_t b = 0; b < kDims * sizeof(uint16_t); b += 64) __builtin_prefetch(reinterpret_cast<const char*>(c.f16 + (tb + x) * kDims) + b);
        for (size_t i = 0; i < nq; i++) {
          auto& cs = cand[i];
          if (cs.empty()) continue;
          const RangeQuery& q = queries[i];
          auto& hs = hits[i];
          size_t j = 0;
          while (j < cs.size() && !done[i].load(std::memory_order_relaxed)) {
            uint64_t ord = c.ord[tb + cs[j]];
            Hit best{ord, 0, -INFINITY};
            for (; j < cs.size() && c.ord[tb + cs[j]] == ord; j++) {
              size_t row = tb + cs[j];
              float s = K.dot_f16_f32(c.f16 + row * kDims, q.q, kDims);
              if (s > best.score) best.score = s, best.label = c.label[row];
            }
            if (best.score < q.threshold) continue;
            if (!hs.empty() && hs.back().ord == ord) {
              if (better(best, hs.back())) hs.back() = best;
            } else {
              hs.push_back(best);
              if (total[i].fetch_add(1, std::memory_order_relaxed) + 1 > q.cap) done[i] = true;
            }
          }
          cs.clear();
        }
      }
      if (tiles) K.tiles_release();
      std::lock_guard<std::mutex> lock(out_mu);
      for (size_t i = 0; i < nq; i++) out[i].hits.insert(out[i].hits.end(), hits[i].begin(), hits[i].end());
    });
  }
  for (size_t i = 0; i < nq; i++) out[i].overflow = total[i].load() > queries[i].cap;
  return out;
}

std::vector<Hit> topk_scan(const std::vector<Cols>& views, const float* q, size_t k, float min_score, const Filter& f, Pool& pool, RowSet rows) {
  const Kernels& K = kernels();
  if (k == 0) return {};
  Prepared p;
  prepare(q, &p);
  // Each revision gets bounds [lo, hi] on its true score from the int8 pass. The k-th largest
  // `lo` any task has seen is a lower bound on the true k-th score, and it only rises, so a
  // revision whose `hi` is below it (or below min_score) can never make the top k.
  std::atomic<float> shared_floor{min_score};
  using Group = Kept;
  struct Task {
    const Cols* c;
    size_t begin, end;
  };
  std::vector<Task> tasks;
  for (const Cols& c : views) {
    if (c.n == 0 || (rows.min_label > 0 && c.max_label < rows.min_label) || c.max_label < f.lmin) continue;
    size_t lo, hi;
    time_range(c, f.tmin, f.tmax, &lo, &hi);
    // The delta is in label order: rows from min_label on are its tail.
    if (!c.sorted && rows.min_label > 0) lo = std::max(lo, (size_t)(std::lower_bound(c.label, c.label + c.n, rows.min_label) - c.label));
    for (auto [b, e] : split(c, lo, hi, pool.width() * 4)) tasks.push_back({&c, b, e});
  }
  std::vector<std::vector<Group>> kept(tasks.size());
  pool.run(tasks.size(), [&](size_t t) {
    const Cols& c = *tasks[t].c;
    std::priority_queue<float, std::vector<float>, std::greater<float>> heap;
    auto& groups = kept[t];
    size_t prune_at = 8 * k + 1024;
    auto floor = [&]() { return std::max(heap.size() < k ? -INFINITY : heap.top(), shared_floor.load(std::memory_order_relaxed)); };
    std::vector<uint32_t> sel;  // allowed rows of a block
    std::vector<float> alo, ahi;
    int32_t dots[4];
    for (size_t b = tasks[t].begin; b < tasks[t].end;) {
      // A block ends on a revision edge, so its revisions are whole.
      size_t be = std::min(tasks[t].end, b + kBlock);
      while (be < tasks[t].end && c.ord[be] == c.ord[be - 1]) be++;
      sel.clear();
      for (size_t r = b; r < be; r++)
        if (c.label[r] >= rows.min_label && row_allowed(c, r, f)) sel.push_back((uint32_t)r);
      alo.resize(sel.size()), ahi.resize(sel.size());
      size_t i = 0;
      // A row whose coarse bound reaches the floor gets the refined one (its codes against the
      // query's rounding, while the row is in cache): fewer revisions reach the f16 rescoring,
      // which dominates a scan for a query far from the data, where many score alike.
      float fl = floor();
      auto bounds = [&](size_t i, int32_t dot) {
        size_t r = sel[i];
        float a = approx(c, r, p, dot), e = bound(c, r, p);
        if (a + e >= fl) a = refined(c.scale[r], p, dot, K.dot_i8(c.i8 + r * kDims, p.code2, p.sum2, kDims)), e = refined_bound(c.scale[r], INFINITY, p);
        alo[i] = a - e, ahi[i] = a + e;
      };
      for (; i + 4 <= sel.size(); i += 4) {
        const int8_t* v[4] = {c.i8 + sel[i] * kDims, c.i8 + sel[i + 1] * kDims, c.i8 + sel[i + 2] * kDims, c.i8 + sel[i + 3] * kDims};
        // The rows two tile rows ahead, as range_batch asks for them (the streamer alone falls behind).
        if (i + 12 <= sel.size())
          for (size_t x = 8; x < 12; x++) Ahead(c.i8 + sel[i + x] * kDims, 1, 1).next();
        K.dot_i8_4x1(v, p.code, p.sum, kDims, dots);
        for (size_t x = 0; x < 4; x++) bounds(i + x, dots[x]);
      }
      for (; i < sel.size(); i++) bounds(i, K.dot_i8(c.i8 + sel[i] * kDims, p.code, p.sum, kDims));
      for (size_t j = 0; j < sel.size();) {
        uint64_t ord = c.ord[sel[j]];
        size_t start = sel[j];
        float glo = -INFINITY, ghi = -INFINITY;
        for (; j < sel.size() && c.ord[sel[j]] == ord; j++) glo = std::max(glo, alo[j]), ghi = std::max(ghi, ahi[j]);
        if (ghi < floor()) continue;
        groups.push_back({&c, start, ghi});
        heap.push(glo);
        if (heap.size() > k) heap.pop();
        if (heap.size() == k) raise(shared_floor, heap.top());
        // Amortised pruning: only once the list has doubled since the last prune.
        if (groups.size() > prune_at) {
          float fl = floor();
          groups.erase(std::remove_if(groups.begin(), groups.end(), [&](const Group& g) { return g.hi < fl; }), groups.end());
          prune_at = std::max(prune_at, 2 * groups.size());
        }
      }
      b = be;
    }
  });
  // The revision's exact score is its best chunk over all its rows, whatever part of them this
  // scan read.
  float fl = std::max(shared_floor.load(), min_score);
  std::vector<Kept> all;
  for (auto& g : kept)
    for (auto& x : g)
      if (x.hi >= fl) all.push_back(x);
  return rescore_top(all, q, k, min_score, &pool);
}

std::vector<std::vector<Hit>> topk_scan_batch(const std::vector<Cols>& views, const std::vector<TopkQuery>& queries, Pool& pool) {
  const Kernels& K = kernels();
  size_t nq = queries.size();
  std::vector<std::vector<Hit>> out(nq);
  if (nq == 0) return out;
  std::vector<Prepared> prep(nq);
  for (size_t i = 0; i < nq; i++) prepare(queries[i].q, &prep[i]);
  Groups16 g16(prep, K);
  std::vector<std::atomic<float>> shared_floor(nq);
  for (size_t i = 0; i < nq; i++) shared_floor[i] = queries[i].min_score;

  // The rows any query may see, view by view, cut into tasks at revision edges.
  struct Task {
    const Cols* c;
    size_t begin, end;
  };
  std::vector<Task> tasks;
  for (const Cols& c : views) {
    if (c.n == 0) continue;
    size_t vlo = c.n, vhi = 0;
    for (const TopkQuery& q : queries) {
      size_t lo, hi;
      time_range(c, q.filter->tmin, q.filter->tmax, &lo, &hi);
      if (lo < hi && c.max_label >= q.filter->lmin) vlo = std::min(vlo, lo), vhi = std::max(vhi, hi);
    }
    if (vlo < vhi)
      for (auto [b, e] : split(c, vlo, vhi, pool.width() * 4)) tasks.push_back({&c, b, e});
  }
  using Group = Kept;
  std::vector<std::vector<std::vector<Group>>> kept(tasks.size(), std::vector<std::vector<Group>>(nq));
  pool.run(tasks.size(), [&](size_t t) {
    const Cols& c = *tasks[t].c;
    size_t tb = tasks[t].begin, te = tasks[t].end;
    // Per query, as topk_scan: the k best lower bounds seen (their least is a floor on the true
    // k-th score) and the revisions whose upper bound reached the floor; and the revision being
    // read, whose rows are adjacent.
    struct State {
      std::priority_queue<float, std::vector<float>, std::greater<float>> heap;
      size_t prune_at = 0;
      bool open = false;
      uint64_t ord = 0;
      size_t start = 0;
      float lo = 0, hi = 0;
    };
    std::vector<State> st(nq);
    for (size_t i = 0; i < nq; i++) st[i].prune_at = 8 * queries[i].k + 1024;
    auto floor = [&](size_t i) {
      const State& s = st[i];
      return std::max(s.heap.size() < queries[i].k ? -INFINITY : s.heap.top(), shared_floor[i].load(std::memory_order_relaxed));
    };
    auto close = [&](size_t i) {
      State& s = st[i];
      if (!s.open) return;
      s.open = false;
      if (s.hi < floor(i)) return;
      auto& kept_i = kept[t][i];
      kept_i.push_back({&c, s.start, s.hi});
      s.heap.push(s.lo);
      if (s.heap.size() > queries[i].k) s.heap.pop();
      if (s.heap.size() == queries[i].k) raise(shared_floor[i], s.heap.top());
      // Amortised pruning: only once the list has doubled since the last prune.
      if (kept_i.size() > s.prune_at) {
        float fl = floor(i);
        kept_i.erase(std::remove_if(kept_i.begin(), kept_i.end(), [&](const Group& g) { return g.hi < fl; }), kept_i.end());
        s.prune_at = std::max(s.prune_at, 2 * kept_i.size());
      }
    };
    // A row allowed to query i, with the int8 estimate `dot`: its bounds join its revision's.
    auto add = [&](size_t i, size_t r, int32_t dot) {
      if (!row_allowed(c, r, *queries[i].filter)) return;
      // As topk_scan: a row passing the coarse test gets the refined bound.
      const Prepared& p = prep[i];
      float a = refined(c.scale[r], p, dot, K.dot_i8(c.i8 + r * kDims, p.code2, p.sum2, kDims)), e = refined_bound(c.scale[r], INFINITY, p);
      State& s = st[i];
      if (s.open && s.ord != c.ord[r]) close(i);
      if (!s.open) s.open = true, s.ord = c.ord[r], s.start = r, s.lo = a - e, s.hi = a + e;
      else s.lo = std::max(s.lo, a - e), s.hi = std::max(s.hi, a + e);
    };
    std::vector<float> fl(g16.groups * 16, INFINITY);
    std::vector<int32_t> dots(g16.groups * 256);
    for (size_t b = tb; b < te; b += kBlock) {
      size_t be = std::min(te, b + kBlock);
      // The quick test: upper bound (as range_batch's test) against each query's floor now,
      // less a margin for its other rounding order, so it drops only rows the exact bounds in
      // `add` would leave below the floor. A query asking for no rows (k = 0) never passes.
      for (size_t i = 0; i < nq; i++) fl[i] = queries[i].k ? floor(i) - prep[i].fixed - 1e-5f : INFINITY;
      for (size_t r = b; r < be; r += 16) {
        size_t n = std::min<size_t>(16, be - r);
        g16.dots(K, c, r, n, te, dots.data());
        g16.candidates(K, c, r, n, dots.data(), fl.data(), add);
      }
    }
    for (size_t i = 0; i < nq; i++) close(i);
    if (K.dot_i8_16rows) K.tiles_release();
  });
  // Each query's revisions whose upper bound reached its final floor, scored exactly: the
  // queries side by side, each in order of its bounds.
  pool.run(nq, [&](size_t i) {
    float fl = std::max(shared_floor[i].load(), queries[i].min_score);
    std::vector<Kept> all;
    for (auto& per_task : kept)
      for (auto& g : per_task[i])
        if (g.hi >= fl) all.push_back(g);
    out[i] = rescore_top(all, queries[i].q, queries[i].k, queries[i].min_score, nullptr);
  });
  return out;
}

uint64_t count_allowed(const std::vector<Cols>& views, const Filter& f, uint64_t limit) {
  uint64_t n = 0;
  for (const Cols& c : views) {
    if (n >= limit) break;
    size_t lo, hi;
    time_range(c, f.tmin, f.tmax, &lo, &hi);
    if (f.sources.empty() && !f.first_only && c.sorted) {
      n += hi - lo;
      continue;
    }
    if (c.counts && lo == 0 && hi == c.n) {
      // The window covers the whole segment: its per-source counts answer without a pass.
      const std::vector<uint64_t>& per = f.first_only ? c.counts->first : c.counts->all;
      for (uint32_t s = 0; s < per.size(); s++)
        if (source_allowed(f, s)) n += per[s];
      continue;
    }
    for (size_t r = lo; r < hi && n < limit; r++) n += row_allowed(c, r, f);
  }
  return n;
}

uint64_t estimate_allowed(const std::vector<Cols>& views, const Filter& f) {
  double n = 0;
  for (const Cols& c : views) {
    size_t lo, hi;
    time_range(c, f.tmin, f.tmax, &lo, &hi);
    if (hi <= lo) continue;
    if (f.sources.empty() && !f.first_only && c.sorted) {
      n += (double)(hi - lo);
    } else if (c.counts && c.n > 0) {
      // The window's rows times the share of the segment the sources (and first-only) allow.
      const std::vector<uint64_t>& per = f.first_only ? c.counts->first : c.counts->all;
      uint64_t allowed = 0;
      for (uint32_t s = 0; s < per.size(); s++)
        if (source_allowed(f, s)) allowed += per[s];
      n += (double)(hi - lo) * (double)allowed / (double)c.n;
    } else if (!filtered(f)) {
      n += (double)(hi - lo);
    } else {
      // The delta (unsorted, no per-source table): a sample of at most ~1,024 rows, scaled.
      size_t step = std::max<size_t>(1, (hi - lo) / 1024), seen = 0, allowed = 0;
      for (size_t r = lo; r < hi; r += step, seen++) allowed += row_allowed(c, r, f);
      n += seen ? (double)(hi - lo) * (double)allowed / (double)seen : 0;
    }
  }
  return (uint64_t)std::llround(n);
}

}  // namespace nm
