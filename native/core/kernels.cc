#include "kernels.h"

#include <cpuid.h>
#include <immintrin.h>

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

namespace nm {

// ---- scalar half <-> float (round to nearest even), used by the generic path and tools ----

float f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t man = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      exp = 1;
      while ((man & 0x400) == 0) {
        man <<= 1;
        exp--;
      }
      man &= 0x3ff;
      bits = sign | ((exp + 112) << 23) | (man << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000 | (man << 13);
  } else {
    bits = sign | ((exp + 112) << 23) | (man << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t f32_to_f16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000;
  int32_t exp = (int32_t)((x >> 23) & 0xff) - 127 + 15;
  uint32_t man = x & 0x7fffff;
  if (((x >> 23) & 0xff) == 0xff) return (uint16_t)(sign | 0x7c00 | (man ? 0x200 : 0));
  if (exp >= 31) return (uint16_t)(sign | 0x7c00);
  if (exp <= 0) {
    if (exp < -10) return (uint16_t)sign;
    man |= 0x800000;
    uint32_t shift = (uint32_t)(14 - exp);
    uint32_t half = man >> shift;
    uint32_t rem = man & ((1u << shift) - 1);
    uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) half++;
    return (uint16_t)(sign | half);
  }
  uint32_t half = sign | ((uint32_t)exp << 10) | (man >> 13);
  uint32_t rem = man & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (half & 1))) half++;  // may carry into the exponent: correct
  return (uint16_t)half;
}

void f32_to_f16_n(const float* in, uint16_t* out, size_t n) { kernels().to_f16(in, out, n); }

float quantize_i8(const float* v, int8_t* code, size_t n) { return kernels().quantize_i8(v, code, n); }

// ---- generic ----

static float dot_f16_f32_generic(const uint16_t* v, const float* q, size_t n) {
  float s = 0;
  for (size_t i = 0; i < n; i++) s += f16_to_f32(v[i]) * q[i];
  return s;
}
static int32_t dot_i8_generic(const int8_t* v, const int8_t* q, int32_t, size_t n) {
  int32_t s = 0;
  for (size_t i = 0; i < n; i++) s += (int32_t)v[i] * (int32_t)q[i];
  return s;
}
static void dot_i8_4x4_generic(const int8_t* const* v, const int8_t* const* q, const int32_t* qsum, size_t n, int32_t* out) {
  for (int r = 0; r < 4; r++)
    for (int j = 0; j < 4; j++) out[r * 4 + j] = dot_i8_generic(v[r], q[j], qsum[j], n);
}
static uint32_t tile_mask_generic(const int32_t* dots, const float* row_scale, const float* q_scale, const float* half_l1, const float* floor) {
  uint32_t m = 0;
  for (int r = 0; r < 4; r++)
    for (int j = 0; j < 4; j++) {
      float v = q_scale[j] * (float)dots[r * 4 + j];
      v = v + half_l1[j];
      v = row_scale[r] * v;
      if (v >= floor[j]) m |= 1u << (r * 4 + j);
    }
  return m;
}
static uint32_t row_mask16_generic(const int32_t* dots, float row_scale, const float* q_scale, const float* half_l1, const float* floor) {
  uint32_t m = 0;
  for (int j = 0; j < 16; j++) {
    float v = q_scale[j] * (float)dots[j];
    v = v + half_l1[j];
    v = row_scale * v;
    if (v >= floor[j]) m |= 1u << j;
  }
  return m;
}
static void dot_i8_4x1_generic(const int8_t* const* v, const int8_t* q, int32_t qsum, size_t n, int32_t* out) {
  for (int r = 0; r < 4; r++) out[r] = dot_i8_generic(v[r], q, qsum, n);
}
static void to_f16_generic(const float* in, uint16_t* out, size_t n) {
  for (size_t i = 0; i < n; i++) out[i] = f32_to_f16(in[i]);
}
static float quantize_i8_generic(const float* v, int8_t* code, size_t n) {
  float m = 0;
  for (size_t i = 0; i < n; i++) m = std::fmax(m, std::fabs(v[i]));
  if (m == 0) {
    std::memset(code, 0, n);
    return 0;
  }
  float scale = m / 127.0f, inv = 127.0f / m;
  for (size_t i = 0; i < n; i++) code[i] = (int8_t)std::lrintf(v[i] * inv);
  return scale;
}
static uint64_t sum_bytes_generic(const uint8_t* p, size_t n) {
  uint64_t s = 0;
  for (size_t i = 0; i < n; i++) s += p[i];
  return s;
}

