// The search engine: sealed segments + in-memory delta (rows), and an inverted-file index over
// the same chunks (ivf.h): centroids, and for each centroid the rows filed under it. Queries
// take a shared lock; appends, filing, seals and swaps take the exclusive one only briefly.
#pragma once
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "ivf.h"
#include "scan.h"
#include "segment.h"

namespace nm {

class Pool;

struct EngineOptions {
  std::string dir;
  size_t lists = 0;                  // index lists when it is trained; 0: about sqrt(rows)
  uint64_t index_min_rows = 65536;   // the index is trained once the engine holds this many rows
  size_t threads = 0;                // threads of scans and index builds; 0: one per core
};

struct EngineStats {
  size_t segments = 0, segment_rows = 0, delta_rows = 0;
  size_t index_lists = 0;       // 0 until the index is trained
  uint64_t index_rows = 0;      // rows filed in the index
  uint64_t index_pending = 0;   // rows waiting to be filed (0 while too few rows to train on)
  uint64_t index_saved = 0;     // labels below this are in the index file
  uint64_t trained_rows = 0;    // rows held when the centroids were trained
  uint64_t next_label = 0;
  size_t threads = 0;
  const char* isa = "";
  uint64_t warmed_bytes = 0;    // mapped pages the walk after open has touched (warm_mappings)
  bool warm_done = false;       // and whether it has finished
};

// The planner's settings for one top-k query.
struct TopkOptions {
  uint64_t scan_max_rows = 50000;  // filters leaving at most this many rows (estimated) are scanned
  float probe_delta = 0.05f;       // read every list whose centroid scores within this of the best one
  uint64_t probe_min_rows = 0;     // and on until this many allowed rows are read (0: 64 per wanted revision, and 4 lists' worth)
  uint64_t probe_max_rows = 0;     // more rows than this within probe_delta: the query is far (0: 3% of rows, at least 30,000)
  float far_score = 0.3f;          // a best centroid below this: the query is far from all data
  size_t threads = 1;              // threads the index sweep may use (topk_many: all for a lone query on an idle pool)
};

// What a top-k query read.
struct ProbeStats {
  size_t lists = 0;        // lists read
  uint64_t rows = 0;       // rows of those lists (allowed or not)
  uint64_t allowed = 0;    // of which the filter allowed
  uint64_t pending = 0;    // rows not yet filed, scanned beside the lists
  size_t rescored = 0;     // revisions scored exactly in f16
  size_t threads = 1;      // threads the lists were handed out to
};

class Engine {
 public:
  // Opens (or creates) the engine in `dir`: reads the manifest, maps segments, reads the index
  // file. Throws std::runtime_error.
  explicit Engine(EngineOptions o);
  ~Engine();

  // Appends rows to the delta. Labels must be new and increasing.
  void append(const std::vector<RowInput>& rows);
  // Files up to `max` rows not yet in the index, training the centroids first when there are
  // none and enough rows (and again, filing every row anew, once the rows have grown 4x since).
  // Returns the rows filed.
  size_t index_pending(size_t max);
  // Writes the delta as a sorted segment and records it in the manifest.
  void seal();
  // Merges every segment into one.
  void compact();
  // Writes the index file: the centroids, and every filed row of the segments stored by list.
  void save_index();

  std::vector<RangeResult> range(const std::vector<RangeQuery>& queries) const;
  // Exact top-k by revision: a scan of every allowed row, on all threads.
  std::vector<Hit> topk(const float* q, size_t k, float min_score, const Filter& f) const;
  // Top-k from the index: the nearest lists read exactly, and the rows not yet filed scanned
  // beside them. `far` when the query is far from every list (its best centroid scores below
  // far_score, or too many rows lie within probe_delta); `complete` false when the lists the
  // row budget allows could not fill k. In either case the caller scans.
  std::vector<Hit> topk_index(const float* q, size_t k, float min_score, const Filter& f, const TopkOptions& o, bool* complete, bool* far,
                              ProbeStats* ps) const;
  // How a planned top-k was answered.
  enum class Plan { Scan, ScanFar, Index, IndexThenScan };
  // Top-k planned here, on the calling (worker) thread: an exact scan when there is no index
  // yet, when the filter leaves few rows (estimated), or when the query is far from the data;
  // the index otherwise, and the scan when the index cannot fill k rows. With `defer`, a full
  // scan is not run but asked for (*defer = true, no hits): topk_many runs those together.
  std::vector<Hit> topk_planned(const float* q, size_t k, float min_score, const Filter& f, const TopkOptions& o, Plan* plan,
                                ProbeStats* ps, bool* defer = nullptr) const;
  // One top-k of a batch, and its answer.
  enum class Mode { Scan, Index, Auto };
  struct TopkRequest {
    const float* q;
    size_t k;
    float min_score;
    Filter filter;
    Mode mode;
    TopkOptions options;
  };
  struct TopkAnswer {
    std::vector<Hit> hits;
    bool complete = true;
    bool far = false;  // Mode::Index only
    Plan plan = Plan::Scan;
    ProbeStats probe;
  };
  // Several top-k queries at once, spread over the engine's threads: one hand-off from the
  // caller for the lot, instead of a thread woken per query. Their full scans share one pass
  // (topk_scan_batch).
  std::vector<TopkAnswer> topk_many(const std::vector<TopkRequest>& requests) const;
  uint64_t count(const Filter& f) const;
  uint64_t estimate(const Filter& f) const;
  // Visits the rows held with labels in [from, to) in label order, under the read lock (a label
  // with no row is skipped): fn(columns, row). Monitors copy a window of new chunks out this way.
  void visit_labels(uint64_t from, uint64_t to, const std::function<void(const Cols&, size_t)>& fn) const;
  EngineStats stats() const;
  // The threads its scans use: other batch work of the process (monitors.h) shares them.
  Pool& pool() { return *pool_; }
  // Releases the directory lock; later calls throw. Memory goes when the last user lets go.
  void close();

