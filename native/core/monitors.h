// Standing queries (monitors) scored against a batch of new chunks: every (monitor, revision)
// whose best chunk reaches the monitor's floor, none missed. An int8 pass over monitors x chunks
// (4 x 4 tiles, the scan's kernels) keeps every pair whose score could reach the floor under the
// scan's rigorous bound (scan.h, Prepared); the candidates are rescored in f16 with the same
// kernel the engine's searches use, so a match's score is the one a later search returns.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "scan.h"

namespace nm {

class Engine;
class Pool;

// Monitors prepared once (they stand across batches): int8 codes and bound terms, the f32
// vectors for rescoring, the floors.
struct MonitorSet {
  size_t m = 0;
  std::vector<Prepared> prep;   // m
  std::vector<float> vec;       // m * kDims
  std::vector<float> floor;     // m
  std::vector<float> qerr;      // |q - scale * code|_2: the query-rounding term, per unit row norm
  std::vector<float> qnorm;     // |q|_2 (f16's rounding scales with it)
};

// The first index in v[0, n) that is not finite, or n.
size_t first_nonfinite(const float* v, size_t n);

// Copies and prepares m monitors (m * kDims floats, floors[m]). Inputs must be finite
// (first_nonfinite); vectors L2-normalised for the scores to be cosines.
MonitorSet prepare_monitors(const float* vec, const float* floors, size_t m, Pool& pool);

// A batch of new chunks, as appended: n rows of kDims floats, each with its revision and label.
// A revision's chunks need not be adjacent.
struct ChunkBatch {
  const float* vec;
  const uint64_t* ord;
  const uint64_t* label;
  size_t n;
};

struct MonitorMatch {
  uint32_t monitor;
  uint64_t ord;
  uint64_t label;  // the revision's best chunk in this batch
  float score;     // its f16 score (within 5e-4 of float32 by the bound, ~1e-5 in practice)
};

struct MonitorResult {
  std::vector<MonitorMatch> matches;  // by monitor, then ord
  uint64_t rescored = 0;              // pairs the int8 pass could not rule out
};

// Rows a pass scores: their int8 codes (2 MB) stay in cache while every monitor block reads
// them; a larger batch takes several passes, merged.
constexpr size_t kMonitorPassRows = 2048;

// Every (monitor, revision) whose best chunk scores >= the monitor's floor, split over the pool
// by blocks of monitors (each block's codes stay in cache while the batch streams past).
MonitorResult score_monitors(const MonitorSet& s, const ChunkBatch& b, Pool& pool, size_t pass_rows = kMonitorPassRows);

// The same for the chunks the engine holds with labels in [from, to): a window of the ingest
// sequence, scored from the engine's own int8 codes and f16 vectors (copied out under its read
// lock; none quantised again), so a match's score is the one a search of it returns.
MonitorResult score_monitor_labels(const MonitorSet& s, const Engine& e, uint64_t from, uint64_t to, Pool& pool,
                                   size_t pass_rows = kMonitorPassRows);

// The same tiles' integer dots alone (no bound test, no rescoring): the floor score_monitors
// is measured against (bench/monitors.ts). Returns a checksum of the dots.
int64_t monitor_dots(const MonitorSet& s, const float* vec, size_t n, Pool& pool, size_t pass_rows = kMonitorPassRows);

}  // namespace nm
