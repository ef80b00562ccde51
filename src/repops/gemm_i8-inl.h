// The int8 GEMM kernels of kernels.cc, one set per Highway target: AMX tiles or AVX-512 VNNI on
// AVX3_DL, (v)pmaddwd on int16-widened operands on AVX2, AVX3, SSE4 and SSSE3, plain exact
// integer loops elsewhere. Included by kernels.cc inside its per-target
// namespace; integer sums are exact, so every path gives the same int32 values.
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
#endif

#include "core/thread_pool.h"
#include "hwy/highway.h"
#include "repops/gemm_i8_amx.h"
#include "repops/kernels.h"

HWY_BEFORE_NAMESPACE();
namespace trail::repops::HWY_NAMESPACE {

// int8 GEMM: exact, so any order gives the same bits.

// The packed kernels' schedule over C [M, N] (g.c): row panels of MR rows, 8 to a task, and the
// NR-column panels split among tasks so that about 2·threads tasks exist. A task packs its row
// panels once (pack_a(ip, ap): `words` int32 depth words of each of the panel's MR rows, as
// ap[word·MR + r]), then runs every one of its column panels against all of them while that
// panel is in cache (with a long reduction the whole B is megabytes: streaming it once per row
// panel made the kernel memory-bound). kernel(ap, jp, c, ldc) writes an MR × NR tile at c; edge
// tiles go through a scratch tile.
template <size_t MR, size_t NR, class PackA, class Kernel>
void RunI8Tiles(const GemmI8Args& g, size_t words, size_t panels, PackA pack_a, Kernel kernel) {
  const size_t M = g.M, N = g.N;
  ThreadPool& pool = KernelPool();
  const size_t mpanels = (M + MR - 1) / MR, mgroups = (mpanels + 7) / 8;
  const size_t splits =
      std::max<size_t>(1, std::min(panels, (2 * pool.num_threads() + mgroups - 1) / mgroups));
  pool.ParallelFor(mgroups * splits, [&](size_t task) {
    const size_t jp0 = panels * (task % splits) / splits,
                 jp1 = panels * (task % splits + 1) / splits;
    const size_t ip0 = (task / splits) * 8, ip_end = std::min(mpanels, ip0 + 8);
    std::vector<int32_t> apack((ip_end - ip0) * words * MR);
    alignas(64) int32_t tile[MR * NR];
    for (size_t ip = ip0; ip < ip_end; ++ip) pack_a(ip, apack.data() + (ip - ip0) * words * MR);
    for (size_t jp = jp0; jp < jp1; ++jp) {
      const size_t cols = std::min(NR, N - jp * NR);
      for (size_t ip = ip0; ip < ip_end; ++ip) {
        const size_t rows = std::min(MR, M - ip * MR);
        const int32_t* ap = apack.data() + (ip - ip0) * words * MR;
        int32_t* c = g.c + ip * MR * N + jp * NR;
        if (rows == MR && cols == NR) {
          kernel(ap, jp, c, N);
        } else {
          kernel(ap, jp, tile, NR);
          for (size_t r = 0; r < rows; ++r) std::memcpy(c + r * N, tile + r * NR, cols * 4);
        }
      }
    }
  });
}

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

// Writes C[r, c] = acc - bias[c] for an MR x NR tile straight from registers.
__attribute__((target("avx512vnni"))) void I8MicroKernel(size_t k4, const int32_t* ap,
                                                         const uint8_t* bp, const int32_t* bias,
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
    const __m512i bv = _mm512_loadu_si512(reinterpret_cast<const void*>(bias + v * 16));
    HWY_UNROLL(8)
    for (size_t r = 0; r < kI8MR; ++r)
      _mm512_storeu_si512(reinterpret_cast<void*>(c + r * ldc + v * 16),
                          _mm512_sub_epi32(acc[r][v], bv));
  }
}

