// The int8 GEMM kernels of kernels.cc, one set per Highway target: AMX tiles or AVX-512 VNNI on
// AVX3_DL; (v)pmaddubsw on bytes on AVX2, AVX3, SSE4 and SSSE3 where B holds no -128, else
// (v)pmaddwd on int16-widened operands; SDOT on NEON with the dot-product extension, else MUL and
// SADALP on int16-widened operands; plain exact integer loops elsewhere. Included by kernels.cc
// inside its per-target namespace; integer sums are exact, so every path gives the same int32
// values.
//
// Per-target include (Highway's pattern): no include guard of the usual kind.
#if defined(TRAIL_REPOPS_GEMM_I8_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TRAIL_REPOPS_GEMM_I8_INL_H_
#undef TRAIL_REPOPS_GEMM_I8_INL_H_
#else
#define TRAIL_REPOPS_GEMM_I8_INL_H_
#endif

#include <cstring>
#include <vector>

#if HWY_ARCH_X86
#include <immintrin.h>
#elif HWY_ARCH_ARM_A64
#include <arm_neon.h>
#if defined(__linux__)
#include <sys/auxv.h>
#ifndef HWCAP_ASIMDDP
#define HWCAP_ASIMDDP (1 << 20)  // the Linux arm64 hwcap bit of the dot-product extension
#endif
#endif
#endif

#include "core/thread_pool.h"
#include "hwy/highway.h"
#include "repops/gemm_i8_amx.h"
#include "repops/gemm_i8_tiles-inl.h"
#include "repops/kernels.h"

