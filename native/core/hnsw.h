// usearch HNSW over f16 chunk vectors, with this project's own f16 dot kernel as the metric.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <shared_mutex>
#include <string>
#include <vector>

namespace nm {

struct HnswMatch {
  uint64_t label;
  float distance;  // 1 - cosine
};

class Hnsw {
 public:
  Hnsw(size_t connectivity, size_t expansion_add, size_t expansion_search);
  ~Hnsw();
  // Views `path` as the base (read-only, memory-mapped). Returns false if it is absent.
  bool view_base(const std::string& path);
  size_t base_size() const;
  size_t delta_size() const;
  bool contains(uint64_t label) const;
  // Adds f16 vectors to the delta index, `threads` at a time.
  void add(const std::vector<uint64_t>& labels, const std::vector<const uint16_t*>& vecs, size_t threads);
  // Nearest `k` to an f16 query among labels the predicate allows, from base and delta.
  std::vector<HnswMatch> search(const uint16_t* q, size_t k, const std::function<bool(uint64_t)>* allow) const;
  // The stored f16 vector of a label; false if absent.
  bool get(uint64_t label, uint16_t* out) const;
  // Writes base + delta as one index to `path` (temp + rename), then views it as the new base.
  void fold_into(const std::string& path, size_t threads);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nm
