// The relevance index: an inverted file. k-means centroids (spherical, int8 codes) partition
// the chunks; each chunk is filed under its nearest centroid. A top-k query ranks the
// centroids and scans the lists of the nearest ones exactly (int8 with rigorous bounds, then
// f16), so whatever it returns is scored exactly and nothing in a list it reads is missed.
//
// Chosen over graphs by measurement (bench/ann/compare.cc, run by bench:search): on clustered
// embeddings the chunks of one story score a query within a few hundredths of each other, and a
// graph walk there follows noise (usearch HNSW over int8 codes, ef 512: top-50 recall 0.999 down
// to 0.615 across the near query classes at 1M chunks), while reading the whole story's list
// costs about as much and misses nothing in it.
#pragma once
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "scan.h"
#include "segment.h"

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
  // File form: each centroid's codes, then every scale.
  size_t bytes() const { return code_.size() + scale_.size() * 4; }
  void write(std::FILE* f, const std::string& path) const;
  static Centroids load(const uint8_t* p, size_t count);

 private:
  std::vector<int8_t> code_;
  std::vector<float> scale_;
  void set(size_t c, const float* v);
};

// A row as the index file keeps it beside its codes: what a list scan filters and bounds by,
// and the label that finds the row's f16 vector for rescoring.
struct IndexRec {
  uint64_t label;
  uint64_t ord;
  int64_t time;
  float scale;
  uint32_t tag;  // source id, and the first-revision flag in the top bit
  // |f16 vector - scale * code|_2, rounded up: a query's refined estimate from the codes is
  // within |q|_2 * err of the f16 score (Cauchy-Schwarz), about 0.7x the per-component bound.
  float err;
  uint32_t reserved;
  uint32_t source() const { return tag & 0x7fffffffu; }
  bool first() const { return tag >> 31; }
};

// The index file, memory-mapped read-only: centroids, each label's list, and each list's rows
// stored together (codes in one region, records in another), so reading a list is a sequential
// read. Within a list the first revisions' rows come first, so a query for first revisions
// only (the API's default) reads a list's first part and nothing of the edits' rows. Layout
// (64-byte aligned regions): header, centroids, lists of labels [label_base, label_base +
// labels), list offsets (lists + 1), where each list's edits begin (lists), codes (rows x 1024),
// records (rows).
class IndexFile {
 public:
  // Maps and validates; throws std::runtime_error naming what is wrong.
  explicit IndexFile(const std::string& path);
  ~IndexFile();
  IndexFile(const IndexFile&) = delete;
  IndexFile& operator=(const IndexFile&) = delete;
  const Centroids& centroids() const { return centroids_; }
  uint64_t trained_rows() const { return trained_rows_; }
  uint64_t label_base() const { return label_base_; }
  uint64_t labels() const { return labels_; }
  const uint32_t* list_of() const { return list_of_; }
  uint64_t begin(size_t list) const { return offsets_[list]; }
  uint64_t end(size_t list) const { return offsets_[list + 1]; }
  // The list's rows of first revisions are [begin, first_end); those of later ones [first_end, end).
  uint64_t first_end(size_t list) const { return first_ends_[list]; }
  const int8_t* code(uint64_t i) const { return codes_ + i * kDims; }
  const IndexRec& rec(uint64_t i) const { return recs_[i]; }

  // Writes a file: `list_of` for labels [label_base, label_base + labels), then the rows list
  // by list, each given by `row(list, i)` for i < counts[list] (code, record): the list's
  // firsts[list] rows of first revisions, then the others. Temp file, fsync, rename.
  using RowSource = std::function<void(size_t list, size_t i, const int8_t** code, IndexRec* rec)>;
  static void write(const std::string& path, const Centroids& centroids, uint64_t trained_rows, uint64_t label_base,
                    const uint32_t* list_of, uint64_t labels, const std::vector<uint64_t>& counts, const std::vector<uint64_t>& firsts,
                    const RowSource& row);

 private:
  std::unique_ptr<Mapping> map_;
  Centroids centroids_;
  uint64_t trained_rows_ = 0, label_base_ = 0, labels_ = 0;
  const uint32_t* list_of_ = nullptr;
  const uint64_t* offsets_ = nullptr;
  const uint64_t* first_ends_ = nullptr;
  const int8_t* codes_ = nullptr;
  const IndexRec* recs_ = nullptr;
};

// Lists for `rows` chunks: about one per sqrt(rows), so a list holds about as many chunks as
// there are lists, between 16 and 65,536.
size_t default_lists(uint64_t rows);

}  // namespace nm
