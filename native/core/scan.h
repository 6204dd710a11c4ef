// Exact scans over views: an int8 pass picks candidate rows, an f16 pass rescores them. The
// int8 pass keeps every row whose score could reach the threshold under a rigorous per-row
// error bound (scale / 2 * |q|_1, about 0.01 for typical embeddings), so the result is exact
// up to f16 rounding (|error| < 1e-4 on unit vectors).
#pragma once
#include <cstdint>
#include <vector>

#include "segment.h"

namespace nm {

// Which rows a query may see.
struct Filter {
  int64_t tmin = INT64_MIN, tmax = INT64_MAX;  // inclusive event_time bounds
  std::vector<uint8_t> sources;                 // allowed-source bitmap (bit i = source i); empty: all
  bool first_only = false;                      // first revisions only
};

inline bool source_allowed(const Filter& f, uint32_t s) {
  if (f.sources.empty()) return true;
  size_t byte = s >> 3;
  return byte < f.sources.size() && ((f.sources[byte] >> (s & 7)) & 1);
}

inline bool row_allowed(const Cols& c, size_t r, const Filter& f) {
  return c.time[r] >= f.tmin && c.time[r] <= f.tmax && (!f.first_only || c.first[r]) && source_allowed(f, c.source[r]);
}

// A revision's score: its best chunk.
struct Hit {
  uint64_t ord;
  uint64_t label;
  float score;
};

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

// Every revision at or above each query's threshold. The queries share one pass over the
// rows (blocks stay in cache while every query reads them): the scan is memory-bound.
std::vector<RangeResult> range_batch(const std::vector<Cols>& views, const std::vector<RangeQuery>& queries);

// The k best revisions scoring at least min_score, best first.
std::vector<Hit> topk_scan(const std::vector<Cols>& views, const float* q, size_t k, float min_score, const Filter& f);

// Rows the filter allows (for the planner's cost model), counting no further than `limit`.
uint64_t count_allowed(const std::vector<Cols>& views, const Filter& f, uint64_t limit = UINT64_MAX);

}  // namespace nm
