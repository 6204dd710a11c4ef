#include "engine.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <numeric>
#include <queue>
#include <set>
#include <sstream>
#include <stdexcept>

#include "kernels.h"
#include "pool.h"

namespace nm {

namespace {

const char* kManifest = "manifest";
const char* kIndexFile = "index.nmi";
// Rows filed per step: their codes are copied under the shared lock (~8 MB, ~2 ms) so an append
// never waits on the assignment itself.
constexpr size_t kFileBatch = 8192;
// Rows the centroids are trained on, at most this many per list.
constexpr size_t kSamplePerList = 64;
constexpr size_t kTrainRounds = 10;

std::string join(const std::string& dir, const std::string& name) { return dir + "/" + name; }

std::string segment_name(uint64_t seq) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "seg-%08llu.nms", (unsigned long long)seq);
  return buf;
}

void fsync_dir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

// Candidates of an index scan: rows with bounds on their score from the int8 pass. The k best
// lower bounds, one per revision (a revision's rows may come from several lists), give a floor
// no row whose upper bound is below can reach the top k; it rises as rows come, so most rows of
// a list are dropped at a compare.
class Candidates {
 public:
  struct Entry {
    uint64_t ord;
    float lo, hi;
    uint64_t label;
  };
  // `shared`: a floor other threads sweeping for the same query raise too (their k best lower
  // bounds are among all rows', so theirs bounds the k-th best as well); null when alone.
  Candidates(size_t k, float min_score, std::atomic<float>* shared = nullptr) : k_(k), floor_(min_score), shared_(shared) {
    ords_.reserve(k);
    los_.reserve(k);
  }
  float floor() const { return shared_ ? std::max(floor_, shared_->load(std::memory_order_relaxed)) : floor_; }
  void add(uint64_t ord, uint64_t label, float lo, float hi) {
    if (hi < floor()) return;
    rows_.push_back({ord, lo, hi, label});
    if (lo <= floor_ && ords_.size() == k_) return;
    // The k best lower bounds by revision, kept apart (ords, bounds) so that finding the
    // revision is one short vectorised search; the floor is looked for again only when the
    // lowest of them changes.
    size_t i = std::find(ords_.begin(), ords_.end(), ord) - ords_.begin();
    if (i < ords_.size()) {
      if (lo <= los_[i]) return;
      los_[i] = lo;
      if (ords_.size() == k_ && i == min_) refloor();
      return;
    }
    if (ords_.size() < k_) {
      ords_.push_back(ord), los_.push_back(lo);
      if (ords_.size() == k_) refloor();
      return;
    }
    ords_[min_] = ord, los_[min_] = lo;
    refloor();
  }
  // Drops the rows whose upper bound fell below the floor as later rows raised it.
  void prune() {
    float fl = floor();
    rows_.erase(std::remove_if(rows_.begin(), rows_.end(), [&](const Entry& e) { return e.hi < fl; }), rows_.end());
  }
  // Takes the rows another thread kept for the same query: the floor and the rows kept come out
  // as if one thread had read them all (a row another thread dropped was below a floor this
  // one reaches too).
  void merge(const Candidates& o) {
    for (const Entry& e : o.rows_) add(e.ord, e.label, e.lo, e.hi);
  }
  // One entry per row read with its bound still reaching the floor (after prune()).
  const std::vector<Entry>& entries() const { return rows_; }

 private:
  // With k bounds known: the lowest is a floor on the k-th best revision.
  void refloor() {
    min_ = std::min_element(los_.begin(), los_.end()) - los_.begin();
    floor_ = std::max(floor_, los_[min_]);
    if (!shared_) return;
    float was = shared_->load(std::memory_order_relaxed);
    while (was < floor_ && !shared_->compare_exchange_weak(was, floor_, std::memory_order_relaxed)) {
    }
  }
  size_t k_;
  float floor_;
  std::atomic<float>* shared_;
  std::vector<uint64_t> ords_;
  std::vector<float> los_;
  size_t min_ = 0;
  std::vector<Entry> rows_;
};

// A map from 64-bit keys by open addressing: a top-k's per-query maps (a few hundred
// entries) without an allocation per entry. Only grows; pointers into it last until it does.
template <class V>
class FlatMap {
 public:
  explicit FlatMap(size_t expect = 16) {
    size_t cap = 32;
    while (cap < expect * 2) cap *= 2;
    rehash(cap);
  }
  // The entry of `key`, made from `v` when new (then true).
  std::pair<V*, bool> try_emplace(uint64_t key, const V& v) {
    if ((n_ + 1) * 2 > keys_.size()) rehash(keys_.size() * 2);
    size_t i = slot(key);
    if (used_[i]) return {&vals_[i], false};
    used_[i] = 1, keys_[i] = key, vals_[i] = v, n_++;
    return {&vals_[i], true};
  }
  V* find(uint64_t key) {
    size_t i = slot(key);
    return used_[i] ? &vals_[i] : nullptr;
  }
  template <class F>
  void each(F f) {
    for (size_t i = 0; i < keys_.size(); i++)
      if (used_[i]) f(keys_[i], vals_[i]);
  }
  size_t size() const { return n_; }

 private:
  size_t slot(uint64_t key) const {
    size_t m = keys_.size() - 1, i = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 29) & m;
    while (used_[i] && keys_[i] != key) i = (i + 1) & m;
    return i;
  }
  void rehash(size_t cap) {
    std::vector<uint64_t> keys(cap);
    std::vector<V> vals(cap);
    std::vector<uint8_t> used(cap);
    keys.swap(keys_), vals.swap(vals_), used.swap(used_);
    n_ = 0;
    for (size_t i = 0; i < keys.size(); i++)
      if (used[i]) {
        size_t j = slot(keys[i]);
        used_[j] = 1, keys_[j] = keys[i], vals_[j] = vals[i], n_++;
      }
  }
  std::vector<uint64_t> keys_;
  std::vector<V> vals_;
  std::vector<uint8_t> used_;
  size_t n_ = 0;
};

// The k best exact scores of distinct revisions, each a revision's best row scored so far (so
// a lower bound on its score that only rises): the k-th is a floor on the final k-th.
class BestRevisions {
 public:
  explicit BestRevisions(size_t k) : k_(k) {}
  void raise(uint64_t ord, float score) {
    for (auto& b : best_)
      if (b.second == ord) {
        if (score > b.first) b.first = score, refloor();
        return;
      }
    if (best_.size() < k_) best_.push_back({score, ord}), refloor();
    else if (score > floor_) *std::min_element(best_.begin(), best_.end()) = {score, ord}, refloor();
  }
  // The k-th best, or -inf while fewer than k revisions are known.
  float floor() const { return best_.size() < k_ ? -INFINITY : floor_; }