// ---- AVX2 + F16C + FMA (n % 16 == 0) ----

__attribute__((target("avx2,fma,f16c"))) static float hsum256(__m256 x) {
  __m128 lo = _mm256_castps256_ps128(x), hi = _mm256_extractf128_ps(x, 1);
  lo = _mm_add_ps(lo, hi);
  lo = _mm_hadd_ps(lo, lo);
  lo = _mm_hadd_ps(lo, lo);
  return _mm_cvtss_f32(lo);
}
__attribute__((target("avx2,fma,f16c"))) static float dot_f16_f32_avx2(const uint16_t* v, const float* q, size_t n) {
  __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
  for (size_t i = 0; i < n; i += 16) {
    __m256 x0 = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(v + i)));
    __m256 x1 = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(v + i + 8)));
    a0 = _mm256_fmadd_ps(x0, _mm256_loadu_ps(q + i), a0);
    a1 = _mm256_fmadd_ps(x1, _mm256_loadu_ps(q + i + 8), a1);
  }
  return hsum256(_mm256_add_ps(a0, a1));
}
__attribute__((target("avx2"))) static int32_t hsum256_epi32(__m256i acc) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
  s = _mm_hadd_epi32(s, s);
  s = _mm_hadd_epi32(s, s);
  return _mm_cvtsi128_si32(s);
}
// int8 x int8 by sign extension to int16 and madd: exact (|products| <= 127 * 127).
__attribute__((target("avx2"))) static int32_t dot_i8_avx2(const int8_t* v, const int8_t* q, int32_t, size_t n) {
  __m256i a0 = _mm256_setzero_si256(), a1 = _mm256_setzero_si256();
  for (size_t i = 0; i < n; i += 32) {
    __m256i x0 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i*)(v + i)));
    __m256i x1 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i*)(v + i + 16)));
    a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(x0, _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i*)(q + i)))));
    a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(x1, _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i*)(q + i + 16)))));
  }
  return hsum256_epi32(_mm256_add_epi32(a0, a1));
}
// Four rows against one query: the query is widened once a step for all four.
__attribute__((target("avx2"))) static void dot_i8_4x1_avx2(const int8_t* const* v, const int8_t* q, int32_t, size_t n, int32_t* out) {
  __m256i a0 = _mm256_setzero_si256(), a1 = _mm256_setzero_si256(), a2 = _mm256_setzero_si256(), a3 = _mm256_setzero_si256();
  for (size_t i = 0; i < n; i += 16) {
    __m256i y = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i*)(q + i)));
    a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i*)(v[0] + i))), y));
    a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i*)(v[1] + i))), y));
    a2 = _mm256_add_epi32(a2, _mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i*)(v[2] + i))), y));
    a3 = _mm256_add_epi32(a3, _mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i*)(v[3] + i))), y));
  }
  out[0] = hsum256_epi32(a0), out[1] = hsum256_epi32(a1), out[2] = hsum256_epi32(a2), out[3] = hsum256_epi32(a3);
}
// AVX2 has 16 vector registers: a 4 x 4 tile of accumulators would spill, so one query at a time.
__attribute__((target("avx2"))) static void dot_i8_4x4_avx2(const int8_t* const* v, const int8_t* const* q, const int32_t* qsum, size_t n, int32_t* out) {
  int32_t col[4];
  for (int j = 0; j < 4; j++) {
    dot_i8_4x1_avx2(v, q[j], qsum[j], n, col);
    for (int r = 0; r < 4; r++) out[r * 4 + j] = col[r];
  }
}
__attribute__((target("avx2"))) static uint64_t sum_bytes_avx2(const uint8_t* p, size_t n) {
  __m256i acc = _mm256_setzero_si256();
  for (size_t i = 0; i < n; i += 64) {
    acc = _mm256_add_epi64(acc, _mm256_sad_epu8(_mm256_loadu_si256((const __m256i*)(p + i)), _mm256_setzero_si256()));
    acc = _mm256_add_epi64(acc, _mm256_sad_epu8(_mm256_loadu_si256((const __m256i*)(p + i + 32)), _mm256_setzero_si256()));
  }
  alignas(32) uint64_t l[4];
  _mm256_store_si256((__m256i*)l, acc);
  return l[0] + l[1] + l[2] + l[3];
}

