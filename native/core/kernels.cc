#include "kernels.h"

#include <immintrin.h>

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

float quantize_i16(const float* q, int16_t* code, size_t n) {
  float m = 0;
  for (size_t i = 0; i < n; i++) m = std::fmax(m, std::fabs(q[i]));
  if (m == 0) {
    std::memset(code, 0, n * 2);
    return 0;
  }
  float scale = m / 32767.0f, inv = 32767.0f / m;
  for (size_t i = 0; i < n; i++) code[i] = (int16_t)std::lrintf(q[i] * inv);
  return scale;
}

// ---- generic ----

static float dot_f16_f32_generic(const uint16_t* v, const float* q, size_t n) {
  float s = 0;
  for (size_t i = 0; i < n; i++) s += f16_to_f32(v[i]) * q[i];
  return s;
}
static float dot_f16_f16_generic(const uint16_t* a, const uint16_t* b, size_t n) {
  float s = 0;
  for (size_t i = 0; i < n; i++) s += f16_to_f32(a[i]) * f16_to_f32(b[i]);
  return s;
}
static int32_t dot_i8_i16_generic(const int8_t* v, const int16_t* q, size_t n) {
  int32_t s = 0;
  for (size_t i = 0; i < n; i++) s += (int32_t)v[i] * (int32_t)q[i];
  return s;
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
  for (size_t i = 0; i < n; i += 8) {
    uint64_t x;
    std::memcpy(&x, p + i, 8);
    s += x;
  }
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
__attribute__((target("avx2,fma,f16c"))) static float dot_f16_f16_avx2(const uint16_t* a, const uint16_t* b, size_t n) {
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
  for (size_t i = 0; i < n; i += 16) {
    s0 = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(a + i))),
                         _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(b + i))), s0);
    s1 = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(a + i + 8))),
                         _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(b + i + 8))), s1);
  }
  return hsum256(_mm256_add_ps(s0, s1));
}
__attribute__((target("avx2"))) static int32_t dot_i8_i16_avx2(const int8_t* v, const int16_t* q, size_t n) {
  __m256i acc = _mm256_setzero_si256();
  for (size_t i = 0; i < n; i += 16) {
    __m256i x = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i*)(v + i)));
    acc = _mm256_add_epi32(acc, _mm256_madd_epi16(x, _mm256_loadu_si256((const __m256i*)(q + i))));
  }
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
  s = _mm_hadd_epi32(s, s);
  s = _mm_hadd_epi32(s, s);
  return _mm_cvtsi128_si32(s);
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

// ---- AVX-512 F + BW (n % 32 == 0) ----

__attribute__((target("avx512f,avx512bw,f16c,fma"))) static float dot_f16_f32_avx512(const uint16_t* v, const float* q, size_t n) {
  __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
  for (size_t i = 0; i < n; i += 32) {
    a0 = _mm512_fmadd_ps(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)(v + i))), _mm512_loadu_ps(q + i), a0);
    a1 = _mm512_fmadd_ps(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)(v + i + 16))), _mm512_loadu_ps(q + i + 16), a1);
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(a0, a1));
}
__attribute__((target("avx512f,avx512bw,f16c,fma"))) static float dot_f16_f16_avx512(const uint16_t* a, const uint16_t* b, size_t n) {
  __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
  for (size_t i = 0; i < n; i += 32) {
    s0 = _mm512_fmadd_ps(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)(a + i))),
                         _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)(b + i))), s0);
    s1 = _mm512_fmadd_ps(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)(a + i + 16))),
                         _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)(b + i + 16))), s1);
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(s0, s1));
}
__attribute__((target("avx512f,avx512bw"))) static int32_t dot_i8_i16_avx512(const int8_t* v, const int16_t* q, size_t n) {
  __m512i a0 = _mm512_setzero_si512(), a1 = _mm512_setzero_si512();
  for (size_t i = 0; i < n; i += 64) {
    __m512i x0 = _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i*)(v + i)));
    __m512i x1 = _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i*)(v + i + 32)));
    a0 = _mm512_add_epi32(a0, _mm512_madd_epi16(x0, _mm512_loadu_si512((const void*)(q + i))));
    a1 = _mm512_add_epi32(a1, _mm512_madd_epi16(x1, _mm512_loadu_si512((const void*)(q + i + 32))));
  }
  return _mm512_reduce_add_epi32(_mm512_add_epi32(a0, a1));
}
__attribute__((target("avx512f,avx512bw"))) static uint64_t sum_bytes_avx512(const uint8_t* p, size_t n) {
  __m512i acc = _mm512_setzero_si512();
  for (size_t i = 0; i < n; i += 64)
    acc = _mm512_add_epi64(acc, _mm512_sad_epu8(_mm512_loadu_si512((const void*)(p + i)), _mm512_setzero_si512()));
  return (uint64_t)_mm512_reduce_add_epi64(acc);
}

static const Kernels kGeneric{"generic", dot_f16_f32_generic, dot_f16_f16_generic, dot_i8_i16_generic, sum_bytes_generic, to_f16_generic, quantize_i8_generic};
static const Kernels kAvx2{"avx2", dot_f16_f32_avx2, dot_f16_f16_avx2, dot_i8_i16_avx2, sum_bytes_avx2, to_f16_avx2, quantize_i8_avx2};
// Conversion and quantisation run once per appended row: the AVX2 versions are enough there.
static const Kernels kAvx512{"avx512", dot_f16_f32_avx512, dot_f16_f16_avx512, dot_i8_i16_avx512, sum_bytes_avx512, to_f16_avx2, quantize_i8_avx2};

static bool has_avx2() {
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
}
static bool has_avx512() { return has_avx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw"); }

static const Kernels* best() { return has_avx512() ? &kAvx512 : has_avx2() ? &kAvx2 : &kGeneric; }
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
  else return false;
  return true;
}

}  // namespace nm
