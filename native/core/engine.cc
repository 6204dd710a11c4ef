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
#include <functional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

#include "hnsw.h"
#include "kernels.h"

namespace nm {

namespace {

const char* kManifest = "manifest";
const char* kHnswFile = "hnsw.usearch";

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

}  // namespace

// Manifest: "seq N", "next_label N", "hnsw_label N" (labels below it are in the HNSW base
// file), and one "segment NAME" line per live segment. Files it does not name are leftovers
// of an interrupted seal or compaction and are deleted at open.
Engine::Engine(EngineOptions o) : opt_(std::move(o)) {
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
  hnsw_ = std::make_unique<Hnsw>(opt_.connectivity, opt_.expansion_add, opt_.expansion_search);
  std::set<std::string> live;
  std::ifstream in(join(opt_.dir, kManifest));
  std::string key, value;
  while (in >> key >> value) {
    if (key == "seq") seq_ = std::stoull(value);
    else if (key == "next_label") sealed_label_ = std::stoull(value);
    else if (key == "hnsw_label") hnsw_label_ = std::stoull(value);
    else if (key == "segment") {
      segments_.push_back(std::make_unique<Segment>(join(opt_.dir, value)));
      live.insert(value);
    } else throw std::runtime_error(join(opt_.dir, kManifest) + ": unknown entry " + key);
  }
  if (DIR* d = ::opendir(opt_.dir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      std::string name = e->d_name;
      bool seg = name.rfind("seg-", 0) == 0;
      if ((seg && !live.count(name)) || name.find(".tmp") != std::string::npos) ::unlink(join(opt_.dir, name).c_str());
    }
    ::closedir(d);
  }
  next_label_ = sealed_label_;
  bool base = hnsw_label_ > 0 && hnsw_->view_base(join(opt_.dir, kHnswFile));
  for (auto& s : segments_) {
    const Cols& c = s->cols();
    for (size_t r = 0; r < c.n; r++) {
      note_row(c, r);
      if (!base || c.label[r] >= hnsw_label_) pending_.push_back(c.label[r]);
    }
  }
  std::sort(pending_.begin(), pending_.end());
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

void Engine::note_row(const Cols& c, size_t r) {
  uint64_t label = c.label[r];
  if (attrs_.empty()) attr_base_ = label;
  if (label < attr_base_) {  // rare: shift the table down
    std::vector<Attr> grown(attrs_.size() + (attr_base_ - label));
    std::copy(attrs_.begin(), attrs_.end(), grown.begin() + (attr_base_ - label));
    attrs_.swap(grown);
    attr_base_ = label;
  }
  uint64_t i = label - attr_base_;  // append() has checked the spread
  if (i >= attrs_.size()) attrs_.resize(std::max<uint64_t>(i + 1, attrs_.size() * 3 / 2));
  attrs_[i] = {c.ord[r], c.time[r], c.source[r], c.first[r], 1};
  next_label_ = std::max(next_label_, label + 1);
}

const Engine::Attr* Engine::attr(uint64_t label) const {
  if (label < attr_base_ || label - attr_base_ >= attrs_.size()) return nullptr;
  const Attr* a = &attrs_[label - attr_base_];
  return a->present ? a : nullptr;
}

void Engine::append(const std::vector<RowInput>& rows) {
  std::unique_lock<std::shared_mutex> lock(mu_);
  check_open();
  // Validate the whole batch before touching anything: a refused append changes nothing.
  uint64_t least = next_label_;
  uint64_t base = attrs_.empty() && !rows.empty() ? rows[0].label : attr_base_;
  for (const RowInput& r : rows) {
    if (r.label < least) throw std::runtime_error("append: label " + std::to_string(r.label) + " is not new (labels must increase)");
    if (r.label - base > (uint64_t)4 * (attrs_.size() + rows.size()) + 1024 * 1024)
      throw std::runtime_error("append: chunk labels are too sparse for the attribute table (label " + std::to_string(r.label) + ")");
    least = r.label + 1;
  }
  size_t start = delta_.size();
  for (const RowInput& r : rows) delta_.append(r);
  Cols c = delta_.cols();
  for (size_t r = start; r < c.n; r++) {
    note_row(c, r);
    pending_.push_back(c.label[r]);
  }
}

size_t Engine::index_pending(size_t max, size_t threads) {
  std::vector<uint64_t> labels;
  std::vector<std::vector<uint16_t>> copies;
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    size_t n = std::min(max, pending_.size());
    if (n == 0) return 0;
    labels.assign(pending_.begin(), pending_.begin() + n);
    // Locate each label's f16 row (pending labels are recent: mostly the delta).
    std::unordered_map<uint64_t, size_t> want;
    for (size_t i = 0; i < n; i++) want[labels[i]] = i;
    copies.assign(n, {});
    std::vector<Cols> views = views_locked();
    for (auto it = views.rbegin(); it != views.rend() && !want.empty(); ++it)
      for (size_t r = 0; r < it->n && !want.empty(); r++) {
        auto f = want.find(it->label[r]);
        if (f == want.end()) continue;
        copies[f->second].assign(it->f16 + r * kDims, it->f16 + (r + 1) * kDims);
        want.erase(f);
      }
    if (!want.empty()) throw std::runtime_error("index_pending: a queued label has no row");
  }
  std::vector<const uint16_t*> ptrs(labels.size());
  for (size_t i = 0; i < labels.size(); i++) ptrs[i] = copies[i].data();
  hnsw_->add(labels, ptrs, threads);
  std::unique_lock<std::shared_mutex> lock(mu_);
  pending_.erase(pending_.begin(), pending_.begin() + labels.size());
  return labels.size();
}

void Engine::write_manifest_locked() {
  std::ostringstream m;
  m << "seq " << seq_ << "\nnext_label " << sealed_label_ << "\nhnsw_label " << hnsw_label_ << "\n";
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
  std::vector<std::string> old;
  {
    std::unique_lock<std::shared_mutex> lock(mu_);
    for (size_t i = 0; i < merged; i++) old.push_back(segments_[i]->path());
    segments_.erase(segments_.begin(), segments_.begin() + merged);
    segments_.insert(segments_.begin(), std::move(seg));
    seq_++;
    write_manifest_locked();
  }
  for (auto& p : old) ::unlink(p.c_str());
}

void Engine::save_hnsw(size_t threads) {
  std::lock_guard<std::mutex> m(maintenance_);
  check_open();
  uint64_t covered;
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    covered = pending_.empty() ? next_label_ : pending_.front();
  }
  hnsw_->fold_into(join(opt_.dir, kHnswFile), threads);
  std::unique_lock<std::shared_mutex> lock(mu_);
  hnsw_label_ = covered;
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
  return range_batch(views_locked(), queries);
}

