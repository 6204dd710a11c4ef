#include "engine.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <numeric>
#include <set>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

#include "kernels.h"
#include "pool.h"

namespace nm {

namespace {

const char* kManifest = "manifest";
const char* kIndexFile = "index.nmi";
constexpr char kIndexMagic[8] = {'N', 'M', 'I', 'V', 'F', '0', '1', '\0'};
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

// The index file: a header, the centroids, then one list id per label from `label_base`
// (kNoRow for a label without a row). It is derived: a missing or damaged one is rebuilt.
struct IndexHeader {
  char magic[8];
  uint32_t version;
  uint32_t dims;
  uint64_t trained_rows;
  uint64_t label_base;
  uint64_t labels;
};

// Candidates of an index scan, one entry per revision: bounds on its score from the int8 pass
// and a row to rescore it from. The k-th largest lower bound is a floor no revision below can
// enter the top k over; it is recomputed as the table doubles.
class Candidates {
 public:
  Candidates(size_t k, float min_score) : k_(k), floor_(min_score), min_score_(min_score), recompute_at_(std::max<size_t>(64, 2 * k)) {}
  float floor() const { return floor_; }
  void add(uint64_t ord, uint32_t view, uint32_t row, float lo, float hi) {
    if (hi < floor_) return;
    auto [it, fresh] = by_ord_.try_emplace(ord, Entry{lo, hi, view, row});
    if (!fresh) {
      it->second.lo = std::max(it->second.lo, lo);
      if (hi > it->second.hi) it->second.hi = hi, it->second.view = view, it->second.row = row;
    }
    if (by_ord_.size() >= recompute_at_) {
      refloor();
      recompute_at_ = std::max(recompute_at_, 2 * by_ord_.size());
    }
  }
  void refloor() {
    if (by_ord_.size() < k_) return;
    std::vector<float> lo;
    lo.reserve(by_ord_.size());
    for (auto& e : by_ord_) lo.push_back(e.second.lo);
    std::nth_element(lo.begin(), lo.begin() + (k_ - 1), lo.end(), std::greater<float>());
    floor_ = std::max(floor_, lo[k_ - 1]);
    for (auto it = by_ord_.begin(); it != by_ord_.end();) it = it->second.hi < floor_ ? by_ord_.erase(it) : std::next(it);
  }
  struct Entry {
    float lo, hi;
    uint32_t view, row;
  };
  const std::unordered_map<uint64_t, Entry>& entries() const { return by_ord_; }

 private:
  size_t k_;
  float floor_, min_score_;
  size_t recompute_at_;
  std::unordered_map<uint64_t, Entry> by_ord_;
};

}  // namespace

// Manifest: "seq N", "next_label N", "index_label N" (labels below it are filed in the index
// file), and one "segment NAME" line per live segment. Files it does not name are leftovers
// of an interrupted seal or compaction and are deleted at open.
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
}

