#include "segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <stdexcept>

#include "kernels.h"

namespace nm {

namespace {

constexpr char kMagic[8] = {'N', 'M', 'S', 'E', 'G', '0', '1', '\0'};

// File layout: Header, then each column at a 64-byte aligned offset, in this order.
struct Header {
  char magic[8];
  uint32_t version;
  uint32_t dims;
  uint64_t rows;
  uint64_t off_f16, off_i8, off_scale, off_ord, off_label, off_time, off_source, off_first;
  uint64_t file_size;
};

size_t align64(size_t x) { return (x + 63) & ~size_t(63); }

Header layout(size_t n) {
  Header h{};
  std::memcpy(h.magic, kMagic, 8);
  h.version = 1;
  h.dims = kDims;
  h.rows = n;
  size_t o = align64(sizeof(Header));
  h.off_f16 = o, o = align64(o + n * kDims * 2);
  h.off_i8 = o, o = align64(o + n * kDims);
  h.off_scale = o, o = align64(o + n * 4);
  h.off_ord = o, o = align64(o + n * 8);
  h.off_label = o, o = align64(o + n * 8);
  h.off_time = o, o = align64(o + n * 8);
  h.off_source = o, o = align64(o + n * 4);
  h.off_first = o, o = align64(o + n);
  h.file_size = o;
  return h;
}

void write_all(int fd, const void* p, size_t n, const std::string& path) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    ssize_t w = ::write(fd, c, n);
    if (w < 0) throw std::runtime_error("write " + path + ": " + std::strerror(errno));
    c += w;
    n -= (size_t)w;
  }
}

// Writes a file through a buffer flushed at 4 MiB-aligned offsets. The kernel then fills the
// page cache with 2 MiB folios where the filesystem supports them, which Mapping maps whole (on
// ext4, writes of 1 MiB left 4 KiB folios behind; 4 MiB at 4 MiB boundaries left 2 MiB ones).
class AlignedOut {
 public:
  static constexpr size_t kFlush = size_t(4) << 20;
  AlignedOut(int fd, const std::string& path) : fd_(fd), path_(path) { buf_.reserve(kFlush); }
  void put(const void* p, size_t n) {
    const char* c = static_cast<const char*>(p);
    while (n > 0) {
      size_t k = std::min(n, kFlush - buf_.size());
      buf_.insert(buf_.end(), c, c + k);
      c += k, n -= k;
      if (buf_.size() == kFlush) flush();
    }
  }
  // Zeros up to `offset` (a column's aligned start).
  void pad_to(uint64_t offset) {
    static const char zero[64] = {};
    while (at() < offset) put(zero, std::min<uint64_t>(sizeof zero, offset - at()));
  }
  uint64_t at() const { return written_ + buf_.size(); }
  void flush() {
    write_all(fd_, buf_.data(), buf_.size(), path_);
    written_ += buf_.size();
    buf_.clear();
  }

 private:
  int fd_;
  const std::string& path_;
  std::vector<char> buf_;
  uint64_t written_ = 0;
};

}  // namespace

Mapping::Mapping(const std::string& path, size_t min_size, const char* what) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("open " + path + ": " + std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0 || (size_t)st.st_size < min_size) {
    ::close(fd);
    throw std::runtime_error(path + ": not a " + what + " (too short)");
  }
  size_ = (size_t)st.st_size;
  // Mapped at a 2 MiB boundary: where the page cache holds the file in 2 MiB folios (Linux's
  // large folios; ext4 since 6.16), each is then mapped by one page-table entry. On this
  // project's virtualised 2-core box a scan or an index sweep missing the TLB every 4 KiB cost
  // relevance 8-16% of its throughput and order=time passes 10-15% (README, "Huge pages").
  // Elsewhere (4 KiB folios, no THP) it maps as before.
  void* at = nullptr;
  if (size_ >= kHugePage) {
    void* r = ::mmap(nullptr, size_ + kHugePage, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (r != MAP_FAILED) {
      uintptr_t b = (uintptr_t)r, a = huge_up(b);
      // The reservation's ends are given back (its tail is never empty: a < b + kHugePage); the
      // file replaces its aligned middle.
      if (a > b) ::munmap(r, a - b);
      ::munmap(reinterpret_cast<void*>(a + size_), b + kHugePage - a);
      at = reinterpret_cast<void*>(a);
    }
  }
  map_ = ::mmap(at, size_, PROT_READ, MAP_SHARED | (at ? MAP_FIXED : 0), fd, 0);
  ::close(fd);
  if (map_ == MAP_FAILED) {
    int err = errno;
    map_ = nullptr;
    if (at) ::munmap(at, size_);
    throw std::runtime_error("mmap " + path + ": " + std::strerror(err));
  }
}