 private:
  void refloor() {
    floor_ = INFINITY;
    for (auto& b : best_) floor_ = std::min(floor_, b.first);
  }
  size_t k_;
  float floor_ = -INFINITY;
  std::vector<std::pair<float, uint64_t>> best_;
};

// |f16 row - scale * code|_2, in double and rounded up: an index record's `err`.
float code_error(const uint16_t* v, const int8_t* code, float scale) {
  double s = 0;
  for (size_t i = 0; i < kDims; i++) {
    double d = (double)f16_to_f32(v[i]) - (double)scale * code[i];
    s += d * d;
  }
  return (float)(std::sqrt(s) * (1 + 1e-6)) + 1e-7f;
}

// Asks for a row's f16 vector (2 KB) ahead of scoring it.
inline void prefetch_f16(const uint16_t* v) {
  const char* p = reinterpret_cast<const char*>(v);
  for (size_t o = 0; o < kDims * 2; o += 64) __builtin_prefetch(p + o);
}

}  // namespace

// Manifest: "seq N", "next_label N", and one "segment NAME" line per live segment. Files it
// does not name are leftovers of an interrupted seal or compaction and are deleted at open. The
// index file describes itself (the labels it covers); the manifest does not name it.
Engine::Engine(EngineOptions o) : opt_(std::move(o)), pool_(new Pool(opt_.threads)) {
  ::mkdir(opt_.dir.c_str(), 0755);
  // One process owns the directory (seals and compactions rename files in it).
  lock_fd_ = ::open(join(opt_.dir, "LOCK").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  if (lock_fd_ < 0) throw std::runtime_error("open " + join(opt_.dir, "LOCK") + ": " + std::strerror(errno));
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    ::close(lock_fd_);
    throw std::runtime_error("ELOCKED: " + opt_.dir + " is in use by another process (a running server?)");
  }
  try {
    open_locked();
  } catch (...) {
    // A constructor that throws runs no destructor: release the lock here.
    ::close(lock_fd_);
    lock_fd_ = -1;
    throw;
  }
  warm_ = std::thread([this] {
    warm_mappings();
    warm_done_ = true;
  });
}

// A process's first read of each page of a mapping costs a page fault, and on a virtualised
// box a dear one: a fresh server's first exact scan over 1M rows took ~0.5 s longer than the
// next (each 4 KiB of the int8 column faulted in). So after open a thread touches the pages of
// the columns queries read in bulk (each segment's int8 column, then the index file's codes)
// that are already in the page cache (mincore): it maps them, and never reads the disk, so a
// corpus larger than memory is not pulled in. 16 MiB at a time under the shared lock, so an
// append or a seal waits for one step at most; segments that change meanwhile are only
// touched where the walk has not been.
void Engine::warm_mappings() {
  constexpr size_t kStep = size_t(16) << 20;
  const size_t page = (size_t)::sysconf(_SC_PAGESIZE);
  std::vector<unsigned char> resident(kStep / page + 1);
  volatile uint8_t sink = 0;
  for (size_t region = 0, at = 0; !closed_;) {
    std::shared_lock<std::shared_mutex> lock(mu_);
    if (closed_) return;
    const char* base = nullptr;
    size_t len = 0;
    if (region < segments_.size()) {
      const Cols& c = segments_[region]->cols();
      base = reinterpret_cast<const char*>(c.i8), len = c.n * kDims;
    } else if (region == segments_.size() && file_ && file_->centroids().size() > 0) {
      base = reinterpret_cast<const char*>(file_->code(0)), len = file_->end(file_->centroids().size() - 1) * kDims;
    } else if (region > segments_.size()) {
      return;
    }
    if (at >= len) {
      region++, at = 0;
      continue;
    }
    // mincore wants a page-aligned start; the step covers whole pages from there.
    uintptr_t from = ((uintptr_t)(base + at)) & ~(uintptr_t)(page - 1);
    size_t n = std::min(kStep, (size_t)((uintptr_t)(base + len) - from));
    if (::mincore(reinterpret_cast<void*>(from), n, resident.data()) == 0) {
      uint64_t touched = 0;
      for (size_t i = 0; i * page < n; i++)
        if (resident[i] & 1) sink = sink + *reinterpret_cast<const volatile uint8_t*>(from + i * page), touched += page;
      warmed_ += touched;
    }
    at = from + n - (uintptr_t)base;
  }
}

void Engine::open_locked() {
  std::set<std::string> live;
  std::ifstream in(join(opt_.dir, kManifest));
  std::string key, value;
  while (in >> key >> value) {
    if (key == "seq") seq_ = std::stoull(value);
    else if (key == "next_label") sealed_label_ = std::stoull(value);
    else if (key == "index_label" || key == "hnsw_label") continue;  // earlier versions' entries
    else if (key == "segment") {
      segments_.push_back(std::make_unique<Segment>(join(opt_.dir, value)));
      live.insert(value);
    } else throw std::runtime_error(join(opt_.dir, kManifest) + ": unknown entry " + key);
  }
  if (DIR* d = ::opendir(opt_.dir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      std::string name = e->d_name;
      bool seg = name.rfind("seg-", 0) == 0;
      if ((seg && !live.count(name)) || name.find(".tmp") != std::string::npos || name == "hnsw.usearch") ::unlink(join(opt_.dir, name).c_str());
    }
    ::closedir(d);
  }
  next_label_ = sealed_label_;
  // The label table sized once for every segment row (grown row by row, its copies took
  // ~0.2 s of opening 1M rows), from the label bounds each segment found at open.
  uint64_t lo = UINT64_MAX, hi = 0;
  for (auto& s : segments_)
    if (s->cols().n > 0) lo = std::min(lo, s->min_label()), hi = std::max(hi, s->cols().max_label);
  if (lo <= hi) info_.assign(hi - lo + 1, LabelInfo{kNoRow, 0, 0}), base_ = lo;
  for (size_t v = 0; v < segments_.size(); v++) {
    const Cols& c = segments_[v]->cols();
    for (size_t r = 0; r < c.n; r++) note_row(c.label[r], (uint32_t)v, (uint32_t)r);
  }
  open_index_file();
}