void GemmI8Impl(const GemmI8Args& g) {
  if (AmxInt8InUse()) return GemmI8Amx(g);  // the same exact sums on AMX tiles
  if (g.out != nullptr) return GemmI8ThroughScratch(g, &GemmI8Impl);
  const size_t M = g.M, N = g.N, K = g.K;
  if (M == 0 || N == 0) return;
  const size_t k4 = (K + 3) / 4, panels = (N + kI8NR - 1) / kI8NR;
  ThreadPool& pool = KernelPool();
  // Pack Bᵀ into VNNI panels (zero-padded); bias[j] = 128 * Σ_p B[j,p] undoes A's +128.
  // Reused per calling thread (a fresh buffer per call was mapped and faulted in anew); tasks
  // on other threads reach them through these references.
  thread_local std::vector<uint8_t> bpack_storage;
  thread_local std::vector<int32_t> bias_storage;
  bpack_storage.assign(panels * k4 * kI8NR * 4, 0);
  bias_storage.assign(panels * kI8NR, 0);
  std::vector<uint8_t>& bpack = bpack_storage;
  std::vector<int32_t>& bias = bias_storage;
  pool.ParallelFor(panels, [&](size_t jp) {
    uint8_t* panel = bpack.data() + jp * k4 * kI8NR * 4;
    if (g.b != nullptr) {  // B as [K, N]: interleave 4 rows' stretches of the panel's columns
      const size_t cols = std::min(kI8NR, N - jp * kI8NR);
      int32_t sum[kI8NR] = {};
      size_t p = 0;
      if (cols == kI8NR) {  // four rows into one word per column: constant trip counts
        for (; p + 4 <= K; p += 4) {
          const int8_t* s0 = g.b + p * N + jp * kI8NR;
          uint32_t* dst = reinterpret_cast<uint32_t*>(panel + (p >> 2) * kI8NR * 4);
          for (size_t c = 0; c < kI8NR; ++c) {
            const int8_t b0 = s0[c], b1 = s0[N + c], b2 = s0[2 * N + c], b3 = s0[3 * N + c];
            dst[c] = uint32_t{static_cast<uint8_t>(b0)} | uint32_t{static_cast<uint8_t>(b1)} << 8 |
                     uint32_t{static_cast<uint8_t>(b2)} << 16 |
                     uint32_t{static_cast<uint8_t>(b3)} << 24;
            sum[c] += (b0 + b1) + (b2 + b3);
          }
        }
      }
      for (; p < K; ++p) {
        const int8_t* src = g.b + p * N + jp * kI8NR;
        uint8_t* dst = panel + (p >> 2) * kI8NR * 4 + (p & 3);
        for (size_t c = 0; c < cols; ++c) {
          dst[c * 4] = static_cast<uint8_t>(src[c]);
          sum[c] += src[c];
        }
      }
      for (size_t c = 0; c < cols; ++c) bias[jp * kI8NR + c] = 128 * sum[c];
      return;
    }
    for (size_t c = 0; c < kI8NR && jp * kI8NR + c < N; ++c) {
      const size_t j = jp * kI8NR + c;
      const int8_t* src = g.bt + j * K;
      int32_t sum = 0;
      for (size_t p = 0; p < K; ++p) sum += src[p];
      for (size_t p4 = 0; p4 < K / 4; ++p4)  // whole groups of 4 as one word
        std::memcpy(panel + (p4 * kI8NR + c) * 4, src + 4 * p4, 4);
      for (size_t p = K / 4 * 4; p < K; ++p)
        panel[((p >> 2) * kI8NR + c) * 4 + (p & 3)] = static_cast<uint8_t>(src[p]);
      bias[j] = 128 * sum;
    }
  });
  // A rows as little-endian groups of 4 bytes, biased to unsigned; padding is 0x80 (value 0).
  const auto pack_a = [&](size_t ip, int32_t* ap) {
    for (size_t r = 0; r < kI8MR; ++r) {
      const size_t i = ip * kI8MR + r;
      const size_t full = i < M ? K / 4 : 0;  // whole groups of 4 inside the row
      const int8_t* row = g.a + i * K;
      for (size_t p = 0; p < full; ++p) {
        uint32_t word;
        std::memcpy(&word, row + 4 * p, 4);
        ap[p * kI8MR + r] = static_cast<int32_t>(word ^ 0x80808080u);
      }
      for (size_t p = full; p < k4; ++p) {
        uint32_t word = 0;
        for (size_t q = 0; q < 4; ++q) {
          const size_t kk = p * 4 + q;
          const uint32_t byte = (i < M && kk < K) ? (static_cast<uint8_t>(row[kk]) ^ 0x80u) : 0x80u;
          word |= byte << (8 * q);
        }
        ap[p * kI8MR + r] = static_cast<int32_t>(word);
      }
    }
  };
  RunI8Tiles<kI8MR, kI8NR>(
      g, k4, panels, pack_a, [&](const int32_t* ap, size_t jp, int32_t* c, size_t ldc) {
        I8MicroKernel(k4, ap, bpack.data() + jp * k4 * kI8NR * 4, bias.data() + jp * kI8NR, c, ldc);
      });
}
#elif HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_SSE4 || \
    HWY_TARGET == HWY_SSSE3 || HWY_TARGET == HWY_NEON
