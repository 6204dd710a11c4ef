// The relevance index: an inverted file. k-means centroids (spherical, int8 codes) partition
// the chunks; each chunk is filed under its nearest centroid. A top-k query ranks the
// centroids and scans the lists of the nearest ones exactly (int8 with rigorous bounds, then
// f16), so whatever it returns is scored exactly and nothing in a list it reads is missed.
//
// Chosen over graphs by measurement (bench/ann-compare.cc): on clustered embeddings the chunks
// of one story score a query within a few hundredths of each other, and a graph walk there
// follows noise (top-50 recall 0.93 to 0.99 by query class at ~1 ms), while reading the whole
// story's list costs about the same and misses nothing in it.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "scan.h"

namespace nm {

class Pool;

class Centroids {
 public:
  size_t size() const { return scale_.size(); }
  const int8_t* code(size_t c) const { return code_.data() + c * kDims; }
  // Spherical k-means on sample rows given as int8 codes with their scales (v ~ scale * code):
  // `lists` centroids, `rounds` Lloyd rounds, the first centroids drawn from the sample by `seed`.
  static Centroids train(const std::vector<const int8_t*>& codes, const std::vector<float>& scales, size_t lists, size_t rounds,
                         uint64_t seed, Pool& pool);
  // The nearest centroid of each row (int8 codes; the scale does not change the argmax), 4 rows
  // and 4 centroids a kernel call.
  void assign(const std::vector<const int8_t*>& rows, uint32_t* out, Pool& pool) const;
  // A prepared query's cosine estimate against every centroid.
  void score(const Prepared& q, float* out) const;
  // File form: count, then each centroid's codes and scale. Throws std::runtime_error.
  void write(std::FILE* f, const std::string& path) const;
  static Centroids read(std::FILE* f, const std::string& path);

 private:
  std::vector<int8_t> code_;
  std::vector<float> scale_;
  void set(size_t c, const float* v);
};

// Lists for `rows` chunks: about one per sqrt(rows), so a list holds about as many chunks as
// there are lists, between 16 and 65,536.
size_t default_lists(uint64_t rows);

}  // namespace nm
