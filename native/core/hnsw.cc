#include "hnsw.h"

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <thread>

#include <usearch/index_dense.hpp>

#include "kernels.h"
#include "segment.h"

namespace nm {

using namespace unum::usearch;

namespace {

// usearch calls this for every distance: our dispatched f16 kernel on unit vectors.
distance_punned_t cos_f16(std::size_t a, std::size_t b) {
  return 1.0f - kernels().dot_f16_f16(reinterpret_cast<const uint16_t*>(a), reinterpret_cast<const uint16_t*>(b), kDims);
}

metric_punned_t metric() {
  return metric_punned_t(kDims, reinterpret_cast<std::uintptr_t>(&cos_f16), metric_punned_signature_t::array_array_k,
                         metric_kind_t::cos_k, scalar_kind_t::f16_k);
}

constexpr size_t kThreads = 16;  // search slots: libuv pool + maintenance threads

// usearch's index_dense searches its graph without a prefetch hook, and here the search is
// bound by memory latency: each neighbour's 2 KB vector is a cache and TLB miss (costly under
// virtualisation), taken one at a time. The graph search itself (index_gt::search) takes a
// prefetch callback; it and the vector table are private members of index_dense, reached
// through the explicit-instantiation access rule (C++17 [temp.explicit]/12), read-only.
using graph_t = index_gt<distance_punned_t, uint64_t, uint32_t, aligned_allocator_gt<byte_t, 64>, memory_mapping_allocator_gt<64>>;
using lookup_t = buffer_gt<byte_t*, aligned_allocator_gt<byte_t*, 64>>;
template <typename Tag, typename Tag::type M>
struct Reach {
  friend typename Tag::type member(Tag) { return M; }
};
struct GraphOf {
  using type = graph_t* index_dense_t::*;
  friend type member(GraphOf);
};
struct LookupOf {
  using type = lookup_t index_dense_t::*;
  friend type member(LookupOf);
};
template struct Reach<GraphOf, &index_dense_t::typed_>;
template struct Reach<LookupOf, &index_dense_t::vectors_lookup_>;

// Distances straight from the vector table (what index_dense's own proxy does).
struct Metric {
  const lookup_t* lookup;
  static const uint16_t* vec(const byte_t* p) { return reinterpret_cast<const uint16_t*>(p); }
  template <typename M>
  const uint16_t* vec(const M& m) const { return reinterpret_cast<const uint16_t*>((*lookup)[get_slot(m)]); }
  template <typename A, typename B>
  distance_punned_t operator()(const A& a, const B& b) const { return 1.0f - kernels().dot_f16_f16(vec(a), vec(b), kDims); }
};

// Before a node's neighbours are measured, ask for all their vectors at once: the misses
// overlap instead of queueing. The head of each vector starts its page walk and the hardware
// streamer for the rest (prefetching every line measured no better). 1M chunks: top-50 went
// from 4.06 to 3.14 ms (median, same process, alternating); the rest is memory: a random 2 KB
// read costs ~430 ns on this machine.
struct Prefetch {
  const lookup_t* lookup;
  template <typename It>
  void operator()(It begin, It end) const {
    for (It it = begin; it != end; ++it) __builtin_prefetch((*lookup)[get_slot(it)], 0, 3);
  }
};

// Search contexts of an index: one per concurrent search, handed out here since the graph
// search is called directly (index_dense's own slot pool is private too).
class Slots {
 public:
  size_t acquire() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return free_ != 0; });
    size_t slot = __builtin_ctz(free_);
    free_ &= ~(1u << slot);
    return slot;
  }
  void release(size_t slot) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      free_ |= 1u << slot;
    }
    cv_.notify_one();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  uint32_t free_ = (1u << kThreads) - 1;
};

}  // namespace

struct Hnsw::Impl {
  index_dense_config_t config;
  index_dense_t base;   // viewed file, read-only
  index_dense_t delta;  // in memory
  bool has_base = false;
  mutable std::shared_mutex mu;  // adds vs searches on the delta; swaps of the base
  // Sizes readable without `mu`: stats() runs on the event loop and must never wait on an add.
  std::atomic<size_t> base_n{0}, delta_n{0};
  mutable Slots slots;

