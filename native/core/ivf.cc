#include "ivf.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <numeric>
#include <random>
#include <stdexcept>

#include "kernels.h"
#include "pool.h"

namespace nm {

size_t default_lists(uint64_t rows) {
  return (size_t)std::clamp<double>(std::round(std::sqrt((double)rows)), 16, 65536);
}

void Centroids::set(size_t c, const float* v) { scale_[c] = quantize_i8(v, code_.data() + c * kDims, kDims); }

namespace {

int32_t code_sum(const int8_t* c) {
  int32_t s = 0;
  for (size_t i = 0; i < kDims; i++) s += c[i];
  return s;
}

void normalise(std::vector<double>& acc, float* out) {
  double n = 0;
  for (double x : acc) n += x * x;
  n = std::sqrt(n);
  for (size_t i = 0; i < kDims; i++) out[i] = n > 0 ? (float)(acc[i] / n) : 0.f;
}

}  // namespace

void Centroids::assign(const std::vector<const int8_t*>& rows, uint32_t* out, Pool& pool) const {
  const Kernels& K = kernels();
  size_t n = rows.size(), nc = size();
  if (nc == 0) throw std::logic_error("assign: no centroids");
  // Centroids are the kernel's unsigned side (flipped), rows the signed side with their sums;
  // a short last group repeats its last member (an equal score never wins: ties keep the first).
  constexpr size_t kRows = 64;
  pool.run((n + kRows - 1) / kRows, [&](size_t t) {
    int32_t dots[16];
    for (size_t r0 = t * kRows; r0 < std::min(n, (t + 1) * kRows); r0 += 4) {
      const int8_t* q[4];
      int32_t qs[4];
      for (size_t j = 0; j < 4; j++) {
        q[j] = rows[std::min(r0 + j, n - 1)];
        qs[j] = code_sum(q[j]);
      }
      float best[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
      uint32_t arg[4] = {0, 0, 0, 0};
      for (size_t c0 = 0; c0 < nc; c0 += 4) {
        const int8_t* v[4];
        for (size_t i = 0; i < 4; i++) v[i] = code(std::min(c0 + i, nc - 1));
        K.dot_i8_4x4(v, q, qs, kDims, dots);
        for (size_t i = 0; i < 4 && c0 + i < nc; i++)
          for (size_t j = 0; j < 4; j++) {
            float s = scale_[c0 + i] * (float)dots[i * 4 + j];
            if (s > best[j]) best[j] = s, arg[j] = (uint32_t)(c0 + i);
          }
      }
      for (size_t j = 0; j < 4 && r0 + j < n; j++) out[r0 + j] = arg[j];
    }
  });
}

void Centroids::score(const Prepared& q, float* out) const {
  const Kernels& K = kernels();
  size_t nc = size();
  int32_t dots[4];
  for (size_t c0 = 0; c0 < nc; c0 += 4) {
    const int8_t* v[4];
    for (size_t i = 0; i < 4; i++) v[i] = code(std::min(c0 + i, nc - 1));
    K.dot_i8_4x1(v, q.code, q.sum, kDims, dots);
    for (size_t i = 0; i < 4 && c0 + i < nc; i++) out[c0 + i] = scale_[c0 + i] * q.scale * (float)dots[i];
  }
}

Centroids Centroids::train(const std::vector<const int8_t*>& codes, const std::vector<float>& scales, size_t lists, size_t rounds,
                           uint64_t seed, Pool& pool) {
  size_t n = codes.size();
  if (n == 0 || lists == 0) throw std::logic_error("train: no rows or no lists");
  lists = std::min(lists, n);
  Centroids c;
  c.code_.resize(lists * kDims);
  c.scale_.resize(lists);
  std::mt19937_64 rng(seed);
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<float> v(kDims);
  auto row = [&](size_t i, float* out) {
    for (size_t d = 0; d < kDims; d++) out[d] = scales[i] * codes[i][d];
  };
  for (size_t k = 0; k < lists; k++) {
    row(order[k], v.data());
    std::vector<double> acc(v.begin(), v.end());
    normalise(acc, v.data());
    c.set(k, v.data());
  }
  std::vector<uint32_t> asg(n);
  size_t width = pool.width();
  for (size_t round = 0; round < rounds; round++) {
    c.assign(codes, asg.data(), pool);
    // Sums per centroid: each task owns a slice of the centroids and adds the rows filed under
    // them, so no task writes another's sums.
    std::vector<double> sums(lists * kDims, 0.0);
    std::vector<size_t> members(lists, 0);
    pool.run(width, [&](size_t t) {
      size_t k0 = lists * t / width, k1 = lists * (t + 1) / width;
      for (size_t i = 0; i < n; i++) {
        if (asg[i] < k0 || asg[i] >= k1) continue;
        double* a = sums.data() + asg[i] * kDims;
        float s = scales[i];
        for (size_t d = 0; d < kDims; d++) a[d] += s * codes[i][d];
        members[asg[i]]++;
      }
    });
    size_t largest = (size_t)(std::max_element(members.begin(), members.end()) - members.begin());
    std::vector<size_t> of_largest;
    for (size_t i = 0; i < n; i++)
      if (asg[i] == largest) of_largest.push_back(i);
    for (size_t k = 0; k < lists; k++) {
      std::vector<double> acc(kDims, 0.0);
      if (members[k] == 0) {
        // An empty centroid restarts at a member of the largest list, which it then splits.
        row(of_largest[rng() % of_largest.size()], v.data());
        acc.assign(v.begin(), v.end());
      } else {
        acc.assign(sums.begin() + k * kDims, sums.begin() + (k + 1) * kDims);
      }
      normalise(acc, v.data());
      c.set(k, v.data());
    }
  }
  return c;
}

void Centroids::write(std::FILE* f, const std::string& path) const {
  if (std::fwrite(code_.data(), 1, code_.size(), f) != code_.size() || std::fwrite(scale_.data(), 4, scale_.size(), f) != scale_.size())
    throw std::runtime_error("write " + path + ": " + std::strerror(errno));
}

Centroids Centroids::load(const uint8_t* p, size_t count) {
  Centroids c;
  c.code_.assign(reinterpret_cast<const int8_t*>(p), reinterpret_cast<const int8_t*>(p) + count * kDims);
  c.scale_.resize(count);
  std::memcpy(c.scale_.data(), p + count * kDims, count * 4);
  return c;
}

namespace {

constexpr char kIndexMagic[8] = {'N', 'M', 'I', 'V', 'F', '0', '4', '\0'};

struct IndexHeader {
  char magic[8];
  uint32_t version, dims;
  uint64_t trained_rows, label_base, labels, lists, rows;
  uint64_t off_centroids, off_list_of, off_offsets, off_first_ends, off_codes, off_recs, file_size;
};

uint64_t align64(uint64_t x) { return (x + 63) & ~uint64_t(63); }

IndexHeader layout(uint64_t labels, uint64_t lists, uint64_t rows) {
  IndexHeader h{};
  std::memcpy(h.magic, kIndexMagic, 8);
  h.version = 4;
  h.dims = kDims;
  h.labels = labels, h.lists = lists, h.rows = rows;
  uint64_t o = align64(sizeof(IndexHeader));
  h.off_centroids = o, o = align64(o + lists * (kDims + 4));
  h.off_list_of = o, o = align64(o + labels * 4);
  h.off_offsets = o, o = align64(o + (lists + 1) * 8);
  h.off_first_ends = o, o = align64(o + lists * 8);
  h.off_codes = o, o = align64(o + rows * kDims);
  h.off_recs = o, o = align64(o + rows * sizeof(IndexRec));
  h.file_size = o;
  return h;
}

}  // namespace

IndexFile::IndexFile(const std::string& path) : map_(new Mapping(path, sizeof(IndexHeader), "index file")) {
  IndexHeader h;
  std::memcpy(&h, map_->data(), sizeof h);
  bool sane = std::memcmp(h.magic, kIndexMagic, 8) == 0 && h.version == 4 && h.dims == kDims && h.lists > 0 && h.lists <= 65536 &&
              h.labels < (1ull << 40) && h.rows <= h.labels;
  IndexHeader want = sane ? layout(h.labels, h.lists, h.rows) : IndexHeader{};
  if (sane) std::memcpy(&want, &h, offsetof(IndexHeader, off_centroids));
  if (!sane || std::memcmp(&h, &want, sizeof h) != 0 || h.file_size != map_->size())
    throw std::runtime_error(path + ": not an index file or damaged (header mismatch)");
  // A query reads whole lists (codes and records), so the file is read in 2 MiB folios.
  map_->advise_huge(0, map_->size());
  const uint8_t* b = reinterpret_cast<const uint8_t*>(map_->data());
  centroids_ = Centroids::load(b + h.off_centroids, h.lists);
  trained_rows_ = h.trained_rows, label_base_ = h.label_base, labels_ = h.labels;
  list_of_ = reinterpret_cast<const uint32_t*>(b + h.off_list_of);
  offsets_ = reinterpret_cast<const uint64_t*>(b + h.off_offsets);
  first_ends_ = reinterpret_cast<const uint64_t*>(b + h.off_first_ends);
  codes_ = reinterpret_cast<const int8_t*>(b + h.off_codes);
  recs_ = reinterpret_cast<const IndexRec*>(b + h.off_recs);
  bool ordered = offsets_[0] == 0 && offsets_[h.lists] == h.rows;
  for (size_t l = 0; l < h.lists && ordered; l++) ordered = offsets_[l] <= first_ends_[l] && first_ends_[l] <= offsets_[l + 1];
  if (!ordered) throw std::runtime_error(path + ": damaged (list offsets)");
}

IndexFile::~IndexFile() = default;

void IndexFile::write(const std::string& path, const Centroids& centroids, uint64_t trained_rows, uint64_t label_base, const uint32_t* list_of,
                      uint64_t labels, const std::vector<uint64_t>& counts, const std::vector<uint64_t>& firsts, const RowSource& row) {
  uint64_t rows = 0;
  for (uint64_t c : counts) rows += c;
  IndexHeader h = layout(labels, centroids.size(), rows);
  h.trained_rows = trained_rows;
  h.label_base = label_base;
  std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw std::runtime_error("create " + tmp + ": " + std::strerror(errno));
  // Written in 4 MiB blocks at 4 MiB boundaries (rows go through the buffer one by one), so the
  // page cache holds the file in 2 MiB folios that its huge-page mapping maps whole (Mapping).
  std::vector<char> buffer(size_t(4) << 20);
  std::setvbuf(f, buffer.data(), _IOFBF, buffer.size());
  try {
    auto put = [&](const void* p, size_t n) {
      if (n && std::fwrite(p, 1, n, f) != n) throw std::runtime_error("write " + tmp + ": " + std::strerror(errno));
    };
    auto pad_to = [&](uint64_t off) {
      static const char zero[64] = {};
      long at = std::ftell(f);
      if (at < 0 || (uint64_t)at > off) throw std::runtime_error("write " + tmp + ": layout");
      while ((uint64_t)at < off) {
        size_t n = std::min<uint64_t>(64, off - at);
        put(zero, n);
        at += (long)n;
      }
    };
    put(&h, sizeof h);
    pad_to(h.off_centroids);
    centroids.write(f, tmp);
    pad_to(h.off_list_of);
    put(list_of, labels * 4);
    pad_to(h.off_offsets);
    std::vector<uint64_t> offsets(counts.size() + 1, 0);
    for (size_t l = 0; l < counts.size(); l++) offsets[l + 1] = offsets[l] + counts[l];
    put(offsets.data(), offsets.size() * 8);
    pad_to(h.off_first_ends);
    std::vector<uint64_t> first_ends(counts.size());
    for (size_t l = 0; l < counts.size(); l++) first_ends[l] = offsets[l] + firsts[l];
    put(first_ends.data(), first_ends.size() * 8);
    pad_to(h.off_codes);
    std::vector<IndexRec> recs(rows);
    uint64_t at = 0;
    for (size_t l = 0; l < counts.size(); l++)
      for (uint64_t i = 0; i < counts[l]; i++, at++) {
        const int8_t* code;
        row(l, i, &code, &recs[at]);
        put(code, kDims);
      }
    pad_to(h.off_recs);
    put(recs.data(), rows * sizeof(IndexRec));
    pad_to(h.file_size);
    if (std::fflush(f) != 0 || ::fsync(fileno(f)) != 0) throw std::runtime_error("fsync " + tmp + ": " + std::strerror(errno));
  } catch (...) {
    std::fclose(f);
    ::unlink(tmp.c_str());
    throw;
  }
  std::fclose(f);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw std::runtime_error("rename " + tmp + ": " + std::strerror(errno));
}

}  // namespace nm