void Mapping::advise_huge(size_t offset, size_t len) const {
  uintptr_t b = (uintptr_t)map_ + offset, e = b + std::min(len, size_ - std::min(offset, size_));
  uintptr_t a = huge_up(b), z = huge_down(e);
  if (z > a) ::madvise(reinterpret_cast<void*>(a), z - a, MADV_HUGEPAGE);
}

Mapping::~Mapping() {
  if (map_) ::munmap(map_, size_);
}

Segment::Segment(const std::string& path) : path_(path), map_(new Mapping(path, sizeof(Header), "segment")) {
  Header h;
  std::memcpy(&h, map_->data(), sizeof(Header));
  Header want = layout(h.rows);
  if (std::memcmp(h.magic, kMagic, 8) != 0 || h.version != 1 || h.dims != kDims || h.file_size != map_->size() ||
      std::memcmp(&h, &want, sizeof(Header)) != 0)
    throw std::runtime_error(path + ": not a segment or damaged (header mismatch)");
  // Scans read the int8 column front to back; tell the kernel so it reads ahead, in 2 MiB
  // folios. The f16 column is read a row at a time (the rescoring) and left to ordinary
  // readahead: on a corpus larger than memory, a miss there must not read 2 MiB for one row.
  map_->advise_huge(h.off_i8, h.rows * kDims);
  ::madvise(const_cast<char*>(map_->data()) + h.off_i8, h.rows * kDims, MADV_SEQUENTIAL);
  const char* b = map_->data();
  cols_.n = h.rows;
  cols_.f16 = reinterpret_cast<const uint16_t*>(b + h.off_f16);
  cols_.i8 = reinterpret_cast<const int8_t*>(b + h.off_i8);
  cols_.scale = reinterpret_cast<const float*>(b + h.off_scale);
  cols_.ord = reinterpret_cast<const uint64_t*>(b + h.off_ord);
  cols_.label = reinterpret_cast<const uint64_t*>(b + h.off_label);
  cols_.time = reinterpret_cast<const int64_t*>(b + h.off_time);
  cols_.source = reinterpret_cast<const uint32_t*>(b + h.off_source);
  cols_.first = reinterpret_cast<const uint8_t*>(b + h.off_first);
  cols_.sorted = true;
  // Source ids are small and dense; past 2^16 of them a count pass is cheaper than the table.
  bool dense = true;
  for (size_t r = 0; r < cols_.n; r++) cols_.max_label = std::max(cols_.max_label, cols_.label[r]), min_label_ = std::min(min_label_, cols_.label[r]);
  for (size_t r = 0; r < cols_.n && dense; r++) {
    uint32_t src = cols_.source[r];
    if (src >= 65536) dense = false;
    else if (src >= counts_.all.size()) counts_.all.resize(src + 1), counts_.first.resize(src + 1);
    if (dense) counts_.all[src]++, counts_.first[src] += cols_.first[r] != 0;
  }
  if (dense) cols_.counts = &counts_;
}

Segment::~Segment() = default;