// Every row appended is converted and quantised once: per row, the scalar versions cost more
// than the LMDB write that stored it.
__attribute__((target("avx2,fma,f16c"))) static void to_f16_avx2(const float* in, uint16_t* out, size_t n) {
  for (size_t i = 0; i < n; i += 8)
    _mm_storeu_si128((__m128i*)(out + i), _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
// As the generic version: the scale from the largest magnitude (NaN ignored, as fmax does),
// codes rounded to nearest even (cvtps_epi32 under the default MXCSR, as lrintf).
__attribute__((target("avx2,fma,f16c"))) static float quantize_i8_avx2(const float* v, int8_t* code, size_t n) {
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  __m256 m8 = _mm256_setzero_ps();
  for (size_t i = 0; i < n; i += 8) m8 = _mm256_max_ps(_mm256_and_ps(_mm256_loadu_ps(v + i), abs_mask), m8);
  __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(m8), _mm256_extractf128_ps(m8, 1));
  m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
  m4 = _mm_max_ss(m4, _mm_shuffle_ps(m4, m4, 1));
  float m = _mm_cvtss_f32(m4);
  if (m == 0) {
    std::memset(code, 0, n);
    return 0;
  }
  float scale = m / 127.0f, inv = 127.0f / m;
  const __m256 k = _mm256_set1_ps(inv);
  for (size_t i = 0; i < n; i += 16) {
    __m256i a = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(v + i), k));
    __m256i b = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(v + i + 8), k));
    // |codes| <= 127: the saturating packs are exact; they interleave 128-bit lanes, undone by the permute.
    __m256i w = _mm256_permute4x64_epi64(_mm256_packs_epi32(a, b), 0xd8);
    __m128i c = _mm_packs_epi16(_mm256_castsi256_si128(w), _mm256_extracti128_si256(w, 1));
    _mm_storeu_si128((__m128i*)(code + i), c);
  }
  return scale;
}

// ---- AVX-512 F + BW (n % 64 == 0) ----

__attribute__((target("avx512f,avx512bw,f16c,fma"))) static float dot_f16_f32_avx512(const uint16_t* v, const float* q, size_t n) {
  __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
  for (size_t i = 0; i < n; i += 32) {
    a0 = _mm512_fmadd_ps(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)(v + i))), _mm512_loadu_ps(q + i), a0);
    a1 = _mm512_fmadd_ps(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)(v + i + 16))), _mm512_loadu_ps(q + i + 16), a1);
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(a0, a1));
}
#define NM_AVX512 __attribute__((target("avx512f,avx512bw")))
#define NM_VNNI __attribute__((target("avx512f,avx512bw,avx512vnni")))