  // Views an index file (memory-mapped, read-only) with our metric and search settings.
  index_dense_t view(const std::string& path) const {
    auto made = index_dense_t::make(path.c_str(), true);
    if (!made) throw std::runtime_error(path + ": " + made.error.release());
    index_dense_t idx = std::move(made.index);
    idx.change_metric(metric());
    idx.change_expansion_search(config.expansion_search);
    idx.reserve(index_limits_t(idx.size(), kThreads));
    return idx;
  }

  index_dense_t fresh() const {
    auto made = index_dense_t::make(metric(), config);
    if (!made) throw std::runtime_error(std::string("usearch: ") + made.error.release());
    index_dense_t idx = std::move(made.index);
    idx.reserve(index_limits_t(1024, kThreads));
    return idx;
  }
};

Hnsw::Hnsw(size_t connectivity, size_t expansion_add, size_t expansion_search) : impl_(new Impl) {
  impl_->config = index_dense_config_t(connectivity, expansion_add, expansion_search);
  impl_->delta = impl_->fresh();
}

Hnsw::~Hnsw() = default;

bool Hnsw::view_base(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  std::fclose(f);
  index_dense_t idx = impl_->view(path);
  std::unique_lock<std::shared_mutex> lock(impl_->mu);
  impl_->base = std::move(idx);
  impl_->has_base = true;
  impl_->base_n = impl_->base.size();
  return true;
}

size_t Hnsw::base_size() const { return impl_->base_n; }

size_t Hnsw::delta_size() const { return impl_->delta_n; }

bool Hnsw::contains(uint64_t label) const {
  std::shared_lock<std::shared_mutex> lock(impl_->mu);
  return (impl_->has_base && impl_->base.contains(label)) || impl_->delta.contains(label);
}

void Hnsw::add(const std::vector<uint64_t>& labels, const std::vector<const uint16_t*>& vecs, size_t threads) {
  std::unique_lock<std::shared_mutex> lock(impl_->mu);
  index_dense_t& d = impl_->delta;
  size_t need = d.size() + labels.size();
  if (need > d.capacity()) d.reserve(index_limits_t(std::max(need, d.capacity() * 2), kThreads));
  threads = std::max<size_t>(1, std::min(threads, kThreads));
  std::vector<std::thread> pool;
  std::vector<std::string> errors(threads);
  for (size_t t = 0; t < threads; t++) {
    pool.emplace_back([&, t] {
      for (size_t i = t; i < labels.size(); i += threads) {
        auto r = d.add(labels[i], reinterpret_cast<const f16_t*>(vecs[i]), t);
        if (!r) errors[t] = r.error.release();
      }
    });
  }
  for (auto& th : pool) th.join();
  impl_->delta_n = d.size();
  for (auto& e : errors)
    if (!e.empty()) throw std::runtime_error("usearch add: " + e);
}

std::vector<HnswMatch> Hnsw::search(const uint16_t* q, size_t k, const std::function<bool(uint64_t)>* allow) const {
  std::shared_lock<std::shared_mutex> lock(impl_->mu);
  std::vector<HnswMatch> out;
  size_t slot = impl_->slots.acquire();
  auto collect = [&](const index_dense_t& idx) {
    if (idx.size() == 0) return;
    const graph_t& graph = *(idx.*member(GraphOf{}));
    const lookup_t* lookup = &(idx.*member(LookupOf{}));
    index_search_config_t config;
    config.thread = slot;
    config.expansion = impl_->config.expansion_search;
    const byte_t* v = reinterpret_cast<const byte_t*>(q);
    auto run = [&](auto&& predicate) {
      auto r = graph.search(v, k, Metric{lookup}, config, predicate, Prefetch{lookup});
      if (!r) throw std::runtime_error(std::string("usearch search: ") + r.error.release());
      std::vector<uint64_t> keys(r.count);
      std::vector<float> dist(r.count);
      size_t n = r.dump_to(keys.data(), dist.data());
      for (size_t i = 0; i < n; i++) out.push_back({keys[i], dist[i]});
    };
    if (allow) run([allow](const graph_t::member_cref_t& m) { return (*allow)(get_key(m)); });
    else run(dummy_predicate_t{});
  };
  struct Release {
    Slots& s;
    size_t slot;
    ~Release() { s.release(slot); }
  } release{impl_->slots, slot};
  if (impl_->has_base) collect(impl_->base);
  collect(impl_->delta);
  std::sort(out.begin(), out.end(), [](const HnswMatch& a, const HnswMatch& b) { return a.distance < b.distance; });
  if (out.size() > k) out.resize(k);
  return out;
}