void RowBuffer::append(const RowInput& r) {
  f32_to_f16_n(r.vec, f16_.grow(kDims), kDims);
  scale_.push_back(quantize_i8(r.vec, i8_.grow(kDims), kDims));
  ord_.push_back(r.ord);
  label_.push_back(r.label);
  time_.push_back(r.time);
  source_.push_back(r.source);
  first_.push_back(r.first);
}

void RowBuffer::append_from(const Cols& c, size_t r) {
  f16_.append(c.f16 + r * kDims, kDims);
  i8_.append(c.i8 + r * kDims, kDims);
  scale_.push_back(c.scale[r]);
  ord_.push_back(c.ord[r]);
  label_.push_back(c.label[r]);
  time_.push_back(c.time[r]);
  source_.push_back(c.source[r]);
  first_.push_back(c.first[r]);
}

Cols RowBuffer::cols() const {
  Cols c;
  c.n = ord_.size();
  c.f16 = f16_.data();
  c.i8 = i8_.data();
  c.scale = scale_.data();
  c.ord = ord_.data();
  c.label = label_.data();
  c.time = time_.data();
  c.source = source_.data();
  c.first = first_.data();
  c.sorted = false;
  c.max_label = label_.empty() ? 0 : label_.back();
  return c;
}

void RowBuffer::clear() {
  // Fresh buffers, not emptied ones: give the memory back.
  *this = RowBuffer();
}

void RowBuffer::write_sorted(const std::string& path) const {
  size_t n = size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  // Stable on (time, ord, label): a revision's rows stay adjacent and in chunk order.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (time_[a] != time_[b]) return time_[a] < time_[b];
    if (ord_[a] != ord_[b]) return ord_[a] < ord_[b];
    return label_[a] < label_[b];
  });
  Header h = layout(n);
  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("create " + tmp + ": " + std::strerror(errno));
  try {
    // Buffered from offset 0, so every flush but the last is 4 MiB at a 4 MiB boundary.
    AlignedOut out(fd, tmp);
    out.put(&h, sizeof(h));
    // Each column gathered in sorted order.
    auto column = [&](uint64_t offset, size_t width, auto get) {
      out.pad_to(offset);
      for (size_t i = 0; i < n; i++) out.put(get(order[i]), width);
    };
    column(h.off_f16, kDims * 2, [&](size_t r) { return reinterpret_cast<const char*>(f16_.data() + r * kDims); });
    column(h.off_i8, kDims, [&](size_t r) { return reinterpret_cast<const char*>(i8_.data() + r * kDims); });
    column(h.off_scale, 4, [&](size_t r) { return reinterpret_cast<const char*>(scale_.data() + r); });
    column(h.off_ord, 8, [&](size_t r) { return reinterpret_cast<const char*>(ord_.data() + r); });
    column(h.off_label, 8, [&](size_t r) { return reinterpret_cast<const char*>(label_.data() + r); });
    column(h.off_time, 8, [&](size_t r) { return reinterpret_cast<const char*>(time_.data() + r); });
    column(h.off_source, 4, [&](size_t r) { return reinterpret_cast<const char*>(source_.data() + r); });
    column(h.off_first, 1, [&](size_t r) { return reinterpret_cast<const char*>(first_.data() + r); });
    out.pad_to(h.file_size);
    out.flush();
    if (::fsync(fd) != 0) throw std::runtime_error("fsync " + tmp + ": " + std::strerror(errno));
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) throw std::runtime_error("rename " + tmp + ": " + std::strerror(errno));
}

void time_range(const Cols& c, int64_t lo, int64_t hi, size_t* begin, size_t* end) {
  if (!c.sorted) {
    *begin = 0;
    *end = c.n;
    return;
  }
  *begin = (size_t)(std::lower_bound(c.time, c.time + c.n, lo) - c.time);
  *end = (size_t)(std::upper_bound(c.time, c.time + c.n, hi) - c.time);
  if (*end < *begin) *end = *begin;
}

}  // namespace nm
