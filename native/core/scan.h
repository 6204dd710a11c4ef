// Exact scans over views: an int8 pass picks candidate rows, an f16 pass rescores them. The
// int8 pass keeps every row whose score could reach the threshold under a rigorous per-row
// error bound (see Prepared), so the result is exact up to f16 rounding: a row is returned
// exactly when its f16 score reaches the threshold, and f16 is within 5e-4 of float32 on unit
// vectors (within 1e-5 in practice).
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "segment.h"

namespace nm {

class Pool;

// Which rows a query may see.
struct Filter {
  int64_t tmin = INT64_MIN, tmax = INT64_MAX;  // inclusive event_time bounds
  std::vector<uint8_t> sources;                 // allowed-source bitmap (bit i = source i); empty: all
  bool first_only = false;                      // first revisions only
  // Chunk labels in [lmin, lmax): labels grow in the order rows become searchable, so this is
  // "what became searchable between two points" (POST /v1/match after_seq).
  uint64_t lmin = 0, lmax = UINT64_MAX;
};

inline bool label_allowed(const Filter& f, uint64_t label) { return label >= f.lmin && label < f.lmax; }

inline bool source_allowed(const Filter& f, uint32_t s) {
  if (f.sources.empty()) return true;
  size_t byte = s >> 3;
  return byte < f.sources.size() && ((f.sources[byte] >> (s & 7)) & 1);
}

inline bool row_allowed(const Cols& c, size_t r, const Filter& f) {
  return c.time[r] >= f.tmin && c.time[r] <= f.tmax && (!f.first_only || c.first[r]) && source_allowed(f, c.source[r]) && label_allowed(f, c.label[r]);
}

inline bool filtered(const Filter& f) {
  return f.tmin != INT64_MIN || f.tmax != INT64_MAX || f.first_only || !f.sources.empty() || f.lmin != 0 || f.lmax != UINT64_MAX;
}

// A query quantised for the int8 pass. For a unit row v stored as scale_v * code_v:
//   |v.q - scale_v * scale * dot(code_v, code)| <= scale_v * half_l1 + |q - scale * code|_2
// (the row's rounding, at most scale_v / 2 a component, against the query's codes; then the
// query's rounding against |v| = 1, by Cauchy-Schwarz). `fixed` adds the f16 rescoring's
// rounding (2^-11 relative, at most 4.9e-4 on unit vectors) and float slack.
struct Prepared {
  alignas(64) int8_t code[kDims];
  int32_t sum;  // sum of the codes (the VNNI kernels' offset)
  float scale;
  float half_l1;
  float fixed;
  // The f16 rescoring's rounding (2^-11 relative, at most 4.9e-4 on unit vectors) and float slack.
  float f16_slack;
  // |scale * code|_2, rounded up: the int8 pass's row term is also at most err_v times it.
  float code_norm;
  // The query's own rounding, rounded in turn: q ~ q2 = scale * code + scale2 * code2, so a
  // candidate's refined test is a second integer dot (its codes against code2, ~16 VNNI
  // instructions) instead of a float one. For q2: q2_half_l1 = |q2|_1 / 2 and q2_norm =
  // |q2|_2, rounded up, and resid2 = |q - q2|_2 rounded up, which |v| <= 1 adds to the bound.
  alignas(64) int8_t code2[kDims];
  int32_t sum2;
  float scale2;
  float q2_half_l1;
  float q2_norm;
  float resid2;
};

// A candidate's refined estimate from the two dots, and its bound (see Prepared::code2):
//   |v.q - refined| <= min(scale_v * q2_half_l1 + f16_slack, err_v * q2_norm + 1e-5) + resid2
// (err_v, the row's measured |v - scale_v * code_v|_2, or +inf where none is kept).
inline float refined(float row_scale, const Prepared& p, int32_t dot, int32_t dot2) {
  return row_scale * (p.scale * (float)dot + p.scale2 * (float)dot2);
}
inline float refined_bound(float row_scale, float err, const Prepared& p) {
  return std::min(row_scale * p.q2_half_l1 + p.f16_slack, err * p.q2_norm + 1e-5f) + p.resid2;
}
void prepare(const float* q, Prepared* p);

inline float approx(const Cols& c, size_t r, const Prepared& p, int32_t dot) { return c.scale[r] * p.scale * (float)dot; }
inline float bound(const Cols& c, size_t r, const Prepared& p) { return c.scale[r] * p.half_l1 + p.fixed; }

// A revision's score: its best chunk.
struct Hit {
  uint64_t ord;
  uint64_t label;
  float score;
};

inline bool better(const Hit& a, const Hit& b) { return a.score > b.score || (a.score == b.score && a.ord < b.ord); }

struct RangeQuery {
  const float* q;     // kDims, unit length
  float threshold;    // keep revisions scoring >= threshold
  Filter filter;
  size_t cap;         // stop once more than `cap` revisions match
};

struct RangeResult {
  std::vector<Hit> hits;
  bool overflow = false;  // more than cap matched; hits.size() is how many were seen
};

// Every revision at or above each query's threshold, unordered. The queries share one pass
// over the rows, split across the pool's threads: each block of rows is read from memory once
// and scored against every query while it sits in cache (4 rows x 4 queries a kernel call).
std::vector<RangeResult> range_batch(const std::vector<Cols>& views, const std::vector<RangeQuery>& queries, Pool& pool);

// Rows to consider: every row of the views, or only those with label >= min_label (the rows
// an index does not cover yet).
struct RowSet {
  uint64_t min_label = 0;
};

// The k best revisions scoring at least min_score, best first, by an exact scan on the pool.
std::vector<Hit> topk_scan(const std::vector<Cols>& views, const float* q, size_t k, float min_score, const Filter& f, Pool& pool,
                           RowSet rows = {});

// One query of a shared top-k pass.
struct TopkQuery {
  const float* q;  // kDims, unit length
  size_t k;
  float min_score;
  const Filter* filter;
};

// Several exact top-k scans in one pass over the rows: each block is read once and scored
// against every query as range_batch scores it, then each query keeps what topk_scan would.
// Each answer is topk_scan's for the same query.
std::vector<std::vector<Hit>> topk_scan_batch(const std::vector<Cols>& views, const std::vector<TopkQuery>& queries, Pool& pool);

// The exact score of the revision holding row r of view c: the best of its chunks (adjacent rows).
Hit score_revision(const Cols& c, size_t r, const float* q);

// Rows the filter allows, counted exactly (a pass over the filter columns where the per-source
// tables cannot answer), counting no further than `limit`.
uint64_t count_allowed(const std::vector<Cols>& views, const Filter& f, uint64_t limit = UINT64_MAX);

// Rows the filter allows, estimated without a pass: a time window is a row range of each
// sorted view (exact), and sources and first-only scale it by the view's per-source counts.
// The delta (unsorted, up to a segment's worth) is sampled.
uint64_t estimate_allowed(const std::vector<Cols>& views, const Filter& f);

}  // namespace nm