NM_AVX512 static inline __m512i widen(const int8_t* p) { return _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i*)p)); }
NM_AVX512 static int32_t dot_i8_avx512(const int8_t* v, const int8_t* q, int32_t, size_t n) {
  __m512i a0 = _mm512_setzero_si512(), a1 = _mm512_setzero_si512();
  for (size_t i = 0; i < n; i += 64) {
    a0 = _mm512_add_epi32(a0, _mm512_madd_epi16(widen(v + i), widen(q + i)));
    a1 = _mm512_add_epi32(a1, _mm512_madd_epi16(widen(v + i + 32), widen(q + i + 32)));
  }
  return _mm512_reduce_add_epi32(_mm512_add_epi32(a0, a1));
}
NM_AVX512 static void dot_i8_4x1_avx512(const int8_t* const* v, const int8_t* q, int32_t, size_t n, int32_t* out) {
  __m512i a0 = _mm512_setzero_si512(), a1 = _mm512_setzero_si512(), a2 = _mm512_setzero_si512(), a3 = _mm512_setzero_si512();
  for (size_t i = 0; i < n; i += 32) {
    __m512i y = widen(q + i);
    a0 = _mm512_add_epi32(a0, _mm512_madd_epi16(widen(v[0] + i), y));
    a1 = _mm512_add_epi32(a1, _mm512_madd_epi16(widen(v[1] + i), y));
    a2 = _mm512_add_epi32(a2, _mm512_madd_epi16(widen(v[2] + i), y));
    a3 = _mm512_add_epi32(a3, _mm512_madd_epi16(widen(v[3] + i), y));
  }
  out[0] = _mm512_reduce_add_epi32(a0), out[1] = _mm512_reduce_add_epi32(a1);
  out[2] = _mm512_reduce_add_epi32(a2), out[3] = _mm512_reduce_add_epi32(a3);
}
NM_AVX512 static void dot_i8_4x4_avx512(const int8_t* const* v, const int8_t* const* q, const int32_t* qsum, size_t n, int32_t* out) {
  int32_t col[4];
  for (int j = 0; j < 4; j++) {
    dot_i8_4x1_avx512(v, q[j], qsum[j], n, col);
    for (int r = 0; r < 4; r++) out[r * 4 + j] = col[r];
  }
}

// The same test on 16 lanes (lane r * 4 + j): the same three roundings in the same order as the
// generic version (no fused multiply-add), so both give the same bits.
NM_AVX512 static uint32_t tile_mask_avx512(const int32_t* dots, const float* row_scale, const float* q_scale, const float* half_l1, const float* floor) {
  __m512 d = _mm512_cvtepi32_ps(_mm512_loadu_si512(dots));
  __m512 qs = _mm512_broadcast_f32x4(_mm_loadu_ps(q_scale));
  __m512 hl = _mm512_broadcast_f32x4(_mm_loadu_ps(half_l1));
  __m512 fl = _mm512_broadcast_f32x4(_mm_loadu_ps(floor));
  __m512 rs = _mm512_permutexvar_ps(_mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3), _mm512_castps128_ps512(_mm_loadu_ps(row_scale)));
  __m512 v = _mm512_mul_ps(rs, _mm512_add_ps(_mm512_mul_ps(qs, d), hl));
  return (uint32_t)_mm512_cmp_ps_mask(v, fl, _CMP_GE_OQ);
}

// ---- AVX-512 VNNI: vpdpbusd multiplies unsigned by signed bytes, four to an int32 lane ----
// A row's codes XOR 0x80 are its codes + 128 as unsigned bytes, so
// dpbusd(v ^ 0x80, q) = dot(v, q) + 128 * sum(q), taken back off with the query's code sum.