bool Hnsw::get(uint64_t label, uint16_t* out) const {
  std::shared_lock<std::shared_mutex> lock(impl_->mu);
  f16_t* o = reinterpret_cast<f16_t*>(out);
  if (impl_->has_base && impl_->base.get(label, o) == 1) return true;
  return impl_->delta.get(label, o) == 1;
}

void Hnsw::fold_into(const std::string& path, size_t threads) {
  std::string tmp = path + ".tmp";
  if (!impl_->has_base) {
    // First build: the delta is the whole index; save it as it is instead of building it again.
    size_t saved_n;
    {
      std::unique_lock<std::shared_mutex> lock(impl_->mu);
      auto saved = impl_->delta.save(tmp.c_str());
      if (!saved) throw std::runtime_error(std::string("usearch save: ") + saved.error.release());
      saved_n = impl_->delta.size();
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) throw std::runtime_error("rename " + tmp);
    index_dense_t viewed = impl_->view(path);
    std::unique_lock<std::shared_mutex> lock(impl_->mu);
    if (impl_->delta.size() != saved_n) throw std::runtime_error("HNSW delta changed during its first save");
    impl_->base = std::move(viewed);
    impl_->has_base = true;
    impl_->delta = impl_->fresh();
    impl_->base_n = impl_->base.size();
    impl_->delta_n = 0;
    return;
  }
  // Build outside the lock from a snapshot of the delta's keys; searches go on meanwhile.
  std::vector<uint64_t> keys;
  std::vector<std::vector<uint16_t>> vecs;
  index_dense_t merged;
  {
    std::shared_lock<std::shared_mutex> lock(impl_->mu);
    size_t n = impl_->delta.size();
    keys.resize(n);
    impl_->delta.export_keys(keys.data(), 0, n);
    vecs.assign(n, std::vector<uint16_t>(kDims));
    for (size_t i = 0; i < n; i++) impl_->delta.get(keys[i], reinterpret_cast<f16_t*>(vecs[i].data()));
    if (impl_->has_base) {
      auto copied = impl_->base.copy();
      if (!copied) throw std::runtime_error(std::string("usearch copy: ") + copied.error.release());
      merged = std::move(copied.index);
      merged.change_metric(metric());
    } else {
      merged = impl_->fresh();
    }
  }
  merged.reserve(index_limits_t(merged.size() + keys.size(), kThreads));
  threads = std::max<size_t>(1, std::min(threads, kThreads));
  std::vector<std::thread> pool;
  for (size_t t = 0; t < threads; t++)
    pool.emplace_back([&, t] {
      for (size_t i = t; i < keys.size(); i += threads) merged.add(keys[i], reinterpret_cast<const f16_t*>(vecs[i].data()), t);
    });
  for (auto& th : pool) th.join();
  auto saved = merged.save(tmp.c_str());
  if (!saved) throw std::runtime_error(std::string("usearch save: ") + saved.error.release());
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw std::runtime_error("rename " + tmp);
  index_dense_t viewed = impl_->view(path);
  // Swap: keys added to the delta since the snapshot stay in a fresh delta.
  std::unique_lock<std::shared_mutex> lock(impl_->mu);
  index_dense_t rest = impl_->fresh();
  size_t n = impl_->delta.size();
  if (n > keys.size()) {
    std::vector<uint64_t> all(n);
    impl_->delta.export_keys(all.data(), 0, n);
    rest.reserve(index_limits_t(n, kThreads));
    std::vector<uint16_t> v(kDims);
    for (uint64_t key : all) {
      if (viewed.contains(key)) continue;
      impl_->delta.get(key, reinterpret_cast<f16_t*>(v.data()));
      rest.add(key, reinterpret_cast<const f16_t*>(v.data()));
    }
  }
  impl_->base = std::move(viewed);
  impl_->has_base = true;
  impl_->delta = std::move(rest);
  impl_->base_n = impl_->base.size();
  impl_->delta_n = impl_->delta.size();
}

}  // namespace nm