void Engine::open_locked() {
  std::set<std::string> live;
  std::ifstream in(join(opt_.dir, kManifest));
  std::string key, value;
  uint64_t index_label = 0;
  while (in >> key >> value) {
    if (key == "seq") seq_ = std::stoull(value);
    else if (key == "next_label") sealed_label_ = std::stoull(value);
    else if (key == "index_label") index_label = std::stoull(value);
    else if (key == "hnsw_label") continue;  // the graph index of earlier versions: its file is deleted below
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
  for (auto& s : segments_) {
    const Cols& c = s->cols();
    for (size_t r = 0; r < c.n; r++) note_row(c.label[r]);
  }
  if (index_label == 0) return;
  // The index file, if whole and consistent with the segments; otherwise every row is pending
  // and the index is trained again.
  std::string path = join(opt_.dir, kIndexFile);
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return;
  try {
    IndexHeader h;
    if (std::fread(&h, sizeof h, 1, f) != 1 || std::memcmp(h.magic, kIndexMagic, 8) != 0 || h.version != 1 || h.dims != kDims)
      throw std::runtime_error("header");
    Centroids c = Centroids::read(f, path);
    std::vector<uint32_t> lists(h.labels);
    if (std::fread(lists.data(), 4, h.labels, f) != h.labels) throw std::runtime_error("truncated");
    uint64_t upto = std::min(index_label, next_label_);
    if ((h.label_base > base_ && upto > base_ && !list_of_.empty()) || upto > h.label_base + h.labels) throw std::runtime_error("labels");
    for (uint64_t label = std::max(base_, h.label_base); label < upto; label++) {
      uint32_t l = lists[label - h.label_base];
      uint32_t& mine = list_of(label);
      if ((mine == kNoRow) != (l == kNoRow) || (l != kNoRow && l >= c.size())) throw std::runtime_error("rows");
      mine = l;
      filed_rows_ += l != kNoRow;
    }
    centroids_ = std::move(c);
    trained_rows_ = h.trained_rows;
    filed_to_ = saved_to_ = upto;
  } catch (const std::exception&) {
    for (auto& l : list_of_)
      if (l != kNoRow) l = kUnfiled;
    centroids_ = Centroids();
    trained_rows_ = filed_to_ = saved_to_ = filed_rows_ = 0;
  }
  std::fclose(f);
  build_lists(&seg_lists_, &delta_lists_);
}

Engine::~Engine() {
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

void Engine::note_row(uint64_t label) {
  if (list_of_.empty()) base_ = label;
  if (label < base_) {  // rare: shift the table down
    std::vector<uint32_t> grown(list_of_.size() + (base_ - label), kNoRow);
    std::copy(list_of_.begin(), list_of_.end(), grown.begin() + (base_ - label));
    list_of_.swap(grown);
    base_ = label;
  }
  uint64_t i = label - base_;  // append() has checked the spread
  if (i >= list_of_.size()) list_of_.resize(std::max<uint64_t>(i + 1, list_of_.size() * 3 / 2), kNoRow);
  list_of_[i] = kUnfiled;
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
  uint64_t base = list_of_.empty() && !rows.empty() ? rows[0].label : base_;
  for (const RowInput& r : rows) {
    if (r.label < least) throw std::runtime_error("append: label " + std::to_string(r.label) + " is not new (labels must increase)");
    if (r.label - base > (uint64_t)4 * (list_of_.size() + rows.size()) + 1024 * 1024)
      throw std::runtime_error("append: chunk labels are too sparse for the attribute table (label " + std::to_string(r.label) + ")");
    least = r.label + 1;
  }
  for (const RowInput& r : rows) {
    delta_.append(r);
    note_row(r.label);
  }
}

void Engine::build_lists(std::vector<std::vector<Ref>>* seg, std::vector<std::vector<Ref>>* delta) const {
  size_t n = centroids_.size();
  seg->assign(n, {});
  delta->assign(n, {});
  for (size_t v = 0; v < segments_.size(); v++) {
    const Cols& c = segments_[v]->cols();
    for (size_t r = 0; r < c.n; r++) {
      uint32_t l = list_of(c.label[r]);
      if (l < n) (*seg)[l].push_back(ref((uint32_t)v, (uint32_t)r, c.first[r]));
    }
  }
  Cols c = delta_.cols();
  for (size_t r = 0; r < c.n; r++) {
    uint32_t l = list_of(c.label[r]);
    if (l < n) (*delta)[l].push_back(ref(kDelta, (uint32_t)r, c.first[r]));
  }
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
  std::vector<std::vector<Ref>> seg, delta;
  std::unique_lock<std::shared_mutex> lock(mu_);
  centroids_ = std::move(centroids);
  trained_rows_ = rows;
  for (uint64_t label = base_; label < upto; label++)
    if (list_of(label) != kNoRow) list_of(label) = fresh[label - base_];
  filed_to_ = upto;
  filed_rows_ = filed;
  saved_to_ = 0;  // the file holds the old centroids' lists
  build_lists(&seg_lists_, &delta_lists_);
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
      list_of(labels[i]) = out[i];
      if (refs[i].view() == kDelta) delta_lists_[out[i]].push_back(refs[i]);
      else seg_lists_[out[i]].push_back(refs[i]), touched.insert(out[i]);
    }
    // Segment refs stay in row order, so a list is read in address order.
    for (uint32_t l : touched)
      std::sort(seg_lists_[l].begin(), seg_lists_[l].end(), [](Ref a, Ref b) { return a.view() < b.view() || (a.view() == b.view() && a.row < b.row); });
    filed_to_ = to;
    filed_rows_ += refs.size();
    filed += refs.size();
  }
  return filed;
}