// The index file, if whole and consistent with the segments; otherwise every row is pending
// and the index is trained again (it is derived data).
void Engine::open_index_file() {
  std::string path = join(opt_.dir, kIndexFile);
  if (::access(path.c_str(), F_OK) != 0) return;
  try {
    auto f = std::make_unique<IndexFile>(path);
    uint64_t from = f->label_base(), to = from + f->labels();
    if (to > sealed_label_ || (from > base_ && !info_.empty() && to > base_)) throw std::runtime_error("labels");
    uint64_t filed = 0;
    for (uint64_t label = std::max(from, base_); label < to; label++) {
      uint32_t l = f->list_of()[label - from];
      uint32_t mine = list_of(label);
      if ((mine == kNoRow) != (l == kNoRow) || (l != kNoRow && l >= f->centroids().size())) throw std::runtime_error("rows");
      filed += l != kNoRow;
    }
    if (filed != f->end(f->centroids().size() - 1)) throw std::runtime_error("row count");
    for (uint64_t label = std::max(from, base_); label < to; label++)
      if (list_of(label) != kNoRow) info(label).list = f->list_of()[label - from];
    centroids_ = f->centroids();
    trained_rows_ = f->trained_rows();
    filed_to_ = saved_to_ = to;
    filed_rows_ = filed;
    file_ = std::move(f);
  } catch (const std::exception&) {
    ::unlink(path.c_str());
    for (auto& i : info_)
      if (i.list != kNoRow) i.list = kUnfiled;
    centroids_ = Centroids();
    trained_rows_ = filed_to_ = saved_to_ = filed_rows_ = 0;
    file_.reset();
  }
  seg_refs_.assign(centroids_.size(), {});
  delta_refs_.assign(centroids_.size(), {});
}

Engine::~Engine() {
  closed_ = true;
  if (warm_.joinable()) warm_.join();
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

void Engine::close() {
  std::unique_lock<std::shared_mutex> lock(mu_);
  closed_ = true;
  if (lock_fd_ >= 0) ::close(lock_fd_);
  lock_fd_ = -1;
}

void Engine::check_open() const {
  if (closed_) throw std::runtime_error("the search engine is closed");
}

void Engine::visit_labels(uint64_t from, uint64_t to, const std::function<void(const Cols&, size_t)>& fn) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  check_open();
  std::vector<Cols> views = views_locked();
  for (uint64_t label = std::max(from, base_); label < std::min(to, next_label_); label++) {
    const LabelInfo* i = info(label);
    if (i && i->list != kNoRow) fn(view_of(views, i->view), i->row);
  }
}

void Engine::note_row(uint64_t label, uint32_t view, uint32_t row) {
  if (info_.empty()) base_ = label;
  if (label < base_) {  // rare: shift the table down
    std::vector<LabelInfo> grown(info_.size() + (base_ - label), LabelInfo{kNoRow, 0, 0});
    std::copy(info_.begin(), info_.end(), grown.begin() + (base_ - label));
    info_.swap(grown);
    base_ = label;
  }
  uint64_t i = label - base_;  // append() has checked the spread
  if (i >= info_.size()) info_.resize(std::max<uint64_t>(i + 1, info_.size() * 3 / 2), LabelInfo{kNoRow, 0, 0});
  info_[i] = {kUnfiled, view, row};
  next_label_ = std::max(next_label_, label + 1);
}

uint64_t Engine::rows_locked() const {
  uint64_t n = delta_.size();
  for (auto& s : segments_) n += s->cols().n;
  return n;
}

void Engine::append(const std::vector<RowInput>& rows) {
  std::unique_lock<std::shared_mutex> lock(mu_);
  check_open();
  // Validate the whole batch before touching anything: a refused append changes nothing.
  uint64_t least = next_label_;
  uint64_t base = info_.empty() && !rows.empty() ? rows[0].label : base_;
  for (const RowInput& r : rows) {
    if (r.label < least) throw std::runtime_error("append: label " + std::to_string(r.label) + " is not new (labels must increase)");
    if (r.label - base > (uint64_t)4 * (info_.size() + rows.size()) + 1024 * 1024)
      throw std::runtime_error("append: chunk labels are too sparse for the attribute table (label " + std::to_string(r.label) + ")");
    least = r.label + 1;
  }
  for (const RowInput& r : rows) {
    note_row(r.label, kDelta, (uint32_t)delta_.size());
    delta_.append(r);
  }
}

void Engine::place_rows(uint32_t view, const Cols& c, std::vector<std::vector<Ref>>* refs) {
  for (size_t r = 0; r < c.n; r++) {
    LabelInfo& i = info(c.label[r]);
    i.view = view, i.row = (uint32_t)r;
    if (i.list < centroids_.size() && c.label[r] >= saved_to_) (*refs)[i.list].push_back(ref(view, (uint32_t)r, c.first[r]));
  }
}

void Engine::build_refs() {
  seg_refs_.assign(centroids_.size(), {});
  delta_refs_.assign(centroids_.size(), {});
  for (size_t v = 0; v < segments_.size(); v++) place_rows((uint32_t)v, segments_[v]->cols(), &seg_refs_);
  place_rows(kDelta, delta_.cols(), &delta_refs_);
}

