// Vector kernels with runtime ISA dispatch (generic / AVX2+F16C+FMA / AVX-512BW /
// AVX-512 VNNI). Every ISA computes the same integer dots exactly, so a scan's candidates do not
// depend on the CPU (tested).
// The build is portable -O3; each kernel is compiled per ISA with target attributes and the
// best one the CPU supports is picked once, at first use.
#pragma once
#include <cstddef>
#include <cstdint>

namespace nm {

struct Kernels {
  const char* isa;
  // dot(f16 vector, f32 query): the exact rescoring pass.
  float (*dot_f16_f32)(const uint16_t* v, const float* q, size_t n);
  // Exact integer dot of two int8 codes (n % 64 == 0). `qsum` is the sum of q's codes: the
  // VNNI path multiplies (v + 128) as unsigned bytes by q and takes 128 * qsum back off.
  int32_t (*dot_i8)(const int8_t* v, const int8_t* q, int32_t qsum, size_t n);
  // A tile: out[r * 4 + j] = dot(v[r], q[j]) for 4 rows and 4 queries, each row read once
  // for all four queries (the many-queries-per-pass scan). Exact, as dot_i8.
  void (*dot_i8_4x4)(const int8_t* const* v, const int8_t* const* q, const int32_t* qsum, size_t n, int32_t* out);
  // out[r] = dot(v[r], q) for 4 rows: four rows' loads in flight for one query.
  void (*dot_i8_4x1)(const int8_t* const* v, const int8_t* q, int32_t qsum, size_t n, int32_t* out);
  // The candidates of a 4 x 4 tile: bit r * 4 + j is set when
  //   row_scale[r] * (q_scale[j] * dots[r * 4 + j] + half_l1[j]) >= floor[j]
  // (the int8 estimate plus its bound reaching the query's threshold less its fixed error).
  uint32_t (*tile_mask)(const int32_t* dots, const float* row_scale, const float* q_scale, const float* half_l1, const float* floor);
  // Sums `n` bytes (n % 64 == 0): a pure read, to measure memory bandwidth like the scan reads.
  uint64_t (*sum_bytes)(const uint8_t* p, size_t n);
  // f32 -> f16, rounding to nearest even (n % 16 == 0): what every appended row is stored as.
  void (*to_f16)(const float* in, uint16_t* out, size_t n);
  // int8 codes of a finite vector with one scale (n % 16 == 0): the coarse column.
  float (*quantize_i8)(const float* v, int8_t* code, size_t n);
};

// The kernels for this CPU (or for `force` = "generic" | "avx2" | "avx512" | "avx512vnni", when supported).
const Kernels& kernels();
bool set_kernels(const char* force);

// IEEE half <-> float.
float f16_to_f32(uint16_t h);
uint16_t f32_to_f16(float f);
// Through the active kernels (n % 16 == 0).
void f32_to_f16_n(const float* in, uint16_t* out, size_t n);

// Quantises a vector to int8 with one scale: v ≈ scale * code. Returns the scale.
float quantize_i8(const float* v, int8_t* code, size_t n);

}  // namespace nm