HWY_BEFORE_NAMESPACE();
namespace trail::repops::HWY_NAMESPACE {

// int8 GEMM: exact, so any order gives the same bits.

#if HWY_TARGET == HWY_AVX3_DL
// AVX-512 VNNI: vpdpbusd multiplies 4 unsigned by 4 signed bytes and adds them to an int32 lane.
// A is made unsigned by adding 128 (xor 0x80); the bias 128·Σ_p B[j,p] is subtracted at the end.
// B is packed as [k/4][column][4 bytes], so one 64-byte load holds 16 columns × 4 depths.
constexpr size_t kI8MR = 6, kI8NV = 4, kI8NR = 16 * kI8NV;

// acc += dot4(a_u8, b_s8) in place. Inline asm because GCC 12 copies every accumulator through
// the stack around the _mm512_dpbusd_epi32 intrinsic (measured: 2x slower kernel).
__attribute__((target("avx512vnni"))) HWY_INLINE void DpBusd(__m512i& acc, __m512i a, __m512i b) {
  asm("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(a), "v"(b));
}

// Writes C[r, c] = acc - 128·sums[c] for an MR x NR tile straight from registers.
__attribute__((target("avx512vnni"))) void I8MicroKernel(size_t k4, const int32_t* ap,
                                                         const uint8_t* bp, const int32_t* sums,
                                                         int32_t* c, size_t ldc) {
  __m512i acc[kI8MR][kI8NV];
  HWY_UNROLL(8)
  for (size_t r = 0; r < kI8MR; ++r) {
    HWY_UNROLL(4)
    for (size_t v = 0; v < kI8NV; ++v) acc[r][v] = _mm512_setzero_si512();
  }
  for (size_t p = 0; p < k4; ++p) {
    __m512i b[kI8NV];
    HWY_UNROLL(4)
    for (size_t v = 0; v < kI8NV; ++v)
      b[v] = _mm512_loadu_si512(reinterpret_cast<const void*>(bp + (p * kI8NR + v * 16) * 4));
    HWY_UNROLL(8)
    for (size_t r = 0; r < kI8MR; ++r) {
      const __m512i a = _mm512_set1_epi32(ap[p * kI8MR + r]);
      HWY_UNROLL(4)
      for (size_t v = 0; v < kI8NV; ++v) DpBusd(acc[r][v], a, b[v]);
    }
  }
  HWY_UNROLL(4)
  for (size_t v = 0; v < kI8NV; ++v) {
    const __m512i bv =
        _mm512_slli_epi32(_mm512_loadu_si512(reinterpret_cast<const void*>(sums + v * 16)), 7);
    HWY_UNROLL(8)
    for (size_t r = 0; r < kI8MR; ++r)
      _mm512_storeu_si512(reinterpret_cast<void*>(c + r * ldc + v * 16),
                          _mm512_sub_epi32(acc[r][v], bv));
  }
}

void GemmI8Impl(const GemmI8Args& g) {
  if (AmxInt8InUse()) return GemmI8Amx(g);  // the same exact sums on AMX tiles
  if (g.M == 0 || g.N == 0) return;
  // A biased to unsigned (xor 0x80); the kernel subtracts 128·Σ_p B[p, j] to undo it.
  RunQuadGemm<kI8MR, kI8NR>(g, 0x80808080u, I8MicroKernel);
}
const char* GemmI8KernelName() { return AmxInt8InUse() ? "amx" : "vnni"; }
#elif HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_SSE4 || \
    HWY_TARGET == HWY_SSSE3 || HWY_TARGET == HWY_NEON
// AVX2, AVX-512 without VNNI, SSE4 and SSSE3: vpmaddwd (pmaddwd) multiplies pairs of int16 and
// adds each pair into an int32 lane; NEON does the same with MUL (int16 products of int8 values
// are exact: |p| <= 128² = 16384) and SADALP (adjacent pairs added into int32 lanes). Operands are
// widened to int16 when packed, so every int8 value (-128 too) is exact: a pair sum is at most
// 2·128² = 32768, far inside int32 (pmaddubsw on bytes would saturate int16 where a sign trick
// meets -128). B is packed as [k/2][column][2 × int16], one vector load holding kPairLanes columns
// × 2 depths; A as rows of int32 words of two int16 depths (widened as packed), broadcast.
#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3
#define TRAIL_PAIR_ATTR __attribute__((target("avx2")))
using PairVec = __m256i;
constexpr size_t kPairLanes = 8, kW16MR = 6, kW16NR = 16;  // 12 accumulators of 16 registers
TRAIL_PAIR_ATTR inline PairVec PairZero() { return _mm256_setzero_si256(); }
TRAIL_PAIR_ATTR inline PairVec PairLoad(const void* p) {
  return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}
TRAIL_PAIR_ATTR inline PairVec PairSet(int32_t w) { return _mm256_set1_epi32(w); }
TRAIL_PAIR_ATTR inline PairVec PairMadd(PairVec acc, PairVec a, PairVec b) {
  return _mm256_add_epi32(acc, _mm256_madd_epi16(a, b));
}
TRAIL_PAIR_ATTR inline void PairStore(void* p, PairVec v) {
  _mm256_storeu_si256(static_cast<__m256i*>(p), v);
}
#elif HWY_TARGET == HWY_NEON
#define TRAIL_PAIR_ATTR
using PairVec = int32x4_t;
constexpr size_t kPairLanes = 4, kW16MR = 6, kW16NR = 16;  // 24 accumulators of 32 registers
inline PairVec PairZero() { return vdupq_n_s32(0); }
inline PairVec PairLoad(const void* p) {
  return vreinterpretq_s32_s16(vld1q_s16(static_cast<const int16_t*>(p)));
}
inline PairVec PairSet(int32_t w) { return vdupq_n_s32(w); }
inline PairVec PairMadd(PairVec acc, PairVec a, PairVec b) {
  return vpadalq_s16(acc, vmulq_s16(vreinterpretq_s16_s32(a), vreinterpretq_s16_s32(b)));
}
inline void PairStore(void* p, PairVec v) { vst1q_s32(static_cast<int32_t*>(p), v); }
#else  // SSE2's pmaddwd, on every x86-64
#define TRAIL_PAIR_ATTR
using PairVec = __m128i;
constexpr size_t kPairLanes = 4, kW16MR = 2, kW16NR = 16;  // 8 accumulators of 16 registers
inline PairVec PairZero() { return _mm_setzero_si128(); }
inline PairVec PairLoad(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }
inline PairVec PairSet(int32_t w) { return _mm_set1_epi32(w); }
inline PairVec PairMadd(PairVec acc, PairVec a, PairVec b) {
  return _mm_add_epi32(acc, _mm_madd_epi16(a, b));
}
inline void PairStore(void* p, PairVec v) { _mm_storeu_si128(static_cast<__m128i*>(p), v); }
#endif
constexpr size_t kW16NV = kW16NR / kPairLanes;

// C[r, c] for an MR × NR tile, straight from registers; A as rows of k2 pair words.
TRAIL_PAIR_ATTR void I8PairKernel(size_t k2, const int32_t* ap, const int16_t* bp, int32_t* c,
                                  size_t ldc) {
  PairVec acc[kW16MR][kW16NV];
  HWY_UNROLL(6)
  for (size_t r = 0; r < kW16MR; ++r) {
    HWY_UNROLL(4)
    for (size_t v = 0; v < kW16NV; ++v) acc[r][v] = PairZero();
  }
  for (size_t p = 0; p < k2; ++p) {
    PairVec b[kW16NV];
    HWY_UNROLL(4)
    for (size_t v = 0; v < kW16NV; ++v) b[v] = PairLoad(bp + (p * kW16NR + v * kPairLanes) * 2);
    HWY_UNROLL(6)
    for (size_t r = 0; r < kW16MR; ++r) {
      const PairVec a = PairSet(ap[r * k2 + p]);
      HWY_UNROLL(4)
      for (size_t v = 0; v < kW16NV; ++v) acc[r][v] = PairMadd(acc[r][v], a, b[v]);
    }
  }
  HWY_UNROLL(6)
  for (size_t r = 0; r < kW16MR; ++r) {
    HWY_UNROLL(4)
    for (size_t v = 0; v < kW16NV; ++v) PairStore(c + r * ldc + v * kPairLanes, acc[r][v]);
  }
}
#undef TRAIL_PAIR_ATTR

// Two int16 depths as one int32 word (the low half the first), as vpmaddwd pairs them.
inline int32_t PairWord(int16_t lo, int16_t hi) {
  return static_cast<int32_t>(uint32_t{static_cast<uint16_t>(lo)} |
                              uint32_t{static_cast<uint16_t>(hi)} << 16);
}

// A row of K int8 widened to k2 = ceil(K/2) pair words (word p = depths 2p, 2p+1; zero-padded).
void WidenRowToPairs(const int8_t* row, size_t K, int32_t* words) {
  namespace hn = hwy::HWY_NAMESPACE;
  const hn::Full128<int8_t> d8;
  const hn::Full64<int8_t> d8h;
  const hn::Full128<int16_t> d16;
  int16_t* halves = reinterpret_cast<int16_t*>(words);  // written by vector stores only
  size_t p = 0;
  for (; p + 16 <= K; p += 16) {
    const auto v = hn::LoadU(d8, row + p);
    hn::StoreU(hn::PromoteTo(d16, hn::LowerHalf(d8h, v)), d16, halves + p);
    hn::StoreU(hn::PromoteTo(d16, hn::UpperHalf(d8h, v)), d16, halves + p + 8);
  }
  for (; p < K; p += 2) words[p / 2] = PairWord(row[p], p + 1 < K ? row[p + 1] : int8_t{0});
}

// The depths [0, K/8·8) of the whole panel of Bᵀ [N, K] from column j0, as PackPairPanel lays
// them out: for 4 columns × 8 depths, each column's bytes widened to 4 pair words, then the 4 × 4
// words transposed so each store is one depth pair's 4 columns. Returns the depths packed.
size_t PackPairPanelFromBt(const GemmI8Args& g, size_t j0, int16_t* panel) {
  namespace hn = hwy::HWY_NAMESPACE;
  const hn::Full64<int8_t> d8;
  const hn::Full128<int16_t> d16;
  const hn::Full128<int32_t> d32;
  const hn::Full128<int64_t> d64;
  const size_t K = g.K, whole = K / 8 * 8;
  for (size_t c0 = 0; c0 < kW16NR; c0 += 4) {
    for (size_t p = 0; p < whole; p += 8) {
      hn::Vec<decltype(d32)> w[4];  // w[c]: column c0 + c, pair words p/2 .. p/2 + 3
      for (size_t c = 0; c < 4; ++c)
        w[c] = hn::BitCast(d32, hn::PromoteTo(d16, hn::LoadU(d8, g.bt + (j0 + c0 + c) * K + p)));
      const auto t0 = hn::BitCast(d64, hn::InterleaveLower(w[0], w[1]));
      const auto t1 = hn::BitCast(d64, hn::InterleaveLower(w[2], w[3]));
      const auto t2 = hn::BitCast(d64, hn::InterleaveUpper(d32, w[0], w[1]));
      const auto t3 = hn::BitCast(d64, hn::InterleaveUpper(d32, w[2], w[3]));
      const hn::Vec<decltype(d64)> rows[4] = {
          hn::InterleaveLower(t0, t1), hn::InterleaveUpper(d64, t0, t1),
          hn::InterleaveLower(t2, t3), hn::InterleaveUpper(d64, t2, t3)};
      for (size_t k = 0; k < 4; ++k)  // pair word p/2 + k of the 4 columns
        hn::StoreU(hn::BitCast(d16, rows[k]), d16, panel + ((p / 2 + k) * kW16NR + c0) * 2);
    }
  }
  return whole;
}

// B panel jp (columns [jp·NR, +NR)) as [k2][column][2 × int16], zero-padded. A whole panel of B
// as [K, N] takes two rows' 16 columns at a time, interleaved bytewise and widened.
void PackPairPanel(const GemmI8Args& g, size_t jp, int16_t* panel) {
  const size_t K = g.K, N = g.N, j0 = jp * kW16NR, cols = std::min(kW16NR, N - j0);
  static_assert(kW16NR == 16 && kW16NR % 4 == 0, "the vector packings write 16-column rows");
  if (g.b != nullptr && cols == kW16NR) {
    namespace hn = hwy::HWY_NAMESPACE;
    const hn::Full128<int8_t> d8;
    const hn::Full64<int8_t> d8h;
    const hn::Full128<int16_t> d16;
    for (size_t q = 0; 2 * q < K; ++q) {
      const auto r0 = hn::LoadU(d8, g.b + 2 * q * N + j0);
      const auto r1 = 2 * q + 1 < K ? hn::LoadU(d8, g.b + (2 * q + 1) * N + j0) : hn::Zero(d8);
      const auto lo = hn::InterleaveLower(r0, r1), hi = hn::InterleaveUpper(d8, r0, r1);
      int16_t* dst = panel + q * 32;
      hn::StoreU(hn::PromoteTo(d16, hn::LowerHalf(d8h, lo)), d16, dst);
      hn::StoreU(hn::PromoteTo(d16, hn::UpperHalf(d8h, lo)), d16, dst + 8);
      hn::StoreU(hn::PromoteTo(d16, hn::LowerHalf(d8h, hi)), d16, dst + 16);
      hn::StoreU(hn::PromoteTo(d16, hn::UpperHalf(d8h, hi)), d16, dst + 24);
    }
    return;
  }
  size_t done = 0;  // depths packed by vectors (Bᵀ, whole panels)
  if (g.bt != nullptr && cols == kW16NR) done = PackPairPanelFromBt(g, j0, panel);
  for (size_t c = 0; c < cols; ++c) {
    const size_t j = j0 + c;
    for (size_t p = done; p < K; ++p) {
      const int8_t v = g.b != nullptr ? g.b[p * N + j] : g.bt[j * K + p];
      panel[((p >> 1) * kW16NR + c) * 2 + (p & 1)] = v;
    }
  }
}

void GemmI8Pairs(const GemmI8Args& g) {
  const size_t M = g.M, N = g.N, K = g.K;
  const size_t k2 = (K + 1) / 2, panels = (N + kW16NR - 1) / kW16NR;
  ThreadPool& pool = KernelPool();
  thread_local std::vector<int16_t> bpack_storage;  // reused per calling thread, as above
  bpack_storage.assign(panels * k2 * kW16NR * 2, 0);
  std::vector<int16_t>& bpack = bpack_storage;
  pool.ParallelFor(panels,
                   [&](size_t jp) { PackPairPanel(g, jp, bpack.data() + jp * k2 * kW16NR * 2); });
  const auto pack_a = [&](size_t ip, int32_t* ap) {  // rows of pair words, ap[r·k2 + p]
    for (size_t r = 0; r < kW16MR; ++r) {
      const size_t i = ip * kW16MR + r;
      if (i < M) {
        WidenRowToPairs(g.a + i * K, K, ap + r * k2);
      } else {
        std::fill(ap + r * k2, ap + (r + 1) * k2, 0);
      }
    }
  };
  RunI8Tiles<kW16MR, kW16NR>(g, k2, panels, pack_a,
                             [&](const int32_t* ap, size_t jp, int32_t* c, size_t ldc) {
                               I8PairKernel(k2, ap, bpack.data() + jp * k2 * kW16NR * 2, c, ldc);
                             });
}

#if HWY_ARCH_X86
// vpmaddubsw with a sign trick (|a| × b·sign(a), then vpmaddwd by ones) does the same products in
// as many multiply-port instructions, needs B free of -128, and measured about 17% slower than
// this kernel (Zen 4, AVX2 forced: 120 against 145 GOP/s); so x86 takes the pair kernel.
void GemmI8Impl(const GemmI8Args& g) {
  if (g.M == 0 || g.N == 0) return;
  GemmI8Pairs(g);
}
const char* GemmI8KernelName() { return "pmaddwd"; }
#else  // NEON
// SDOT (the dot-product extension: ARMv8.2's optional FEAT_DotProd, in nearly every core since
// Cortex-A55/A76 and Neoverse N1): 4 signed × 4 signed bytes added into an int32 lane, exact for
// every int8 value (|dot| <= 4·128² = 65,536). Chosen at run time from the CPU's hwcaps; without
// it, the pair kernel above. B is packed in 4-byte depth groups (a vector: 4 columns × 4 depths),
// A as kSdotMR rows' words, 4 to a vector; vdotq_laneq_s32 takes one row's word from a lane.
#define TRAIL_SDOT_ATTR __attribute__((target("arch=armv8.2-a+dotprod")))
constexpr size_t kSdotMR = 8, kSdotNR = 12, kSdotNV = 3;  // 24 accumulators, 3 B, 2 A of 32

template <int kLane>
TRAIL_SDOT_ATTR HWY_INLINE void SdotRow(int32x4_t* acc, const int8x16_t* b, int8x16_t a) {
  acc[0] = vdotq_laneq_s32(acc[0], b[0], a, kLane);
  acc[1] = vdotq_laneq_s32(acc[1], b[1], a, kLane);
  acc[2] = vdotq_laneq_s32(acc[2], b[2], a, kLane);
}

// C[r, c] for an 8 × 12 tile, straight from registers (sums unused: nothing is biased).
TRAIL_SDOT_ATTR void I8SdotKernel(size_t k4, const int32_t* ap, const uint8_t* bp,
                                  const int32_t* /*sums*/, int32_t* c, size_t ldc) {
  int32x4_t acc[kSdotMR][kSdotNV];
  for (size_t r = 0; r < kSdotMR; ++r)
    for (size_t v = 0; v < kSdotNV; ++v) acc[r][v] = vdupq_n_s32(0);
  for (size_t p = 0; p < k4; ++p) {
    const int8_t* bq = reinterpret_cast<const int8_t*>(bp + p * kSdotNR * 4);
    const int8x16_t b[kSdotNV] = {vld1q_s8(bq), vld1q_s8(bq + 16), vld1q_s8(bq + 32)};
    const int8_t* aq = reinterpret_cast<const int8_t*>(ap + p * kSdotMR);
    const int8x16_t a0 = vld1q_s8(aq), a1 = vld1q_s8(aq + 16);
    SdotRow<0>(acc[0], b, a0), SdotRow<1>(acc[1], b, a0);
    SdotRow<2>(acc[2], b, a0), SdotRow<3>(acc[3], b, a0);
    SdotRow<0>(acc[4], b, a1), SdotRow<1>(acc[5], b, a1);
    SdotRow<2>(acc[6], b, a1), SdotRow<3>(acc[7], b, a1);
  }
  for (size_t r = 0; r < kSdotMR; ++r)
    for (size_t v = 0; v < kSdotNV; ++v) vst1q_s32(c + r * ldc + v * 4, acc[r][v]);
}
#undef TRAIL_SDOT_ATTR

inline bool CpuHasDotProd() {
#if defined(__linux__)
  static const bool has = (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
  return has;
#else
  return false;
#endif
}

void GemmI8Impl(const GemmI8Args& g) {
  if (g.M == 0 || g.N == 0) return;
  if (CpuHasDotProd()) return RunQuadGemm<kSdotMR, kSdotNR>(g, 0, I8SdotKernel);
  GemmI8Pairs(g);
}
const char* GemmI8KernelName() { return CpuHasDotProd() ? "sdot" : "mul+sadalp"; }
#endif
#else
// Portable path: one exact int32 dot product per output (integer sums are exact, so the order
// each is summed in does not matter).
void GemmI8Impl(const GemmI8Args& g) {
  if (g.out != nullptr) return GemmI8ThroughScratch(g, &GemmI8Impl);
  KernelPool().ParallelFor(static_cast<size_t>(g.M), [&](size_t i) {
    const int8_t* a = g.a + i * g.K;
    int32_t* c = g.c + i * g.N;
    if (g.b != nullptr) {  // B as [K, N]: row i of C accumulates a[p] times row p of B
      std::fill(c, c + g.N, 0);
      for (int64_t p = 0; p < g.K; ++p) {
        const int32_t ap = a[p];
        const int8_t* b = g.b + p * g.N;
        for (int64_t j = 0; j < g.N; ++j) c[j] += ap * int32_t{b[j]};
      }
      return;
    }
    for (int64_t j = 0; j < g.N; ++j) {
      const int8_t* b = g.bt + j * g.K;
      int32_t acc = 0;
      for (int64_t p = 0; p < g.K; ++p) acc += int32_t{a[p]} * int32_t{b[p]};
      c[j] = acc;
    }
  });
}
const char* GemmI8KernelName() { return "scalar"; }
#endif

}  // namespace trail::repops::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // TRAIL_REPOPS_GEMM_I8_INL_H_