size_t Engine::retrain() {
  // A sample spread evenly over every row, copied out so appends go on while k-means runs.
  uint64_t upto, rows;
  size_t lists;
  std::vector<int8_t> sample;
  std::vector<float> scales;
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    rows = rows_locked();
    upto = next_label_;
    lists = opt_.lists ? opt_.lists : default_lists(rows);
    size_t want = std::min<uint64_t>(rows, kSamplePerList * lists);
    sample.resize(want * kDims);
    scales.resize(want);
    std::vector<Cols> views = views_locked();
    uint64_t i = 0, taken = 0;
    for (const Cols& c : views)
      for (size_t r = 0; r < c.n; r++, i++)
        // Row i is taken when it crosses the next multiple of rows / want.
        if (taken < want && (i * want) / rows != ((i + 1) * want) / rows) {
          std::memcpy(sample.data() + taken * kDims, c.i8 + r * kDims, kDims);
          scales[taken++] = c.scale[r];
        }
    sample.resize(taken * kDims);
    scales.resize(taken);
  }
  std::vector<const int8_t*> ptrs(scales.size());
  for (size_t i = 0; i < ptrs.size(); i++) ptrs[i] = sample.data() + i * kDims;
  Centroids centroids = Centroids::train(ptrs, scales, lists, kTrainRounds, 0x5eed + rows, *pool_);
  std::vector<int8_t>().swap(sample);
  // File every row held now against the new centroids, a batch at a time.
  std::vector<uint32_t> fresh(upto > base_ ? upto - base_ : 0, kNoRow);
  size_t filed = 0;
  std::vector<int8_t> codes(kFileBatch * kDims);
  std::vector<const int8_t*> batch;
  std::vector<uint64_t> labels;
  std::vector<uint32_t> out(kFileBatch);
  size_t nviews;
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    nviews = segments_.size() + 1;
  }
  for (size_t v = 0; v < nviews; v++) {
    for (size_t at = 0;;) {
      batch.clear();
      labels.clear();
      {
        std::shared_lock<std::shared_mutex> lock(mu_);
        std::vector<Cols> views = views_locked();
        const Cols& c = views[v];
        for (; at < c.n && batch.size() < kFileBatch; at++) {
          if (c.label[at] >= upto) continue;
          std::memcpy(codes.data() + batch.size() * kDims, c.i8 + at * kDims, kDims);
          batch.push_back(codes.data() + batch.size() * kDims);
          labels.push_back(c.label[at]);
        }
      }
      if (batch.empty()) break;
      centroids.assign(batch, out.data(), *pool_);
      for (size_t i = 0; i < batch.size(); i++) fresh[labels[i] - base_] = out[i];
      filed += batch.size();
    }
  }
  std::unique_lock<std::shared_mutex> lock(mu_);
  centroids_ = std::move(centroids);
  trained_rows_ = rows;
  for (uint64_t label = base_; label < upto; label++)
    if (list_of(label) != kNoRow) info(label).list = fresh[label - base_];
  filed_to_ = upto;
  filed_rows_ = filed;
  // The file's lists belong to the old centroids: every row is a ref until the next save.
  file_.reset();
  saved_to_ = 0;
  ::unlink(join(opt_.dir, kIndexFile).c_str());
  build_refs();
  return filed;
}

size_t Engine::index_pending(size_t max) {
  std::lock_guard<std::mutex> m(maintenance_);
  check_open();
  bool train;
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    uint64_t rows = rows_locked();
    bool trained = centroids_.size() > 0;
    train = trained ? rows >= 4 * trained_rows_ : rows >= std::max<uint64_t>(1, opt_.index_min_rows);
    if (!train && (!trained || filed_to_ >= next_label_)) return 0;
  }
  if (train) return retrain();
  size_t filed = 0;
  std::vector<int8_t> codes(kFileBatch * kDims);
  std::vector<const int8_t*> batch;
  std::vector<Ref> refs;
  std::vector<uint64_t> labels;
  std::vector<uint32_t> out(kFileBatch);
  while (filed < max) {
    uint64_t from, to;
    batch.clear(), refs.clear(), labels.clear();
    {
      std::shared_lock<std::shared_mutex> lock(mu_);
      from = filed_to_;
      to = std::min<uint64_t>(next_label_, from + std::min<uint64_t>(kFileBatch, max - filed));
      if (from >= to) break;
      // Pending rows are mostly the delta's newest (labels ascending there); after a restart
      // they may be in segments too.
      Cols d = delta_.cols();
      size_t r = (size_t)(std::lower_bound(d.label, d.label + d.n, from) - d.label);
      for (; r < d.n && d.label[r] < to; r++) refs.push_back(ref(kDelta, (uint32_t)r, d.first[r])), labels.push_back(d.label[r]);
      for (size_t v = 0; v < segments_.size(); v++) {
        const Cols& c = segments_[v]->cols();
        if (c.max_label < from) continue;
        for (size_t x = 0; x < c.n; x++)
          if (c.label[x] >= from && c.label[x] < to) refs.push_back(ref((uint32_t)v, (uint32_t)x, c.first[x])), labels.push_back(c.label[x]);
      }
      std::vector<Cols> views = views_locked();
      for (size_t i = 0; i < refs.size(); i++) {
        std::memcpy(codes.data() + i * kDims, view_of(views, refs[i].view()).i8 + (size_t)refs[i].row * kDims, kDims);
        batch.push_back(codes.data() + i * kDims);
      }
    }
    if (!batch.empty()) centroids_.assign(batch, out.data(), *pool_);
    std::unique_lock<std::shared_mutex> lock(mu_);
    // Seals and compactions wait for this call (the maintenance mutex): the refs still hold.
    std::set<uint32_t> touched;
    for (size_t i = 0; i < refs.size(); i++) {
      info(labels[i]).list = out[i];
      if (refs[i].view() == kDelta) delta_refs_[out[i]].push_back(refs[i]);
      else seg_refs_[out[i]].push_back(refs[i]), touched.insert(out[i]);
    }
    // Segment refs stay in row order, so a list is read in address order.
    for (uint32_t l : touched)
      std::sort(seg_refs_[l].begin(), seg_refs_[l].end(), [](Ref a, Ref b) { return a.view() < b.view() || (a.view() == b.view() && a.row < b.row); });
    filed_to_ = to;
    filed_rows_ += refs.size();
    filed += refs.size();
  }
  return filed;
}

void Engine::write_manifest_locked() {
  std::ostringstream m;
  m << "seq " << seq_ << "\nnext_label " << sealed_label_ << "\n";
  for (auto& s : segments_) {
    std::string p = s->path();
    m << "segment " << p.substr(p.find_last_of('/') + 1) << "\n";
  }
  std::string path = join(opt_.dir, kManifest), tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << m.str();
    out.flush();
    if (!out) throw std::runtime_error("write " + tmp);
  }
  int fd = ::open(tmp.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) ::fsync(fd), ::close(fd);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw std::runtime_error("rename " + tmp);
  fsync_dir(opt_.dir);
}

void Engine::seal() {
  std::lock_guard<std::mutex> m(maintenance_);
  check_open();
  std::string name;
  size_t n;
  {
    // Appends wait while the file is written; queries go on.
    std::shared_lock<std::shared_mutex> lock(mu_);
    n = delta_.size();
    if (n == 0) return;
    name = segment_name(seq_ + 1);
    delta_.write_sorted(join(opt_.dir, name));
  }
  auto seg = std::make_unique<Segment>(join(opt_.dir, name));
  std::unique_lock<std::shared_mutex> lock(mu_);
  // Rows appended between the write and this lock stay in the delta.
  RowBuffer rest;
  Cols c = delta_.cols();
  uint64_t top = 0;
  for (size_t r = 0; r < n; r++) top = std::max(top, c.label[r] + 1);
  for (size_t r = n; r < c.n; r++) rest.append_from(c, r);
  delta_ = std::move(rest);
  segments_.push_back(std::move(seg));
  // The moved rows' places, and their refs (filing waits on the maintenance mutex).
  place_rows((uint32_t)segments_.size() - 1, segments_.back()->cols(), &seg_refs_);
  for (auto& l : delta_refs_) l.clear();
  place_rows(kDelta, delta_.cols(), &delta_refs_);
  seq_++;
  sealed_label_ = std::max(sealed_label_, top);
  write_manifest_locked();
}

