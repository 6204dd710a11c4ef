// Vector kernels with runtime ISA dispatch (generic / AVX2+F16C+FMA / AVX-512BW).
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
  // dot(f16, f16): the HNSW metric.
  float (*dot_f16_f16)(const uint16_t* a, const uint16_t* b, size_t n);
  // dot(int8 code, int16 query code) in int32: the coarse pass.
  int32_t (*dot_i8_i16)(const int8_t* v, const int16_t* q, size_t n);
  // Sums `n` bytes (n % 64 == 0): a pure read, to measure memory bandwidth like the scan reads.
  uint64_t (*sum_bytes)(const uint8_t* p, size_t n);
  // f32 -> f16, rounding to nearest even (n % 16 == 0): what every appended row is stored as.
  void (*to_f16)(const float* in, uint16_t* out, size_t n);
  // int8 codes of a finite vector with one scale (n % 16 == 0): the coarse column.
  float (*quantize_i8)(const float* v, int8_t* code, size_t n);
};

// The kernels for this CPU (or for `force` = "generic" | "avx2" | "avx512", when supported).
const Kernels& kernels();
bool set_kernels(const char* force);

// IEEE half <-> float.
float f16_to_f32(uint16_t h);
uint16_t f32_to_f16(float f);
// Through the active kernels (n % 16 == 0).
void f32_to_f16_n(const float* in, uint16_t* out, size_t n);

// Quantises a vector to int8 with one scale: v ≈ scale * code. Returns the scale.
float quantize_i8(const float* v, int8_t* code, size_t n);
// Quantises a query to int16: q ≈ scale * code. Returns the scale.
float quantize_i16(const float* q, int16_t* code, size_t n);

}  // namespace nm