 private:
  // A row filed since the index file was written: its view (a segment's index, or kDelta) in
  // the low 31 bits of `tag` and its first-revision flag in the top bit, so the API's default
  // filter (first revisions only) costs no read of the row's columns.
  struct Ref {
    uint32_t tag;
    uint32_t row;
    uint32_t view() const { return tag & 0x7fffffffu; }
    bool first() const { return tag >> 31; }
  };
  // Per label: its list (or kUnfiled, kNoRow) and where its row is now.
  struct LabelInfo {
    uint32_t list;
    uint32_t view;
    uint32_t row;
  };
  static constexpr uint32_t kDelta = 0x7fffffffu;
  static constexpr uint32_t kUnfiled = 0xffffffffu;  // a row not yet filed in a list
  static constexpr uint32_t kNoRow = 0xfffffffeu;    // a label with no row
  static Ref ref(uint32_t view, uint32_t row, uint8_t first) { return {view | (first ? 0x80000000u : 0u), row}; }

  void open_locked();
  void open_index_file();
  void warm_mappings();
  std::vector<Cols> views_locked() const;
  const Cols& view_of(const std::vector<Cols>& views, uint32_t view) const { return view == kDelta ? views.back() : views[view]; }
  void note_row(uint64_t label, uint32_t view, uint32_t row);
  LabelInfo& info(uint64_t label) { return info_[label - base_]; }
  const LabelInfo* info(uint64_t label) const { return label >= base_ && label - base_ < info_.size() ? &info_[label - base_] : nullptr; }
  uint32_t list_of(uint64_t label) const {
    const LabelInfo* i = info(label);
    return i ? i->list : kNoRow;
  }
  uint64_t rows_locked() const;
  // Records where the rows of view `c` are now, and adds the refs of those filed but not in the
  // index file to `refs` (by list).
  void place_rows(uint32_t view, const Cols& c, std::vector<std::vector<Ref>>* refs);
  // Refs of the rows filed but not in the index file, by list.
  void build_refs();
  size_t retrain();
  void write_manifest_locked();
  void check_open() const;

  EngineOptions opt_;
  std::unique_ptr<Pool> pool_;
  mutable std::shared_mutex mu_;
  std::vector<std::unique_ptr<Segment>> segments_;
  RowBuffer delta_;
  uint64_t next_label_ = 0;    // one past the largest label held
  uint64_t sealed_label_ = 0;  // one past the largest label in a segment
  uint64_t seq_ = 0;           // segment file sequence
  std::vector<LabelInfo> info_;  // by label - base_
  uint64_t base_ = 0;
  Centroids centroids_;
  uint64_t trained_rows_ = 0;
  uint64_t filed_to_ = 0;      // labels below this are filed (or have no row)
  uint64_t filed_rows_ = 0;    // rows filed
  uint64_t saved_to_ = 0;      // labels below this are in the index file
  std::unique_ptr<IndexFile> file_;  // the saved lists; none after a retraining until the next save
  std::vector<std::vector<Ref>> seg_refs_, delta_refs_;  // filed since the file, by list
  std::mutex maintenance_;     // one filing / seal / compact / save at a time
  int lock_fd_ = -1;           // flock on dir/LOCK: one process owns an engine directory
  std::atomic<bool> closed_{false};
  std::thread warm_;            // warm_mappings, once after open
  std::atomic<uint64_t> warmed_{0};
  std::atomic<bool> warm_done_{false};
};

}  // namespace nm
