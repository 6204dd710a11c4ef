// Vector kernels with runtime ISA dispatch (generic / AVX2+F16C+FMA / AVX-512BW /
// AVX-512 VNNI / AMX-INT8). Every ISA computes the same integer dots exactly, so a scan's
// candidates do not depend on the CPU (tested).
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
  // AMX only (null elsewhere): out[(g * 16 + r) * 16 + j] = dot(row r, query 16 * g + j) for 16
  // rows `n` bytes apart (n % 128 == 0) from `rows` and `groups` groups of 16 queries laid out by pack_tiles;
  // the 16 rows at `ahead` (if not null) are prefetched meanwhile. The calling thread's tile
  // state stays configured until tiles_release.
  void (*dot_i8_16rows)(const int8_t* rows, const int8_t* packed, size_t n, size_t groups, int32_t* out, const int8_t* ahead);
  void (*tiles_release)();
  // The candidates of one row against 16 queries (every ISA): bit j is set when
  //   row_scale * (q_scale[j] * dots[j] + half_l1[j]) >= floor[j]
  // (tile_mask's test, with the same roundings in the same order).
  uint32_t (*row_mask16)(const int32_t* dots, float row_scale, const float* q_scale, const float* half_l1, const float* floor);
  // Sums `n` bytes (n % 64 == 0): a pure read, to measure memory bandwidth like the scan reads.
  uint64_t (*sum_bytes)(const uint8_t* p, size_t n);
  // f32 -> f16, rounding to nearest even (n % 16 == 0): what every appended row is stored as.
  void (*to_f16)(const float* in, uint16_t* out, size_t n);
  // int8 codes of a finite vector with one scale (n % 16 == 0): the coarse column.
  float (*quantize_i8)(const float* v, int8_t* code, size_t n);
};

// The kernels for this CPU (or for `force` = "generic" | "avx2" | "avx512" | "avx512vnni" |
// "amx", when supported; "amx" also needs the kernel's permission, asked for once).
const Kernels& kernels();
bool set_kernels(const char* force);

// 16 queries' codes (n % 64 == 0) as AMX's right-hand tiles: tile s (n / 64 of them, 1 KB
// each) holds dims [64 s, 64 s + 64), its row k the four dims 64 s + 4 k .. + 3 of each query
// in turn (out[s * 1024 + k * 64 + j * 4 + i] = q[j][64 s + 4 k + i]).
void pack_tiles(const int8_t* const* q, size_t n, int8_t* out);

// IEEE half <-> float.
float f16_to_f32(uint16_t h);
uint16_t f32_to_f16(float f);
// Through the active kernels (n % 16 == 0).
void f32_to_f16_n(const float* in, uint16_t* out, size_t n);

// Quantises a vector to int8 with one scale: v ≈ scale * code. Returns the scale.
float quantize_i8(const float* v, int8_t* code, size_t n);

}  // namespace nm