void Engine::compact() {
  std::lock_guard<std::mutex> m(maintenance_);
  check_open();
  std::string name;
  size_t merged;
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    merged = segments_.size();
    if (merged < 2) return;
    RowBuffer all;
    for (auto& s : segments_) {
      const Cols& c = s->cols();
      for (size_t r = 0; r < c.n; r++) all.append_from(c, r);
    }
    name = segment_name(seq_ + 1);
    all.write_sorted(join(opt_.dir, name));
  }
  auto seg = std::make_unique<Segment>(join(opt_.dir, name));
  // Seals wait for this call, so every segment is merged and the merged one is the only one.
  std::vector<std::string> old;
  {
    std::unique_lock<std::shared_mutex> lock(mu_);
    for (size_t i = 0; i < merged; i++) old.push_back(segments_[i]->path());
    segments_.clear();
    segments_.push_back(std::move(seg));
    for (auto& l : seg_refs_) l.clear();
    place_rows(0, segments_[0]->cols(), &seg_refs_);
    seq_++;
    write_manifest_locked();
  }
  for (auto& p : old) ::unlink(p.c_str());
}

void Engine::save_index() {
  std::lock_guard<std::mutex> m(maintenance_);
  check_open();
  // The file takes every filed row of the segments (the delta's rows are not durable yet):
  // the rows of the old file and the refs since, list by list. Segments and the old file do
  // not change while the maintenance mutex is held; appends go on (they touch the delta only).
  uint64_t upto;
  std::vector<uint32_t> lists_of;
  std::vector<std::vector<Ref>> refs;
  std::vector<Cols> views;
  Centroids centroids;
  uint64_t label_base, trained;
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    upto = std::min(filed_to_, sealed_label_);
    if (centroids_.size() == 0 || upto <= saved_to_) return;
    label_base = base_;
    lists_of.resize(upto > base_ ? upto - base_ : 0);
    for (size_t i = 0; i < lists_of.size(); i++) lists_of[i] = info_[i].list;
    refs = seg_refs_;
    views = views_locked();
    centroids = centroids_;
    trained = trained_rows_;
  }
  size_t nl = centroids.size();
  // A list's rows of first revisions go first (IndexFile): the file's, then the new ones; then
  // the file's others and the new others.
  std::vector<uint64_t> counts(nl), firsts(nl), new_firsts(nl);
  for (size_t l = 0; l < nl; l++) {
    new_firsts[l] = std::stable_partition(refs[l].begin(), refs[l].end(), [](Ref x) { return x.first(); }) - refs[l].begin();
    counts[l] = (file_ ? file_->end(l) - file_->begin(l) : 0) + refs[l].size();
    firsts[l] = (file_ ? file_->first_end(l) - file_->begin(l) : 0) + new_firsts[l];
  }
  // The rows new to the file get their rounding error measured, list by list on every thread.
  std::vector<std::vector<float>> errs(nl);
  pool_->run(nl, [&](size_t l) {
    errs[l].resize(refs[l].size());
    for (size_t j = 0; j < refs[l].size(); j++) {
      const Cols& c = view_of(views, refs[l][j].view());
      size_t r = refs[l][j].row;
      errs[l][j] = code_error(c.f16 + r * kDims, c.i8 + r * kDims, c.scale[r]);
    }
  });
  std::string path = join(opt_.dir, kIndexFile);
  IndexFile::write(path, centroids, trained, label_base, lists_of.data(), lists_of.size(), counts, firsts,
                   [&](size_t l, size_t i, const int8_t** code, IndexRec* rec) {
                     uint64_t old = file_ ? file_->end(l) - file_->begin(l) : 0, old_first = file_ ? file_->first_end(l) - file_->begin(l) : 0;
                     uint64_t nf = new_firsts[l];
                     auto from_file = [&](uint64_t j) {
                       *code = file_->code(file_->begin(l) + j);
                       *rec = file_->rec(file_->begin(l) + j);
                     };
                     // Row i: the file's first revisions, the new ones, the file's others, the new others.
                     if (i < old_first) return from_file(i);
                     if (i >= old_first + nf && i < old + nf) return from_file(i - nf);
                     uint64_t j = i < old_first + nf ? i - old_first : i - old;
                     Ref x = refs[l][j];
                     const Cols& c = view_of(views, x.view());
                     *code = c.i8 + (size_t)x.row * kDims;
                     *rec = {c.label[x.row], c.ord[x.row], c.time[x.row], c.scale[x.row], c.source[x.row] | (c.first[x.row] ? 0x80000000u : 0u),
                             errs[l][j], 0};
                   });
  auto f = std::make_unique<IndexFile>(path);
  std::unique_lock<std::shared_mutex> lock(mu_);
  file_ = std::move(f);
  saved_to_ = upto;
  // Every segment row filed is in the file now; only the delta's refs remain.
  for (auto& l : seg_refs_) l.clear();
}

std::vector<Cols> Engine::views_locked() const {
  std::vector<Cols> v;
  for (auto& s : segments_) v.push_back(s->cols());
  v.push_back(delta_.cols());
  return v;
}

std::vector<RangeResult> Engine::range(const std::vector<RangeQuery>& queries) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  check_open();
  return range_batch(views_locked(), queries, *pool_);
}

std::vector<Hit> Engine::topk(const float* q, size_t k, float min_score, const Filter& f) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  check_open();
  return topk_scan(views_locked(), q, k, min_score, f, *pool_);
}