// Sums of 16 vectors in one: lane k of the result is the sum of a[k]'s lanes (45 shuffles and
// adds for 16 sums, against ~9 each for separate reductions).
NM_AVX512 static inline __m512i sum4(__m512i a, __m512i b, __m512i c, __m512i d) {
  // Per 128-bit lane: [a0+a2, b0+b2, a1+a3, b1+b3], then [a, b, c, d] partial sums.
  __m512i ab = _mm512_add_epi32(_mm512_unpacklo_epi32(a, b), _mm512_unpackhi_epi32(a, b));
  __m512i cd = _mm512_add_epi32(_mm512_unpacklo_epi32(c, d), _mm512_unpackhi_epi32(c, d));
  return _mm512_add_epi32(_mm512_unpacklo_epi64(ab, cd), _mm512_unpackhi_epi64(ab, cd));
}
NM_AVX512 static inline __m512i sum16(const __m512i* a) {
  __m512i w0 = sum4(a[0], a[1], a[2], a[3]), w1 = sum4(a[4], a[5], a[6], a[7]);
  __m512i w2 = sum4(a[8], a[9], a[10], a[11]), w3 = sum4(a[12], a[13], a[14], a[15]);
  // Each w holds its four sums spread over the four 128-bit lanes: transpose the lanes and add.
  __m512i y01 = _mm512_add_epi32(_mm512_shuffle_i32x4(w0, w1, 0x44), _mm512_shuffle_i32x4(w0, w1, 0xEE));
  __m512i y23 = _mm512_add_epi32(_mm512_shuffle_i32x4(w2, w3, 0x44), _mm512_shuffle_i32x4(w2, w3, 0xEE));
  return _mm512_add_epi32(_mm512_shuffle_i32x4(y01, y23, 0x88), _mm512_shuffle_i32x4(y01, y23, 0xDD));
}
// vpdpbusd in place. GCC 12 does not tie the intrinsic's accumulator to its result: it copied
// every accumulator a step, and spilled two of a tile's sixteen (71 -> 45 ns a 4 x 4 tile).
#define NM_DPBUSD(acc, u8, s8) __asm__("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(u8), "v"(s8))

NM_VNNI static int32_t dot_i8_vnni(const int8_t* v, const int8_t* q, int32_t qsum, size_t n) {
  const __m512i flip = _mm512_set1_epi8((char)0x80);
  __m512i a0 = _mm512_setzero_si512(), a1 = _mm512_setzero_si512();
  for (size_t i = 0; i < n; i += 128) {
    __m512i x0 = _mm512_xor_si512(_mm512_loadu_si512(v + i), flip), y0 = _mm512_loadu_si512(q + i);
    __m512i x1 = _mm512_xor_si512(_mm512_loadu_si512(v + i + 64), flip), y1 = _mm512_loadu_si512(q + i + 64);
    NM_DPBUSD(a0, x0, y0);
    NM_DPBUSD(a1, x1, y1);
  }
  return _mm512_reduce_add_epi32(_mm512_add_epi32(a0, a1)) - 128 * qsum;
}
NM_VNNI static void dot_i8_4x1_vnni(const int8_t* const* v, const int8_t* q, int32_t qsum, size_t n, int32_t* out) {
  const __m512i flip = _mm512_set1_epi8((char)0x80);
  __m512i a0 = _mm512_setzero_si512(), a1 = _mm512_setzero_si512(), a2 = _mm512_setzero_si512(), a3 = _mm512_setzero_si512();
  for (size_t i = 0; i < n; i += 64) {
    __m512i y = _mm512_loadu_si512(q + i);
    __m512i x0 = _mm512_xor_si512(_mm512_loadu_si512(v[0] + i), flip), x1 = _mm512_xor_si512(_mm512_loadu_si512(v[1] + i), flip);
    __m512i x2 = _mm512_xor_si512(_mm512_loadu_si512(v[2] + i), flip), x3 = _mm512_xor_si512(_mm512_loadu_si512(v[3] + i), flip);
    NM_DPBUSD(a0, x0, y);
    NM_DPBUSD(a1, x1, y);
    NM_DPBUSD(a2, x2, y);
    NM_DPBUSD(a3, x3, y);
  }
  int32_t off = 128 * qsum;
  out[0] = _mm512_reduce_add_epi32(a0) - off, out[1] = _mm512_reduce_add_epi32(a1) - off;
  out[2] = _mm512_reduce_add_epi32(a2) - off, out[3] = _mm512_reduce_add_epi32(a3) - off;
}
// 16 accumulators and 8 operands stay in the 32 registers; each 64-byte step of 4 rows and
// 4 queries is 8 loads for 16 dpbusd.
NM_VNNI static void dot_i8_4x4_vnni(const int8_t* const* v, const int8_t* const* q, const int32_t* qsum, size_t n, int32_t* out) {
  const __m512i flip = _mm512_set1_epi8((char)0x80);
  const int8_t *v0 = v[0], *v1 = v[1], *v2 = v[2], *v3 = v[3], *q0 = q[0], *q1 = q[1], *q2 = q[2], *q3 = q[3];
  __m512i a00 = _mm512_setzero_si512(), a01 = a00, a02 = a00, a03 = a00, a10 = a00, a11 = a00, a12 = a00, a13 = a00;
  __m512i a20 = a00, a21 = a00, a22 = a00, a23 = a00, a30 = a00, a31 = a00, a32 = a00, a33 = a00;
  for (size_t i = 0; i < n; i += 64) {
    __m512i y0 = _mm512_loadu_si512(q0 + i), y1 = _mm512_loadu_si512(q1 + i), y2 = _mm512_loadu_si512(q2 + i), y3 = _mm512_loadu_si512(q3 + i);
    __m512i r = _mm512_xor_si512(_mm512_loadu_si512(v0 + i), flip);
    NM_DPBUSD(a00, r, y0); NM_DPBUSD(a01, r, y1); NM_DPBUSD(a02, r, y2); NM_DPBUSD(a03, r, y3);
    r = _mm512_xor_si512(_mm512_loadu_si512(v1 + i), flip);
    NM_DPBUSD(a10, r, y0); NM_DPBUSD(a11, r, y1); NM_DPBUSD(a12, r, y2); NM_DPBUSD(a13, r, y3);
    r = _mm512_xor_si512(_mm512_loadu_si512(v2 + i), flip);
    NM_DPBUSD(a20, r, y0); NM_DPBUSD(a21, r, y1); NM_DPBUSD(a22, r, y2); NM_DPBUSD(a23, r, y3);
    r = _mm512_xor_si512(_mm512_loadu_si512(v3 + i), flip);
    NM_DPBUSD(a30, r, y0); NM_DPBUSD(a31, r, y1); NM_DPBUSD(a32, r, y2); NM_DPBUSD(a33, r, y3);
  }
  const __m512i a[16] = {a00, a01, a02, a03, a10, a11, a12, a13, a20, a21, a22, a23, a30, a31, a32, a33};
  __m512i off = _mm512_setr_epi32(qsum[0], qsum[1], qsum[2], qsum[3], qsum[0], qsum[1], qsum[2], qsum[3], qsum[0], qsum[1], qsum[2],
                                  qsum[3], qsum[0], qsum[1], qsum[2], qsum[3]);
  _mm512_storeu_si512(out, _mm512_sub_epi32(sum16(a), _mm512_slli_epi32(off, 7)));
}

