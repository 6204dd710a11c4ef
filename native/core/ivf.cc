#include "ivf.h"

#include <algorithm>
#include <cmath>
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
  uint64_t n = size();
  if (std::fwrite(&n, 8, 1, f) != 1 || std::fwrite(code_.data(), 1, code_.size(), f) != code_.size() ||
      std::fwrite(scale_.data(), 4, scale_.size(), f) != scale_.size())
    throw std::runtime_error("write " + path + ": " + std::strerror(errno));
}

Centroids Centroids::read(std::FILE* f, const std::string& path) {
  uint64_t n = 0;
  Centroids c;
  if (std::fread(&n, 8, 1, f) != 1 || n == 0 || n > 65536) throw std::runtime_error(path + ": bad centroid count");
  c.code_.resize(n * kDims);
  c.scale_.resize(n);
  if (std::fread(c.code_.data(), 1, c.code_.size(), f) != c.code_.size() || std::fread(c.scale_.data(), 4, n, f) != n)
    throw std::runtime_error(path + ": truncated centroids");
  return c;
}

}  // namespace nm
