// Row storage for chunk vectors. A "view" is a set of rows with columns; two kinds:
// sealed segments (immutable files, rows sorted by event_time, memory-mapped) and the delta
// (rows appended in memory since the last seal). A revision's chunks are always adjacent rows
// of one view, so per-revision aggregation needs no hash map.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

namespace nm {

constexpr size_t kDims = 1024;

// One chunk as given by the caller.
struct RowInput {
  uint64_t label;   // chunk id
  uint64_t ord;     // revision row
  int64_t time;     // event_time, Unix seconds
  uint32_t source;  // source id
  uint8_t first;    // 1 if the revision is an article's first
  const float* vec; // kDims floats, L2-normalised
};

// Rows per source id, all and first revisions only: a segment's answer to "how many rows
// does this filter allow" when a time window covers it whole.
struct SourceCounts {
  std::vector<uint64_t> all, first;
};

// Column pointers of a view.
struct Cols {
  size_t n = 0;
  const uint16_t* f16 = nullptr;
  const int8_t* i8 = nullptr;
  const float* scale = nullptr;
  const uint64_t* ord = nullptr;
  const uint64_t* label = nullptr;
  const int64_t* time = nullptr;
  const uint32_t* source = nullptr;
  const uint8_t* first = nullptr;
  bool sorted = false;  // rows ordered by time (segments), so a window is a row range; else by label (the delta)
  uint64_t max_label = 0;  // the largest label (0 when empty)
  const SourceCounts* counts = nullptr;  // segments only
};

// The huge page size the mappings align to (x86-64 and arm64 with 4 KiB base pages), and an
// address rounded up or down to one.
constexpr size_t kHugePage = size_t(2) << 20;
inline uintptr_t huge_up(uintptr_t x) { return (x + kHugePage - 1) & ~(uintptr_t)(kHugePage - 1); }
inline uintptr_t huge_down(uintptr_t x) { return x & ~(uintptr_t)(kHugePage - 1); }

// A file memory-mapped read-only, unmapped when destroyed. Throws std::runtime_error naming the
// path; one shorter than `min_size` is "not a <what> (too short)".
class Mapping {
 public:
  Mapping(const std::string& path, size_t min_size, const char* what);
  ~Mapping();
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  const char* data() const { return static_cast<const char*>(map_); }
  size_t size() const { return size_; }
  // Asks for huge pages over the whole 2 MiB pages inside [offset, offset + len): a page the
  // kernel reads in there is read as a 2 MiB folio (MADV_HUGEPAGE). For regions read in bulk.
  void advise_huge(size_t offset, size_t len) const;

 private:
  void* map_ = nullptr;
  size_t size_ = 0;
};

// A sealed segment file, memory-mapped read-only.
class Segment {
 public:
  // Opens and validates a segment file; throws std::runtime_error with the reason.
  explicit Segment(const std::string& path);
  ~Segment();
  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;
  const Cols& cols() const { return cols_; }
  const std::string& path() const { return path_; }
  // The smallest label (rows are ordered by time; cols().max_label is the largest).
  uint64_t min_label() const { return min_label_; }

 private:
  std::string path_;
  std::unique_ptr<Mapping> map_;
  Cols cols_;
  uint64_t min_label_ = UINT64_MAX;
  SourceCounts counts_;
};

// Rows in memory (the delta, or a segment being built).
// A growable array of trivially copyable T, grown with realloc: glibc serves large blocks with
// mmap and grows them with mremap, so the delta grows by remapping pages, not by copying
// every row under the engine's write lock (std::vector's doubling copied 100 MB at 32k rows).
template <typename T>
class PodVec {
 public:
  PodVec() = default;
  ~PodVec() { std::free(p_); }
  PodVec(const PodVec&) = delete;
  PodVec& operator=(const PodVec&) = delete;
  PodVec(PodVec&& o) noexcept : p_(o.p_), n_(o.n_), cap_(o.cap_) { o.p_ = nullptr, o.n_ = o.cap_ = 0; }
  PodVec& operator=(PodVec&& o) noexcept {
    if (this != &o) {
      std::free(p_);
      p_ = o.p_, n_ = o.n_, cap_ = o.cap_;
      o.p_ = nullptr, o.n_ = o.cap_ = 0;
    }
    return *this;
  }
  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  T* data() { return p_; }
  const T* data() const { return p_; }
  const T& operator[](size_t i) const { return p_[i]; }
  const T& back() const { return p_[n_ - 1]; }
  // `k` more elements, uninitialised: the caller writes them.
  T* grow(size_t k) {
    if (n_ + k > cap_) {
      size_t c = std::max(n_ + k, cap_ * 2 + 16);
      void* q = std::realloc(p_, c * sizeof(T));
      if (!q) throw std::bad_alloc();
      p_ = static_cast<T*>(q), cap_ = c;
    }
    T* at = p_ + n_;
    n_ += k;
    return at;
  }
  void push_back(const T& v) { *grow(1) = v; }
  void append(const T* src, size_t k) { std::memcpy(grow(k), src, k * sizeof(T)); }

 private:
  T* p_ = nullptr;
  size_t n_ = 0, cap_ = 0;
};

class RowBuffer {
 public:
  void append(const RowInput& r);
  // Copies row `r` of another view.
  void append_from(const Cols& c, size_t r);
  size_t size() const { return ord_.size(); }
  Cols cols() const;
  void clear();
  // Writes the rows sorted by (time, ord, label) to `path` (temp file + fsync + rename).
  void write_sorted(const std::string& path) const;

 private:
  PodVec<uint16_t> f16_;
  PodVec<int8_t> i8_;
  PodVec<float> scale_;
  PodVec<uint64_t> ord_, label_;
  PodVec<int64_t> time_;
  PodVec<uint32_t> source_;
  PodVec<uint8_t> first_;
};

// Rows of a sorted view with lo <= time <= hi: [begin, end).
void time_range(const Cols& c, int64_t lo, int64_t hi, size_t* begin, size_t* end);

}  // namespace nm