NM_AVX512 static uint64_t sum_bytes_avx512(const uint8_t* p, size_t n) {
  __m512i acc = _mm512_setzero_si512();
  for (size_t i = 0; i < n; i += 64) acc = _mm512_add_epi64(acc, _mm512_sad_epu8(_mm512_loadu_si512((const void*)(p + i)), _mm512_setzero_si512()));
  return (uint64_t)_mm512_reduce_add_epi64(acc);
}

// ---- AMX-INT8: tdpbssd multiplies a 16 x 64 tile of signed row codes by a 64 x 16 tile of
// signed query codes into 16 x 16 int32 dots, 16,384 multiply-adds an instruction (vpdpbusd
// does 64): a pass serving 64 queries then costs what its read does. Linux lends the tile
// registers only to a process that asked (ARCH_REQ_XCOMP_PERM); each thread loads its tile
// shapes before its first tile instruction. ----
#define NM_AMX __attribute__((target("avx512f,avx512bw,amx-tile,amx-int8")))

namespace {
struct TileConfig {
  uint8_t palette, start_row, reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
};
thread_local bool t_tiles = false;
}  // namespace

NM_AMX static void tiles_configure() {
  TileConfig cfg{};
  cfg.palette = 1;
  for (int t = 0; t < 8; t++) cfg.colsb[t] = 64, cfg.rows[t] = 16;
  _tile_loadconfig(&cfg);
  t_tiles = true;
}
NM_AMX static void tiles_release_amx() {
  if (!t_tiles) return;
  _tile_release();
  t_tiles = false;
}

