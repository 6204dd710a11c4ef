#include "scan.h"

#include <algorithm>
#include <cmath>
#include <queue>

#include "kernels.h"

namespace nm {

namespace {

constexpr size_t kBlock = 512;  // rows per block: 512 KB of int8, stays in L2 across queries

struct Prepared {
  std::vector<int16_t> code;
  float scale;
  // |exact - approx| <= row_scale * half_l1 + fixed, for any unit row (see bound()).
  float half_l1;
  float fixed;
};

Prepared prepare(const float* q) {
  Prepared p;
  p.code.resize(kDims);
  p.scale = quantize_i16(q, p.code.data(), kDims);
  double l1 = 0;
  for (size_t i = 0; i < kDims; i++) l1 += std::fabs(q[i]);
  p.half_l1 = (float)(0.5 * l1);
  // Query rounding: |sum v_i (q_i - s_q c_i)| <= (s_q / 2) * |v|_1 <= (s_q / 2) * sqrt(dims);
  // plus f16 rescoring and float rounding slack.
  p.fixed = (float)(0.5 * p.scale * std::sqrt((double)kDims) + 1e-4);
  return p;
}

// A rigorous bound on the int8 pass's error for row r: each code is within half a step
// (scale / 2) of the value, so the dot is off by at most (scale / 2) * |q|_1.
inline float bound(const Cols& c, size_t r, const Prepared& p) { return c.scale[r] * p.half_l1 + p.fixed; }

constexpr size_t kAhead = 4;

inline void prefetch_row(const int8_t* p) {
  for (size_t o = 0; o < kDims; o += 64) __builtin_prefetch(p + o, 0, 0);
}

inline float approx(const Kernels& K, const Cols& c, size_t r, const Prepared& p) {
  return c.scale[r] * p.scale * (float)K.dot_i8_i16(c.i8 + r * kDims, p.code.data(), kDims);
}

}  // namespace

std::vector<RangeResult> range_batch(const std::vector<Cols>& views, const std::vector<RangeQuery>& queries) {
  const Kernels& K = kernels();
  size_t nq = queries.size();
  std::vector<RangeResult> out(nq);
  std::vector<Prepared> prep;
  prep.reserve(nq);
  for (auto& q : queries) prep.push_back(prepare(q.q));
  std::vector<bool> done(nq, false);

  for (const Cols& c : views) {
    if (c.n == 0) continue;
    std::vector<size_t> lo(nq), hi(nq);
    size_t vlo = c.n, vhi = 0;
    for (size_t i = 0; i < nq; i++) {
      time_range(c, queries[i].filter.tmin, queries[i].filter.tmax, &lo[i], &hi[i]);
      if (lo[i] < hi[i]) vlo = std::min(vlo, lo[i]), vhi = std::max(vhi, hi[i]);
    }
    std::vector<std::vector<size_t>> cand(nq);
    for (size_t b = vlo; b < vhi; b += kBlock) {
      size_t be = std::min(vhi, b + kBlock);
      bool lead = true;  // the first query in a block pulls it from memory; the rest hit cache
      for (size_t i = 0; i < nq; i++) {
        if (done[i]) continue;
        const RangeQuery& q = queries[i];
        size_t r0 = std::max(b, lo[i]), r1 = std::min(be, hi[i]);
        for (size_t r = r0; r < r1; r++) {
          // Keep several rows' loads in flight: one row alone does not saturate memory.
          if (lead && r + kAhead < r1) prefetch_row(c.i8 + (r + kAhead) * kDims);
          if (!row_allowed(c, r, q.filter)) continue;
          if (approx(K, c, r, prep[i]) + bound(c, r, prep[i]) >= q.threshold) cand[i].push_back(r);
        }
        if (r0 < r1) lead = false;
      }
    }
    // Rescore candidates in f16; a revision's rows are adjacent, so its candidates are too.
    for (size_t i = 0; i < nq; i++) {
      if (done[i]) continue;
      const RangeQuery& q = queries[i];
      auto& hits = out[i].hits;
      size_t j = 0;
      while (j < cand[i].size()) {
        uint64_t ord = c.ord[cand[i][j]];
        Hit best{ord, 0, -INFINITY};
        for (; j < cand[i].size() && c.ord[cand[i][j]] == ord; j++) {
          size_t r = cand[i][j];
          float s = K.dot_f16_f32(c.f16 + r * kDims, q.q, kDims);
          if (s > best.score) best.score = s, best.label = c.label[r];
        }
        if (best.score >= q.threshold) {
          hits.push_back(best);
          if (hits.size() > q.cap) {
            out[i].overflow = true;
            done[i] = true;
            break;
          }
        }
      }
    }
  }
  return out;
}

std::vector<Hit> topk_scan(const std::vector<Cols>& views, const float* q, size_t k, float min_score, const Filter& f) {
  const Kernels& K = kernels();
  if (k == 0) return {};
  Prepared p = prepare(q);
  // Each revision gets bounds [lo, hi] on its true score from the int8 pass. The k-th largest
  // `lo` seen is a lower bound on the true k-th score, and it only rises, so a revision whose
  // `hi` is below it (or below min_score) can never make the top k.
  std::priority_queue<float, std::vector<float>, std::greater<float>> heap;
  struct Group {
    size_t view, begin, end;
    float hi;
  };
  std::vector<Group> groups;
  size_t prune_at = 8 * k + 1024;
  auto floor = [&]() { return std::max(heap.size() < k ? -INFINITY : heap.top(), min_score); };
  for (size_t v = 0; v < views.size(); v++) {
    const Cols& c = views[v];
    size_t lo, hi;
    time_range(c, f.tmin, f.tmax, &lo, &hi);
    size_t r = lo;
    while (r < hi) {
      uint64_t ord = c.ord[r];
      size_t e = r;
      while (e < hi && c.ord[e] == ord) e++;
      if (row_allowed(c, r, f)) {
        float glo = -INFINITY, ghi = -INFINITY;
        for (size_t x = r; x < e; x++) {
          float a = approx(K, c, x, p), b = bound(c, x, p);
          glo = std::max(glo, a - b);
          ghi = std::max(ghi, a + b);
        }
        if (ghi >= floor()) {
          groups.push_back({v, r, e, ghi});
          heap.push(glo);
          if (heap.size() > k) heap.pop();
          // Amortised pruning: only once the list has doubled since the last prune.
          if (groups.size() > prune_at) {
            float fl = floor();
            groups.erase(std::remove_if(groups.begin(), groups.end(), [&](const Group& g) { return g.hi < fl; }), groups.end());
            prune_at = std::max(prune_at, 2 * groups.size());
          }
        }
      }
      r = e;
    }
  }
  float fl = floor();
  std::vector<Hit> hits;
  for (const Group& g : groups) {
    if (g.hi < fl) continue;
    const Cols& c = views[g.view];
    Hit best{c.ord[g.begin], 0, -INFINITY};
    for (size_t x = g.begin; x < g.end; x++) {
      float s = K.dot_f16_f32(c.f16 + x * kDims, q, kDims);
      if (s > best.score) best.score = s, best.label = c.label[x];
    }
    if (best.score >= min_score) hits.push_back(best);
  }
  std::sort(hits.begin(), hits.end(), [](const Hit& a, const Hit& b) { return a.score > b.score || (a.score == b.score && a.ord < b.ord); });
  if (hits.size() > k) hits.resize(k);
  return hits;
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

}  // namespace nm