void Engine::write_manifest_locked() {
  std::ostringstream m;
  m << "seq " << seq_ << "\nnext_label " << sealed_label_ << "\nindex_label " << saved_to_ << "\n";
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
  // The new segment's rows by list (filing waits on the maintenance mutex: list_of_ holds).
  std::vector<std::pair<uint32_t, Ref>> filed;
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    const Cols& c = seg->cols();
    for (size_t r = 0; r < c.n; r++) {
      uint32_t l = list_of(c.label[r]);
      if (l < centroids_.size()) filed.push_back({l, ref((uint32_t)segments_.size(), (uint32_t)r, c.first[r])});
    }
  }
  std::unique_lock<std::shared_mutex> lock(mu_);
  // Rows appended between the write and this lock stay in the delta.
  RowBuffer rest;
  Cols c = delta_.cols();
  uint64_t top = 0;
  for (size_t r = 0; r < n; r++) top = std::max(top, c.label[r] + 1);
  for (size_t r = n; r < c.n; r++) rest.append_from(c, r);
  delta_ = std::move(rest);
  segments_.push_back(std::move(seg));
  for (auto& [l, ref] : filed) seg_lists_[l].push_back(ref);
  for (auto& l : delta_lists_) l.clear();
  Cols d = delta_.cols();
  for (size_t r = 0; r < d.n; r++) {
    uint32_t l = list_of(d.label[r]);
    if (l < centroids_.size()) delta_lists_[l].push_back(ref(kDelta, (uint32_t)r, d.first[r]));
  }
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
  std::vector<std::vector<Ref>> lists(centroids_.size());
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    const Cols& c = seg->cols();
    for (size_t r = 0; r < c.n; r++) {
      uint32_t l = list_of(c.label[r]);
      if (l < lists.size()) lists[l].push_back(ref(0, (uint32_t)r, c.first[r]));
    }
  }
  std::vector<std::string> old;
  {
    std::unique_lock<std::shared_mutex> lock(mu_);
    for (size_t i = 0; i < merged; i++) old.push_back(segments_[i]->path());
    segments_.clear();
    segments_.push_back(std::move(seg));
    seg_lists_.swap(lists);
    seq_++;
    write_manifest_locked();
  }
  for (auto& p : old) ::unlink(p.c_str());
}