// One step of amx_groups: 64 dims of the 16 rows into tile A, then each group's query tile
// (tmm6 and tmm7 in turn) times it into the group's dots. A macro: the tile intrinsics take
// their register as a literal.
#define NM_AMX_STEP(A, rows, b)        \
  do {                                 \
    _tile_loadd(A, rows, n);           \
    _tile_loadd(6, b, 64);             \
    _tile_dpbssd(0, A, 6);             \
    if (G > 1) {                       \
      _tile_loadd(7, (b) + gs, 64);     \
      _tile_dpbssd(1, A, 7);           \
    }                                  \
    if (G > 2) {                       \
      _tile_loadd(6, (b) + 2 * gs, 64); \
      _tile_dpbssd(2, A, 6);           \
    }                                  \
    if (G > 3) {                       \
      _tile_loadd(7, (b) + 3 * gs, 64); \
      _tile_dpbssd(3, A, 7);           \
    }                                  \
  } while (0)

// tmm0-3: the dots of up to four groups; tmm4 and tmm5 in turn: the 16 rows' next 64 bytes,
// read once for all the groups (two, so that a step's row load need not wait for the last
// step's products to have read theirs); tmm6-7: the groups' query tiles.
template <int G>
NM_AMX static inline void amx_groups(const int8_t* rows, const int8_t* b, size_t n, int32_t* out, const int8_t* ahead) {
  size_t steps = n / 64, gs = steps * 1024;
  _tile_zero(0);
  if (G > 1) _tile_zero(1);
  if (G > 2) _tile_zero(2);
  if (G > 3) _tile_zero(3);
  for (size_t s = 0; s < steps; s += 2) {
    if (ahead)
      for (size_t o = 0; o < 2048; o += 64) _mm_prefetch((const char*)ahead + s * 1024 + o, _MM_HINT_T0);
    NM_AMX_STEP(4, rows + s * 64, b + s * 1024);
    NM_AMX_STEP(5, rows + s * 64 + 64, b + s * 1024 + 1024);
  }
  _tile_stored(0, out, 64);
  if (G > 1) _tile_stored(1, out + 256, 64);
  if (G > 2) _tile_stored(2, out + 512, 64);
  if (G > 3) _tile_stored(3, out + 768, 64);
}

// A tile load waits for its 16 rows; with the next rows' prefetches spread over the steps (16
// lines a step), a pass reads at the memory's streaming rate, where one burst of 256 a block
// stalls on the line-fill buffers (a 1 GB read here: 45-54 ms, as a plain sequential read, against
// 52-88 ms with no prefetch and 55-67 ms with a burst).
NM_AMX static void dot_i8_16rows_amx(const int8_t* rows, const int8_t* packed, size_t n, size_t groups, int32_t* out, const int8_t* ahead) {
  if (!t_tiles) tiles_configure();
  size_t gs = n / 64 * 1024;
  for (size_t g = 0; g < groups; g += 4, ahead = nullptr) {
    const int8_t* b = packed + g * gs;
    int32_t* o = out + g * 256;
    switch (std::min<size_t>(4, groups - g)) {
      case 1: amx_groups<1>(rows, b, n, o, ahead); break;
      case 2: amx_groups<2>(rows, b, n, o, ahead); break;
      case 3: amx_groups<3>(rows, b, n, o, ahead); break;
      default: amx_groups<4>(rows, b, n, o, ahead); break;
    }
  }
}

// tile_mask's test on one row and 16 queries, the same three roundings in the same order.
NM_AVX512 static uint32_t row_mask16_avx512(const int32_t* dots, float row_scale, const float* q_scale, const float* half_l1, const float* floor) {
  __m512 d = _mm512_cvtepi32_ps(_mm512_loadu_si512(dots));
  __m512 v = _mm512_add_ps(_mm512_mul_ps(_mm512_loadu_ps(q_scale), d), _mm512_loadu_ps(half_l1));
  v = _mm512_mul_ps(_mm512_set1_ps(row_scale), v);
  return (uint32_t)_mm512_cmp_ps_mask(v, _mm512_loadu_ps(floor), _CMP_GE_OQ);
}