std::vector<Hit> Engine::topk(const float* q, size_t k, float min_score, const Filter& f) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  check_open();
  return topk_scan(views_locked(), q, k, min_score, f);
}

std::vector<Hit> Engine::topk_hnsw(const float* q, size_t k, float min_score, const Filter& f, bool* complete) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  check_open();
  *complete = false;
  if (!pending_.empty() || k == 0) return {};
  std::vector<uint16_t> q16(kDims), v16(kDims);
  f32_to_f16_n(q, q16.data(), kDims);
  bool filtered = f.tmin != INT64_MIN || f.tmax != INT64_MAX || f.first_only || !f.sources.empty();
  std::function<bool(uint64_t)> allow = [&](uint64_t label) {
    const Attr* a = attr(label);
    return a && a->time >= f.tmin && a->time <= f.tmax && (!f.first_only || a->first) && source_allowed(f, a->source);
  };
  const Kernels& K = kernels();
  // Over-fetch chunks, group by revision, widen until k revisions are certain.
  for (size_t want = std::max<size_t>(64, 4 * k);; want *= 4) {
    auto matches = hnsw_->search(q16.data(), want, filtered ? &allow : nullptr);
    std::unordered_map<uint64_t, Hit> by_ord;
    for (auto& m : matches) {
      const Attr* a = attr(m.label);
      if (!a || by_ord.count(a->ord)) continue;
      // Score the whole revision (its chunks have adjacent labels), exactly as the scan does.
      Hit best{a->ord, m.label, -INFINITY};
      uint64_t lo = m.label, hi = m.label;
      while (lo > attr_base_ && attr(lo - 1) && attr(lo - 1)->ord == a->ord) lo--;
      while (attr(hi + 1) && attr(hi + 1)->ord == a->ord) hi++;
      for (uint64_t l = lo; l <= hi; l++) {
        if (!hnsw_->get(l, v16.data())) continue;
        float s = K.dot_f16_f32(v16.data(), q, kDims);
        if (s > best.score) best.score = s, best.label = l;
      }
      by_ord[a->ord] = best;
    }
    std::vector<Hit> hits;
    for (auto& [ord, h] : by_ord)
      if (h.score >= min_score) hits.push_back(h);
    std::sort(hits.begin(), hits.end(), [](const Hit& a, const Hit& b) { return a.score > b.score || (a.score == b.score && a.ord < b.ord); });
    // Fewer matches than asked for means the search ran dry, which proves nothing: HNSW can
    // leave nodes no search reaches. Only a search that saw every allowed chunk is exhaustive.
    bool exhausted = matches.size() < want && count_allowed(views_locked(), f, matches.size() + 1) <= matches.size();
    float tail = matches.empty() ? 1.0f : 1.0f - matches.back().distance;
    // Done when k revisions beat every chunk not yet seen, or nothing more can be found.
    if (exhausted || (hits.size() >= k && hits[k - 1].score >= tail) || tail < min_score || matches.size() < want) {
      if (hits.size() > k) hits.resize(k);
      // Running below min_score before k revisions proves nothing either: HNSW may have missed
      // a chunk above it (seen in the conformance tests), so the caller scans. Nor does running
      // dry under a selective filter: the allowed chunks the graph did not lead to may score
      // anything (a narrow time window lost a top revision this way), so the caller scans.
      bool ran_dry = matches.size() < want && !exhausted;
      *complete = exhausted || (!ran_dry && hits.size() >= k);
      return hits;
    }
    if (want >= 16384) return {};  // too sparse for HNSW: the caller scans
  }
}