void Engine::save_index() {
  std::lock_guard<std::mutex> m(maintenance_);
  check_open();
  std::string path = join(opt_.dir, kIndexFile), tmp = path + ".tmp";
  uint64_t upto;
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    if (centroids_.size() == 0 || (filed_to_ == saved_to_ && saved_to_ > 0)) return;
    upto = filed_to_;
    std::FILE* f = std::fopen(tmp.c_str(), "wb");
    if (!f) throw std::runtime_error("create " + tmp + ": " + std::strerror(errno));
    try {
      IndexHeader h{};
      std::memcpy(h.magic, kIndexMagic, 8);
      h.version = 1;
      h.dims = kDims;
      h.trained_rows = trained_rows_;
      h.label_base = base_;
      h.labels = upto > base_ ? upto - base_ : 0;
      if (std::fwrite(&h, sizeof h, 1, f) != 1) throw std::runtime_error("write " + tmp + ": " + std::strerror(errno));
      centroids_.write(f, tmp);
      if (h.labels && std::fwrite(list_of_.data(), 4, h.labels, f) != h.labels) throw std::runtime_error("write " + tmp + ": " + std::strerror(errno));
      if (std::fflush(f) != 0 || ::fsync(fileno(f)) != 0) throw std::runtime_error("fsync " + tmp + ": " + std::strerror(errno));
    } catch (...) {
      std::fclose(f);
      ::unlink(tmp.c_str());
      throw;
    }
    std::fclose(f);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw std::runtime_error("rename " + tmp);
  std::unique_lock<std::shared_mutex> lock(mu_);
  saved_to_ = upto;
  write_manifest_locked();
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
  std::vector<uint32_t> order(nc);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return cs[a] > cs[b] || (cs[a] == cs[b] && a < b); });
  auto list_rows = [&](uint32_t l) { return (uint64_t)(seg_lists_[l].size() + delta_lists_[l].size()); };
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
  while (within < nc && cs[order[within]] >= cs[order[0]] - o.probe_delta) within_rows += list_rows(order[within++]);
  // Too many rows about as near as the nearest: nothing to steer by, so the caller scans.
  if (within_rows > max_rows) return *far = true, std::vector<Hit>{};

  Candidates cand(k, min_score);
  ProbeStats st;
  int32_t dots[4];
  bool any = filtered(f), first_only = f.first_only && f.tmin == INT64_MIN && f.tmax == INT64_MAX && f.sources.empty();
  auto read_list = [&](uint32_t l) {
    st.lists++;
    for (const auto* refs : {&seg_lists_[l], &delta_lists_[l]}) {
      st.rows += refs->size();
      // Allowed rows four at a time: the kernel has four rows' loads in flight.
      Ref sel[4];
      const Cols* cols[4];
      size_t m = 0;
      auto flush = [&]() {
        if (m == 0) return;
        const int8_t* v[4];
        for (size_t i = 0; i < 4; i++) v[i] = cols[std::min(i, m - 1)]->i8 + (size_t)sel[std::min(i, m - 1)].row * kDims;
        K.dot_i8_4x1(v, p.code, p.sum, kDims, dots);
        for (size_t i = 0; i < m; i++) {
          const Cols& c = *cols[i];
          size_t r = sel[i].row;
          float a = approx(c, r, p, dots[i]), e = bound(c, r, p);
          cand.add(c.ord[r], sel[i].view(), sel[i].row, a - e, a + e);
        }
        m = 0;
      };
      size_t n = refs->size();
      for (size_t j = 0; j < n; j++) {
        // A list's rows are scattered over the column: ask for a row's codes a few rows ahead.
        if (j + 6 < n) {
          Ref ahead = (*refs)[j + 6];
          const int8_t* a = view_of(views, ahead.view()).i8 + (size_t)ahead.row * kDims;
          for (size_t o = 0; o < kDims; o += 64) __builtin_prefetch(a + o);
        }
        Ref x = (*refs)[j];
        if (first_only ? !x.first() : any && !row_allowed(view_of(views, x.view()), x.row, f)) continue;
        st.allowed++;
        sel[m] = x, cols[m] = &view_of(views, x.view());
        if (++m == 4) flush();
      }
      flush();
    }
  };
  // Rows not yet filed are scanned exactly beside the lists (labels at or above the mark).
  std::vector<Hit> pending;
  st.pending = rows - filed_rows_;
  if (st.pending > 0) pending = topk_scan(views, q, k, min_score, f, *pool_, RowSet{filed_to_});
  std::unordered_map<uint64_t, Hit> exact;  // revisions scored, by ord
  auto result = [&]() {
    cand.refloor();
    float fl = std::max(cand.floor(), min_score);
    for (auto& [ord, e] : cand.entries()) {
      if (e.hi < fl || exact.count(ord)) continue;
      exact[ord] = score_revision(view_of(views, e.view), e.row, q);
      st.rescored++;
    }
    std::unordered_map<uint64_t, Hit> by_ord;
    for (auto& [ord, h] : exact)
      if (h.score >= min_score) by_ord[ord] = h;
    for (const Hit& h : pending) {
      auto it = by_ord.find(h.ord);
      if (it == by_ord.end() || better(h, it->second)) by_ord[h.ord] = h;
    }
    std::vector<Hit> hits;
    hits.reserve(by_ord.size());
    for (auto& [ord, h] : by_ord) hits.push_back(h);
    std::sort(hits.begin(), hits.end(), better);
    if (hits.size() > k) hits.resize(k);
    return hits;
  };
  size_t next = 0;
  for (; next < nc && (next < within || st.allowed < min_rows) && st.rows < max_rows; next++) read_list(order[next]);
  std::vector<Hit> hits = result();
  // Short of k (a selective filter, a high min_score): read further lists, nearest first, a
  // few at a time, while the row budget lasts.
  while (hits.size() < k && next < nc && st.rows < max_rows) {
    for (size_t stop = std::min(nc, next + 8); next < stop; next++) read_list(order[next]);
    hits = result();
  }
  // Every list read (the rest are empty): the answer is exact.
  while (next < nc && list_rows(order[next]) == 0) next++;
  *complete = hits.size() >= k || next == nc;
  if (ps) *ps = st;
  return hits;
}

std::vector<Hit> Engine::topk_planned(const float* q, size_t k, float min_score, const Filter& f, const TopkOptions& o, Plan* plan,
                                       ProbeStats* ps) const {
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    check_open();
    if (centroids_.size() == 0 || estimate_allowed(views_locked(), f) <= o.scan_max_rows) {
      *plan = Plan::Scan;
      return topk_scan(views_locked(), q, k, min_score, f, *pool_);
    }
  }
  bool complete = false, far = false;
  std::vector<Hit> hits = topk_index(q, k, min_score, f, o, &complete, &far, ps);
  if (complete && !far) {
    *plan = Plan::Index;
    return hits;
  }
  *plan = far ? Plan::ScanFar : Plan::IndexThenScan;
  return topk(q, k, min_score, f);
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
  return s;
}

}  // namespace nm