void pack_tiles(const int8_t* const* q, size_t n, int8_t* out) {
  for (size_t s = 0; s < n / 64; s++)
    for (size_t k = 0; k < 16; k++)
      for (size_t j = 0; j < 16; j++) std::memcpy(out + s * 1024 + k * 64 + j * 4, q[j] + s * 64 + k * 4, 4);
}

static const Kernels kGeneric{"generic", dot_f16_f32_generic, dot_i8_generic, dot_i8_4x4_generic, dot_i8_4x1_generic, tile_mask_generic, nullptr, nullptr, row_mask16_generic, sum_bytes_generic, to_f16_generic, quantize_i8_generic};
static const Kernels kAvx2{"avx2", dot_f16_f32_avx2, dot_i8_avx2, dot_i8_4x4_avx2, dot_i8_4x1_avx2, tile_mask_generic, nullptr, nullptr, row_mask16_generic, sum_bytes_avx2, to_f16_avx2, quantize_i8_avx2};
// Conversion and quantisation run once per appended row: the AVX2 versions are enough there.
static const Kernels kAvx512{"avx512", dot_f16_f32_avx512, dot_i8_avx512, dot_i8_4x4_avx512, dot_i8_4x1_avx512, tile_mask_avx512, nullptr, nullptr, row_mask16_avx512, sum_bytes_avx512, to_f16_avx2, quantize_i8_avx2};
static const Kernels kVnni{"avx512vnni", dot_f16_f32_avx512, dot_i8_vnni, dot_i8_4x4_vnni, dot_i8_4x1_vnni, tile_mask_avx512, nullptr, nullptr, row_mask16_avx512, sum_bytes_avx512, to_f16_avx2, quantize_i8_avx2};
// VNNI for single dots and a scan's last few rows, tiles for the many-queries pass.
static const Kernels kAmx{"amx", dot_f16_f32_avx512, dot_i8_vnni, dot_i8_4x4_vnni, dot_i8_4x1_vnni, tile_mask_avx512, dot_i8_16rows_amx, tiles_release_amx, row_mask16_avx512, sum_bytes_avx512, to_f16_avx2, quantize_i8_avx2};

static bool has_avx2() {
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
}
static bool has_avx512() { return has_avx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw"); }
static bool has_vnni() { return has_avx512() && __builtin_cpu_supports("avx512vnni"); }
// The CPU's AMX-INT8 and the kernel's leave to use its tile registers (XTILEDATA, state 18),
// asked for once for the whole process.
static bool has_amx() {
  static const bool ok = [] {
    // CPUID.(7, 0):EDX bits 24 and 25 (GCC 12's __builtin_cpu_supports does not know AMX).
    unsigned a, b, c, d;
    if (!has_vnni() || !__get_cpuid_count(7, 0, &a, &b, &c, &d) || !((d >> 24) & 1) || !((d >> 25) & 1)) return false;
    constexpr long kReqXcompPerm = 0x1023, kXtiledata = 18;
    return syscall(SYS_arch_prctl, kReqXcompPerm, kXtiledata) == 0;
  }();
  return ok;
}

static const Kernels* best() { return has_amx() ? &kAmx : has_vnni() ? &kVnni : has_avx512() ? &kAvx512 : has_avx2() ? &kAvx2 : &kGeneric; }
static const Kernels* g_active = nullptr;

const Kernels& kernels() {
  if (!g_active) g_active = best();
  return *g_active;
}

bool set_kernels(const char* force) {
  std::string f = force ? force : "";
  if (f == "" || f == "auto") g_active = best();
  else if (f == "generic") g_active = &kGeneric;
  else if (f == "avx2" && has_avx2()) g_active = &kAvx2;
  else if (f == "avx512" && has_avx512()) g_active = &kAvx512;
  else if (f == "avx512vnni" && has_vnni()) g_active = &kVnni;
  else if (f == "amx" && has_amx()) g_active = &kAmx;
  else return false;
  return true;
}

}  // namespace nm