std::vector<Hit> Engine::topk_planned(const float* q, size_t k, float min_score, const Filter& f, uint64_t scan_max_rows,
                                       Plan* plan) const {
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    check_open();
    // Count allowed rows only up to the budget: past it the answer is "HNSW" either way.
    uint64_t allowed = count_allowed(views_locked(), f, scan_max_rows + 1);
    if (allowed <= scan_max_rows || !pending_.empty()) {
      *plan = allowed <= scan_max_rows ? Plan::ScanSmall : Plan::ScanPending;
      return topk_scan(views_locked(), q, k, min_score, f);
    }
  }
  bool complete = false;
  std::vector<Hit> hits = topk_hnsw(q, k, min_score, f, &complete);
  if (complete) {
    *plan = Plan::Hnsw;
    return hits;
  }
  *plan = Plan::HnswThenScan;
  return topk(q, k, min_score, f);
}

uint64_t Engine::count(const Filter& f) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  check_open();
  return count_allowed(views_locked(), f);
}

EngineStats Engine::stats() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  EngineStats s;
  s.segments = segments_.size();
  for (auto& seg : segments_) s.segment_rows += seg->cols().n;
  s.delta_rows = delta_.size();
  s.hnsw_base = hnsw_->base_size();
  s.hnsw_delta = hnsw_->delta_size();
  s.hnsw_pending = pending_.size();
  s.next_label = next_label_;
  s.isa = kernels().isa;
  return s;
}

}  // namespace nm
