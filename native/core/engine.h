// The search engine: sealed segments + in-memory delta (rows), and a usearch HNSW index over
// the same chunks (a memory-mapped base file + an in-memory delta index). Queries take a
// shared lock; appends, seals and swaps take the exclusive one only briefly.
#pragma once
#include <atomic>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "scan.h"
#include "segment.h"

namespace nm {

struct EngineOptions {
  std::string dir;
  size_t connectivity = 32;
  size_t expansion_add = 256;
  size_t expansion_search = 64;
};

struct EngineStats {
  size_t segments = 0, segment_rows = 0, delta_rows = 0, hnsw_base = 0, hnsw_delta = 0, hnsw_pending = 0;
  uint64_t next_label = 0;
  const char* isa = "";
};

class Hnsw;

class Engine {
 public:
  // Opens (or creates) the engine in `dir`: reads the manifest, maps segments, views the HNSW
  // base file, and queues rows the HNSW index lacks. Throws std::runtime_error.
  explicit Engine(EngineOptions o);
  ~Engine();

  // Appends rows to the delta. Labels must be new and increasing.
  void append(const std::vector<RowInput>& rows);
  // Adds up to `max` queued rows to the HNSW delta using `threads` threads. Returns rows added.
  size_t index_pending(size_t max, size_t threads);
  // Writes the delta as a sorted segment and records it in the manifest.
  void seal();
  // Merges every segment into one.
  void compact();
  // Folds the HNSW delta into a new base file and views it.
  void save_hnsw(size_t threads);

  std::vector<RangeResult> range(const std::vector<RangeQuery>& queries) const;
  std::vector<Hit> topk(const float* q, size_t k, float min_score, const Filter& f) const;
  // HNSW top-k by revision; `complete` is false when HNSW could not fill k rows (caller scans).
  std::vector<Hit> topk_hnsw(const float* q, size_t k, float min_score, const Filter& f, bool* complete) const;
  // How a planned top-k was answered.
  enum class Plan { ScanSmall, ScanPending, Hnsw, HnswThenScan };
  // Top-k planned here, on the calling (worker) thread: an exact scan when the filter allows at
  // most `scan_max_rows` rows or HNSW lags behind; HNSW otherwise, and the scan when HNSW
  // cannot fill k rows, so a page is never under-filled.
  std::vector<Hit> topk_planned(const float* q, size_t k, float min_score, const Filter& f, uint64_t scan_max_rows, Plan* plan) const;
  uint64_t count(const Filter& f) const;
  EngineStats stats() const;
  // Releases the directory lock; later calls throw. Memory goes when the last user lets go.
  void close();

 private:
  struct Attr {
    uint64_t ord;
    int64_t time;
    uint32_t source;
    uint8_t first;
    uint8_t present;
  };
  void open_locked();
  std::vector<Cols> views_locked() const;
  void note_row(const Cols& c, size_t r);
  const Attr* attr(uint64_t label) const;
  void write_manifest_locked();

  EngineOptions opt_;
  mutable std::shared_mutex mu_;
  std::vector<std::unique_ptr<Segment>> segments_;
  RowBuffer delta_;
  uint64_t next_label_ = 0;   // one past the largest label held
  uint64_t sealed_label_ = 0; // one past the largest label in a segment
  uint64_t seq_ = 0;          // segment file sequence
  uint64_t hnsw_label_ = 0;   // labels below it are in the HNSW base file
  std::vector<Attr> attrs_;   // by label - attr_base_
  uint64_t attr_base_ = 0;
  std::unique_ptr<Hnsw> hnsw_;
  std::vector<uint64_t> pending_;  // labels not yet in HNSW, ascending
  std::mutex maintenance_;         // one seal / compact / save at a time
  int lock_fd_ = -1;               // flock on dir/LOCK: one process owns an engine directory
  std::atomic<bool> closed_{false};
  void check_open() const;
};

}  // namespace nm