std::vector<Hit> Engine::topk_index(const float* q, size_t k, float min_score, const Filter& f, const TopkOptions& o, bool* complete,
                                    bool* far, ProbeStats* ps) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  check_open();
  *complete = false;
  *far = false;
  size_t nc = centroids_.size();
  if (nc == 0 || k == 0) return {};
  const Kernels& K = kernels();
  std::vector<Cols> views = views_locked();
  Prepared p;
  prepare(q, &p);
  std::vector<float> cs(nc);
  centroids_.score(p, cs.data());
  // The lists nearest first: a query reads a few, so only the first 32 are put in order until
  // more are asked for (`at`).
  std::vector<uint32_t> order(nc);
  std::iota(order.begin(), order.end(), 0);
  auto nearer = [&](uint32_t a, uint32_t b) { return cs[a] > cs[b] || (cs[a] == cs[b] && a < b); };
  size_t sorted = std::min<size_t>(nc, 32);
  std::partial_sort(order.begin(), order.begin() + sorted, order.end(), nearer);
  auto at = [&](size_t i) {
    if (i >= sorted) std::sort(order.begin() + sorted, order.end(), nearer), sorted = nc;
    return order[i];
  };
  auto list_rows = [&](uint32_t l) { return (uint64_t)(seg_refs_[l].size() + delta_refs_[l].size()) + (file_ ? file_->end(l) - file_->begin(l) : 0); };
  uint64_t rows = rows_locked();
  uint64_t max_rows = o.probe_max_rows ? o.probe_max_rows : std::max<uint64_t>(30000, rows * 3 / 100);
  // Far from every list: nothing to steer by, so the caller scans everything.
  if (cs[order[0]] < o.far_score) return *far = true, std::vector<Hit>{};
  // The lists to read: those within probe_delta of the best, and on until probe_min_rows
  // allowed rows are read (where the geometry is less clustered than probe_delta assumes, or a
  // filter thins the lists, a top-k spans more lists).
  uint64_t min_rows = o.probe_min_rows ? o.probe_min_rows : std::max<uint64_t>(64 * k, 4 * rows / nc);
  size_t within = 0;
  uint64_t within_rows = 0;
  while (within < nc && cs[at(within)] >= cs[order[0]] - o.probe_delta) within_rows += list_rows(order[within++]);
  // Too many rows about as near as the nearest: nothing to steer by, so the caller scans.
  if (within_rows > max_rows) return *far = true, std::vector<Hit>{};

  bool any = filtered(f), first_only = f.first_only && f.tmin == INT64_MIN && f.tmax == INT64_MAX && f.sources.empty();
  // One thread's part of the sweep: its candidates, what it read, and the allowed rows it has
  // in hand four at a time (the kernel has four rows' loads in flight).
  struct Sweep {
    explicit Sweep(Candidates c) : cand(std::move(c)) {}
    Candidates cand;
    ProbeStats st;
    const int8_t* sel[4];
    float scale[4], errs[4];
    uint64_t ords[4], labels[4];
    size_t m = 0;
    uint64_t counted = 0;  // of st.allowed, what the hand-out below has counted
  };
  auto flush = [&](Sweep& w) {
    if (w.m == 0) return;
    int32_t dots[4];
    for (size_t i = w.m; i < 4; i++) w.sel[i] = w.sel[w.m - 1];
    K.dot_i8_4x1(w.sel, p.code, p.sum, kDims, dots);
    for (size_t i = 0; i < w.m; i++) {
      // A saved row's measured rounding error bounds its term too (errs: +inf for the others).
      float a = w.scale[i] * p.scale * (float)dots[i], e = std::min(w.scale[i] * p.half_l1, w.errs[i] * p.code_norm) + p.fixed;
      if (a + e < w.cand.floor()) continue;
      // A candidate: its codes against the query's rounding (in cache now) take almost all of
      // the query's rounding out of the bound, so fewer rows reach the f16 rescoring.
      a = refined(w.scale[i], p, dots[i], K.dot_i8(w.sel[i], p.code2, p.sum2, kDims)), e = refined_bound(w.scale[i], w.errs[i], p);
      w.cand.add(w.ords[i], w.labels[i], a - e, a + e);
    }
    w.m = 0;
  };
  auto take = [&](Sweep& w, const int8_t* code, float s, uint64_t ord, uint64_t label, float err) {
    w.st.allowed++;
    size_t m = w.m;
    w.sel[m] = code, w.scale[m] = s, w.ords[m] = ord, w.labels[m] = label, w.errs[m] = err;
    if (++w.m == 4) flush(w);
  };
  // Saved rows [b, e) of one list: stored together, read in one sequential sweep.
  auto saved_rows = [&](Sweep& w, uint64_t b, uint64_t e) {
    auto allowed = [&](const IndexRec& r) {
      return first_only ? r.first()
                        : !any || (r.time >= f.tmin && r.time <= f.tmax && (!f.first_only || r.first()) && source_allowed(f, r.source()) && label_allowed(f, r.label));
    };
    // Codes asked for 8 rows (two pages) ahead, the hardware's stream prefetch stopping at
    // each 4 KB page (four rows); only an allowed row's, so a query for first revisions does
    // not pull in the edits' codes it skips. Each row's verdict is kept from then on.
    constexpr uint64_t kAhead = 8;
    bool ok[kAhead];
    auto ask = [&](uint64_t i) {
      bool a = allowed(file_->rec(i));
      ok[i % kAhead] = a;
      if (a)
        for (size_t o = 0; o < kDims; o += 64) __builtin_prefetch(file_->code(i) + o);
    };
    for (uint64_t i = b; i < std::min(e, b + kAhead); i++) ask(i);
    for (uint64_t i = b; i < e; i++) {
      bool a = ok[i % kAhead];
      if (i + kAhead < e) ask(i + kAhead);
      if (!a) continue;
      const IndexRec& r = file_->rec(i);
      take(w, file_->code(i), r.scale, r.ord, r.label, r.err);
    }
  };
  // A query for first revisions only reads a list's first part in the file (IndexFile).
  auto saved_end = [&](uint32_t l) { return f.first_only ? file_->first_end(l) : file_->end(l); };
  // Rows of list l filed since the file was saved: scattered over the columns, so each is
  // asked for a few rows ahead (not an edit's when only first revisions are wanted).
  auto filed_rows = [&](Sweep& w, uint32_t l) {
    for (const auto* refs : {&seg_refs_[l], &delta_refs_[l]}) {
      size_t n = refs->size();
      for (size_t j = 0; j < n; j++) {
        if (j + 6 < n) {
          Ref ahead = (*refs)[j + 6];
          if (!first_only || ahead.first()) {
            const int8_t* a = view_of(views, ahead.view()).i8 + (size_t)ahead.row * kDims;
            for (size_t o = 0; o < kDims; o += 64) __builtin_prefetch(a + o);
          }
        }
        Ref x = (*refs)[j];
        const Cols& c = view_of(views, x.view());
        if (first_only ? !x.first() : any && !row_allowed(c, x.row, f)) continue;
        take(w, c.i8 + (size_t)x.row * kDims, c.scale[x.row], c.ord[x.row], c.label[x.row], INFINITY);
      }
    }
  };
  std::vector<uint8_t> listed(nc);
  auto read_list = [&](Sweep& w, uint32_t l) {
    w.st.lists++;
    w.st.rows += list_rows(l);
    listed[l] = 1;
    if (file_) saved_rows(w, file_->begin(l), saved_end(l));
    filed_rows(w, l);
    flush(w);
  };
  // The first lists: those within probe_delta of the best, and on until probe_min_rows allowed
  // rows are read. They are handed out a piece at a time (a run of saved rows, or a list's rows
  // filed since) to every thread this query may use: a lone query (o.threads > 1, nothing else
  // running) spreads its sweep over all cores. A list is opened when the pieces before it are
  // handed out, on the allowed rows counted so far: on one thread exactly as it reads them;
  // with more, another's piece in hand may not be counted yet, and a list more may be read.
  std::atomic<float> shared_floor{min_score};
  size_t threads = std::max<size_t>(1, std::min(o.threads, pool_->width()));
  // Task 0's sweep (the only one on one thread); the others' are merged into it.
  Sweep lead(Candidates(k, min_score, threads > 1 ? &shared_floor : nullptr));
  constexpr uint64_t kPiece = 256;
  struct Piece {
    uint32_t list;
    uint64_t b, e;  // saved rows, or (b == e) the list's rows filed since
  };
  std::mutex hand_out;
  size_t next = 0;
  uint64_t counted = 0;
  uint32_t cur = 0;
  uint64_t cur_b = 0, cur_e = 0;
  bool cur_filed = false;
  auto give = [&](Sweep& w, Piece* piece) {
    std::lock_guard<std::mutex> lock(hand_out);
    counted += w.st.allowed - w.counted, w.counted = w.st.allowed;
    for (;;) {
      if (cur_b < cur_e) {
        *piece = {cur, cur_b, std::min(cur_e, cur_b + kPiece)};
        cur_b = piece->e;
        return true;
      }
      if (cur_filed) {
        cur_filed = false;
        *piece = {cur, 0, 0};
        return true;
      }
      // The lists opened and their rows are counted here, in the lead's stats, as read_list does.
      if (!(next < nc && (next < within || counted < min_rows) && lead.st.rows < max_rows)) return false;
      cur = at(next++);
      listed[cur] = 1;
      lead.st.lists++, lead.st.rows += list_rows(cur);
      cur_b = file_ ? file_->begin(cur) : 0, cur_e = file_ ? saved_end(cur) : 0;
      cur_filed = seg_refs_[cur].size() + delta_refs_[cur].size() > 0;
    }
  };
  auto sweep = [&](Sweep& w) {
    for (Piece piece; give(w, &piece);) {
      if (piece.b < piece.e) saved_rows(w, piece.b, piece.e);
      else filed_rows(w, piece.list);
    }
    flush(w);
  };
  if (threads == 1) {
    sweep(lead);
  } else {
    std::vector<std::unique_ptr<Sweep>> others;
    for (size_t t = 1; t < threads; t++) others.push_back(std::make_unique<Sweep>(Candidates(k, min_score, &shared_floor)));
    pool_->run(threads, [&](size_t t) { sweep(t == 0 ? lead : *others[t - 1]); });
    for (auto& w : others) lead.cand.merge(w->cand), lead.st.allowed += w->st.allowed;
  }
  lead.st.threads = threads;
  Candidates& cand = lead.cand;
  ProbeStats& st = lead.st;
  // Rows not yet filed are scanned exactly beside the lists (labels at or above the mark).
  std::vector<Hit> pending;
  st.pending = rows - filed_rows_;
  if (st.pending > 0) pending = topk_scan(views, q, k, min_score, f, *pool_, RowSet{filed_to_});
  // Rescoring, row by row in order of upper bound: each row scored exactly in f16 raises its
  // revision's score, and once the next upper bound is below both the floor and the k-th best
  // revision so far, no row after it can change the top k. A revision with a row scored may
  // have rows in lists not read (its chunks are filed apart): those are scored too, so every
  // revision returned is scored over all its rows that could be its best.
  FlatMap<float> by_label(512);  // rows scored in f16, kept across calls
  auto exact_row = [&](const Cols& c, size_t r) {
    if (const float* s = by_label.find(c.label[r])) return *s;
    st.rescored++;
    return *by_label.try_emplace(c.label[r], K.dot_f16_f32(c.f16 + r * kDims, q, kDims)).first;
  };
  auto result = [&]() {
    cand.prune();
    const auto& entries = cand.entries();
    // Highest bound first; the walk below stops after a fraction of the rows.
    std::vector<std::pair<float, uint32_t>> by_hi(entries.size());
    for (uint32_t i = 0; i < entries.size(); i++) by_hi[i] = {entries[i].hi, i};
    std::sort(by_hi.begin(), by_hi.end(), [&](const auto& a, const auto& b) {
      return a.first > b.first || (a.first == b.first && entries[a.second].label < entries[b.second].label);
    });
    BestRevisions top(k);
    for (const Hit& h : pending) top.raise(h.ord, h.score);
    struct Rev {
      Hit best;
      const Cols* c;
      size_t row;
    };
    FlatMap<Rev> revs(256);
    auto note = [&](uint64_t ord, const Cols& c, size_t r, float s) {
      auto [rev, fresh] = revs.try_emplace(ord, Rev{Hit{ord, c.label[r], s}, &c, r});
      Hit& b = rev->best;
      // Ties go to the lower label, as a scan scoring the revision's rows in order picks.
      if (!fresh && (s > b.score || (s == b.score && c.label[r] < b.label))) b.score = s, b.label = c.label[r];
      top.raise(ord, s);
    };
    auto where = [&](uint64_t label) -> std::pair<const Cols*, size_t> {
      const LabelInfo* i = info(label);
      return {&view_of(views, i->view), i->row};
    };
    // The rows are scattered: a row's place (its label's entry) is asked for 16 rows ahead and
    // its f16 vector 4 ahead, so the walk waits on neither.
    float fl = cand.floor();
    for (size_t j = 0; j < by_hi.size(); j++) {
      const Candidates::Entry& e = entries[by_hi[j].second];
      if (e.hi < fl || e.hi < top.floor()) break;
      if (j + 16 < by_hi.size()) __builtin_prefetch(info(entries[by_hi[j + 16].second].label));
      if (j + 4 < by_hi.size()) {
        auto [c, r] = where(entries[by_hi[j + 4].second].label);
        prefetch_f16(c->f16 + r * kDims);
      }
      // A row below its revision's best score so far cannot change that revision's answer.
      if (const Rev* rev = revs.find(e.ord); rev && e.hi < rev->best.score) continue;
      auto [c, r] = where(e.label);
      note(e.ord, *c, r, exact_row(*c, r));
    }
    // The rows of those revisions in lists not read (rows not yet filed are the pending scan's),
    // each revision's row range asked for a few revisions ahead.
    std::vector<Rev*> touched;
    touched.reserve(revs.size());
    revs.each([&](uint64_t, Rev& rev) { touched.push_back(&rev); });
    for (size_t t = 0; t < touched.size(); t++) {
      if (t + 4 < touched.size()) {
        const Rev& a = *touched[t + 4];
        __builtin_prefetch(&a.c->ord[a.row]);
        __builtin_prefetch(info(a.c->label[a.row]));
      }
      const Rev& rev = *touched[t];
      const Cols& c = *rev.c;
      uint64_t ord = rev.best.ord;
      size_t lo = rev.row, hi = rev.row + 1;
      while (lo > 0 && c.ord[lo - 1] == ord) lo--;
      while (hi < c.n && c.ord[hi] == ord) hi++;
      for (size_t x = lo; x < hi; x++) {
        const LabelInfo* i = info(c.label[x]);
        if (!i || i->list >= nc || listed[i->list] || !label_allowed(f, c.label[x])) continue;
        note(ord, c, x, exact_row(c, x));
      }
    }
    FlatMap<Hit> by_ord(revs.size() + pending.size());
    revs.each([&](uint64_t ord, Rev& rev) {
      if (rev.best.score >= min_score) by_ord.try_emplace(ord, rev.best);
    });
    for (const Hit& h : pending) {
      auto [have, fresh] = by_ord.try_emplace(h.ord, h);
      if (!fresh && better(h, *have)) *have = h;
    }
    std::vector<Hit> hits;
    hits.reserve(by_ord.size());
    by_ord.each([&](uint64_t, Hit& h) { hits.push_back(h); });
    std::sort(hits.begin(), hits.end(), better);
    if (hits.size() > k) hits.resize(k);
    return hits;
  };
  std::vector<Hit> hits = result();
  // Short of k (a selective filter, a high min_score): read further lists, nearest first, a
  // few at a time, while the row budget lasts.
  while (hits.size() < k && next < nc && st.rows < max_rows) {
    for (size_t stop = std::min(nc, next + 8); next < stop; next++) read_list(lead, at(next));
    hits = result();
  }
  // Every list read (the rest are empty): the answer is exact.
  while (next < nc && list_rows(at(next)) == 0) next++;
  *complete = hits.size() >= k || next == nc;
  if (ps) *ps = st;
  return hits;
}