// AVX2, AVX-512 without VNNI, SSE4 and SSSE3: vpmaddwd (pmaddwd) multiplies pairs of int16 and
// adds each pair into an int32 lane; NEON does the same with MUL (int16 products of int8 values
// are exact: |p| <= 128² = 16384) and SADALP (adjacent pairs added into int32 lanes). Operands are
// widened to int16 when packed, so every int8 value (-128 too) is exact: a pair sum is at most
// 2·128² = 32768, far inside int32 (pmaddubsw on bytes would saturate int16 where a sign trick
// meets -128). B is packed as [k/2][column][2 × int16], one vector load holding kPairLanes columns
// × 2 depths; A as int32 words of two int16 depths, broadcast.
#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3
#define TRAIL_PAIR_ATTR __attribute__((target("avx2")))
using PairVec = __m256i;
constexpr size_t kPairLanes = 8, kW16MR = 6;  // 12 accumulators of 16 registers
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
constexpr size_t kPairLanes = 4, kW16MR = 6;  // 24 accumulators of 32 registers
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
constexpr size_t kPairLanes = 4, kW16MR = 2;  // 8 accumulators of 16 registers
inline PairVec PairZero() { return _mm_setzero_si128(); }
inline PairVec PairLoad(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }
inline PairVec PairSet(int32_t w) { return _mm_set1_epi32(w); }
inline PairVec PairMadd(PairVec acc, PairVec a, PairVec b) {
  return _mm_add_epi32(acc, _mm_madd_epi16(a, b));
}
inline void PairStore(void* p, PairVec v) { _mm_storeu_si128(static_cast<__m128i*>(p), v); }
#endif
constexpr size_t kW16NR = 16, kW16NV = kW16NR / kPairLanes;

// C[r, c] for an MR × NR tile, straight from registers.
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
      const PairVec a = PairSet(ap[p * kW16MR + r]);
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

// B panel jp (columns [jp·NR, +NR)) as [k2][column][2 × int16], zero-padded.
void PackPairPanel(const GemmI8Args& g, size_t jp, int16_t* panel) {
  const size_t K = g.K, N = g.N, cols = std::min(kW16NR, N - jp * kW16NR);
  for (size_t c = 0; c < cols; ++c) {
    const size_t j = jp * kW16NR + c;
    for (size_t p = 0; p < K; ++p) {
      const int8_t v = g.b != nullptr ? g.b[p * N + j] : g.bt[j * K + p];
      panel[((p >> 1) * kW16NR + c) * 2 + (p & 1)] = v;
    }
  }
}

void GemmI8Impl(const GemmI8Args& g) {
  if (g.out != nullptr) return GemmI8ThroughScratch(g, &GemmI8Impl);
  const size_t M = g.M, N = g.N, K = g.K;
  if (M == 0 || N == 0) return;
  const size_t k2 = (K + 1) / 2, panels = (N + kW16NR - 1) / kW16NR;
  ThreadPool& pool = KernelPool();
  thread_local std::vector<int16_t> bpack_storage;  // reused per calling thread, as above
  bpack_storage.assign(panels * k2 * kW16NR * 2, 0);
  std::vector<int16_t>& bpack = bpack_storage;
  pool.ParallelFor(panels,
                   [&](size_t jp) { PackPairPanel(g, jp, bpack.data() + jp * k2 * kW16NR * 2); });
  const auto pack_a = [&](size_t ip, int32_t* ap) {  // A rows as pair words, zero-padded
    for (size_t r = 0; r < kW16MR; ++r) {
      const size_t i = ip * kW16MR + r;
      for (size_t p = 0; p < k2; ++p) {
        const int16_t lo = (i < M && 2 * p < K) ? g.a[i * K + 2 * p] : 0;
        const int16_t hi = (i < M && 2 * p + 1 < K) ? g.a[i * K + 2 * p + 1] : 0;
        ap[p * kW16MR + r] = PairWord(lo, hi);
      }
    }
  };
  RunI8Tiles<kW16MR, kW16NR>(g, k2, panels, pack_a,
                             [&](const int32_t* ap, size_t jp, int32_t* c, size_t ldc) {
                               I8PairKernel(k2, ap, bpack.data() + jp * k2 * kW16NR * 2, c, ldc);
                             });
}
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
#endif

}  // namespace trail::repops::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // TRAIL_REPOPS_GEMM_I8_INL_H_