std::vector<Hit> Engine::topk_planned(const float* q, size_t k, float min_score, const Filter& f, const TopkOptions& o, Plan* plan,
                                       ProbeStats* ps, bool* defer) const {
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    check_open();
    std::vector<Cols> views = views_locked();
    if (centroids_.size() == 0 || estimate_allowed(views, f) <= o.scan_max_rows) {
      *plan = Plan::Scan;
      return topk_scan(views, q, k, min_score, f, *pool_);
    }
  }
  bool complete = false, far = false;
  std::vector<Hit> hits = topk_index(q, k, min_score, f, o, &complete, &far, ps);
  if (complete && !far) {
    *plan = Plan::Index;
    return hits;
  }
  *plan = far ? Plan::ScanFar : Plan::IndexThenScan;
  if (defer) return *defer = true, std::vector<Hit>{};
  return topk(q, k, min_score, f);
}

std::vector<Engine::TopkAnswer> Engine::topk_many(const std::vector<TopkRequest>& requests) const {
  std::vector<TopkAnswer> out(requests.size());
  // A lone query with the pool idle sweeps its lists on every thread (a serial caller's
  // latency). Under load, queries come in batches or beside other work: each then takes one
  // thread, as splitting costs more CPU in all than it saves in wall time.
  size_t threads = requests.size() == 1 && pool_->busy() == 0 ? pool_->width() : 1;
  // Full scans (asked for, or planned: far queries, an index short of k) wait until the rest
  // are answered, then share one pass over the rows: each row read once for all of them.
  std::vector<char> full(requests.size(), 0);
  pool_->run(requests.size(), [&](size_t i) {
    const TopkRequest& r = requests[i];
    TopkAnswer& a = out[i];
    TopkOptions o = r.options;
    o.threads = threads;
    bool defer = false;
    if (r.mode == Mode::Scan) defer = true;
    else if (r.mode == Mode::Index) a.hits = topk_index(r.q, r.k, r.min_score, r.filter, o, &a.complete, &a.far, &a.probe);
    else a.hits = topk_planned(r.q, r.k, r.min_score, r.filter, o, &a.plan, &a.probe, &defer);
    full[i] = defer;
  });
  std::vector<size_t> scans;
  for (size_t i = 0; i < requests.size(); i++)
    if (full[i]) scans.push_back(i);
  if (scans.size() == 1) {
    const TopkRequest& r = requests[scans[0]];
    out[scans[0]].hits = topk(r.q, r.k, r.min_score, r.filter);
  } else if (scans.size() > 1) {
    std::vector<TopkQuery> qs;
    for (size_t i : scans) qs.push_back({requests[i].q, requests[i].k, requests[i].min_score, &requests[i].filter});
    std::shared_lock<std::shared_mutex> lock(mu_);
    check_open();
    std::vector<std::vector<Hit>> hits = topk_scan_batch(views_locked(), qs, *pool_);
    for (size_t j = 0; j < scans.size(); j++) out[scans[j]].hits = std::move(hits[j]);
  }
  return out;
}

uint64_t Engine::count(const Filter& f) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  check_open();
  return count_allowed(views_locked(), f);
}

uint64_t Engine::estimate(const Filter& f) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  check_open();
  return estimate_allowed(views_locked(), f);
}

EngineStats Engine::stats() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  EngineStats s;
  s.segments = segments_.size();
  for (auto& seg : segments_) s.segment_rows += seg->cols().n;
  s.delta_rows = delta_.size();
  s.index_lists = centroids_.size();
  uint64_t rows = s.segment_rows + s.delta_rows;
  uint64_t pending = rows - filed_rows_;
  bool waiting = s.index_lists > 0 || rows >= opt_.index_min_rows;
  s.index_pending = waiting ? pending : 0;
  s.index_rows = filed_rows_;
  s.index_saved = saved_to_;
  s.trained_rows = trained_rows_;
  s.next_label = next_label_;
  s.threads = pool_->width();
  s.isa = kernels().isa;
  s.warmed_bytes = warmed_;
  s.warm_done = warm_done_;
  return s;
}

}  // namespace nm
