// The fp32 GEMM kernel of kernels.cc, one per Highway target: packed panels and an MR x (NV*N)
// register tile, and the path for fewer rows than a tile. Included by kernels.cc inside its
// per-target namespace; every output is one FMA chain over the reduction index ascending
// (kernels.h, GemmArgs), whichever path computes it.
//
// Per-target include (Highway's pattern): no include guard of the usual kind.
#if defined(TRAIL_REPOPS_GEMM_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TRAIL_REPOPS_GEMM_INL_H_
#undef TRAIL_REPOPS_GEMM_INL_H_
#else
#define TRAIL_REPOPS_GEMM_INL_H_
#endif

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "core/thread_pool.h"
#include "hwy/aligned_allocator.h"
#include "hwy/highway.h"
#include "repops/hwy_ops-inl.h"
#include "repops/kernels.h"

HWY_BEFORE_NAMESPACE();
namespace trail::repops::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// ---------------------------------------------------------------------------------------------
// GEMM: packed panels and an MR x (NV*N) register tile. Blocking over K reloads the partial
// accumulators from C, which continues each output's single FMA chain unchanged.

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
constexpr size_t kMR = 6, kNV = 4;
#elif HWY_TARGET == HWY_AVX2 || HWY_ARCH_ARM_A64
constexpr size_t kMR = 6, kNV = 2 + 2 * HWY_ARCH_ARM_A64;
#else
constexpr size_t kMR = 4, kNV = 2;
#endif
// Measured on transformer shapes against OpenBLAS (bench/gemm_bench.cc): a long K block keeps
// the A micro-panel in L1 and streams B from L2; fewer K blocks mean fewer C reloads. 96 rows a
// task use each B panel twice as often as 48 did before it leaves L2 (5% on the training shapes).
constexpr size_t kKC = 768;
constexpr size_t kMC = kMR * 16;
constexpr size_t kNC = 3072;

template <class D>
HWY_INLINE void MicroKernel(D d, size_t kc, const float* HWY_RESTRICT ap,
                            const float* HWY_RESTRICT bp, float* HWY_RESTRICT c, size_t ldc,
                            bool load) {
  using V = hn::Vec<D>;
  constexpr size_t N = hn::MaxLanes(D());
  V acc[kMR][kNV];
  HWY_UNROLL(8)
  for (size_t r = 0; r < kMR; ++r) {
    HWY_UNROLL(4)
    for (size_t v = 0; v < kNV; ++v)
      acc[r][v] = load ? hn::LoadU(d, c + r * ldc + v * N) : hn::Zero(d);
  }
  for (size_t p = 0; p < kc; ++p) {
    V b[kNV];
    HWY_UNROLL(4)
    for (size_t v = 0; v < kNV; ++v) b[v] = hn::Load(d, bp + v * N);
    HWY_UNROLL(8)
    for (size_t r = 0; r < kMR; ++r) {
      const V a = hn::Set(d, ap[r]);
      HWY_UNROLL(4)
      for (size_t v = 0; v < kNV; ++v) acc[r][v] = FusedMulAdd(d, a, b[v], acc[r][v]);
    }
    ap += kMR;
    bp += kNV * N;
  }
  HWY_UNROLL(8)
  for (size_t r = 0; r < kMR; ++r) {
    HWY_UNROLL(4)
    for (size_t v = 0; v < kNV; ++v) hn::StoreU(acc[r][v], d, c + r * ldc + v * N);
  }
}

// Rows [ic, ic + mc) and depths [pc, pc + kc) of A into kMR-row panels, each [kc][kMR], with zero
// rows past mc. Both stored layouts are read in contiguous runs, with the operand's pointer and
// strides held locally (through g they were reloaded for every value: the stores may alias it).
void PackA(const GemmArgs& g, size_t ic, size_t mc, size_t pc, size_t kc,
           float* HWY_RESTRICT apack) {
  const size_t mpanels = (mc + kMR - 1) / kMR, full = mc / kMR;
  const float* const a = g.a;
  const size_t a_rs = g.a_rs, a_cs = g.a_cs;
  if (a_rs == 1) {  // Aᵀ stored [K, M]: each depth's mc values are one run
    // kMR straight-line copies: as a loop, the compiler made each 24-byte copy a memmove call.
    const auto copy_panel = [&]<size_t... R>(float* d, const float* s, std::index_sequence<R...>) {
      ((d[R] = s[R]), ...);
    };
    for (size_t p = 0; p < kc; ++p) {
      const float* src = a + (pc + p) * a_cs + ic;
      // Each depth is a far-apart row (dE's dLogitsᵀ: 64 KB apart), beyond the hardware
      // prefetcher's reach: ask for the row 8 depths ahead.
      if (p + 8 < kc)
        for (size_t i = 0; i < mc; i += 16) __builtin_prefetch(src + 8 * a_cs + i);
      for (size_t ip = 0; ip < full; ++ip)
        copy_panel(apack + (ip * kc + p) * kMR, src + ip * kMR, std::make_index_sequence<kMR>());
      for (size_t r = 0; full < mpanels && r < kMR; ++r) {
        const size_t i = full * kMR + r;
        apack[(full * kc + p) * kMR + r] = i < mc ? src[i] : 0.0f;
      }
    }
    return;
  }
  static const float kZeros[kKC] = {};
  for (size_t ip = 0; ip < mpanels; ++ip) {
    float* dst = apack + ip * kc * kMR;
    const float* rows[kMR];  // A[i, pc + p] = rows[r][p * a_cs]
    for (size_t r = 0; r < kMR; ++r) {
      const size_t i = ip * kMR + r;
      rows[r] = i < mc ? a + (ic + i) * a_rs + pc * a_cs : kZeros;
    }
    if (a_cs == 1) {  // A stored [M, K]: kMR rows interleaved depth by depth, straight-line
      [&]<size_t... R>(std::index_sequence<R...>) {
        const float* const row[kMR] = {rows[R]...};
        for (size_t p = 0; p < kc; ++p) ((dst[p * kMR + R] = row[R][p]), ...);
      }
      (std::make_index_sequence<kMR>());
    } else {
      for (size_t p = 0; p < kc; ++p)
        for (size_t r = 0; r < kMR; ++r)
          dst[p * kMR + r] = ip * kMR + r < mc ? rows[r][p * a_cs] : 0.0f;
    }
  }
}

// Columns [j0, j0 + NR) and depths [pc, pc + kc) of B into one NR-wide panel [kc][NR], zero at
// and past column j_end. Each stored layout is read in contiguous runs.
void PackBPanel(const GemmArgs& g, size_t j0, size_t j_end, size_t pc, size_t kc,
                float* HWY_RESTRICT dst) {
  using D = hn::ScalableTag<float>;
  const D d;
  constexpr size_t N = hn::MaxLanes(D());
  constexpr size_t NR = kNV * N;
  const size_t cols = std::min(NR, j_end - j0);
  if (g.b_rs == 1) {
    // Bᵀ stored [N, K] (scores, logits): each column is a contiguous run of depths, so 16
    // depths of every column go at once; reads and writes both stay within a few lines.
    for (size_t p0 = 0; p0 < kc; p0 += 16) {
      const size_t pn = std::min<size_t>(16, kc - p0);
      for (size_t r = 0; r < cols; ++r) {
        const float* src = g.b + (j0 + r) * g.b_cs + pc + p0;
        for (size_t p = 0; p < pn; ++p) dst[(p0 + p) * NR + r] = src[p];
      }
      for (size_t r = cols; r < NR; ++r)  // zero padding at the right edge
        for (size_t p = 0; p < pn; ++p) dst[(p0 + p) * NR + r] = 0.0f;
    }
    return;
  }
  if (g.b_cs == 1) {  // B stored [K, N]: each depth's NR columns are one contiguous run
    const float* src = g.b + pc * g.b_rs + j0;
    const size_t b_rs = g.b_rs;
    if (cols == NR) {  // whole panels as vectors (a memcpy call per depth cost as much)
      for (size_t p = 0; p < kc; ++p)
        for (size_t v = 0; v < kNV; ++v)
          hn::Store(hn::LoadU(d, src + p * b_rs + v * N), d, dst + p * NR + v * N);
      return;
    }
    for (size_t p = 0; p < kc; ++p) {
      std::memcpy(dst + p * NR, src + p * b_rs, cols * sizeof(float));
      std::fill(dst + p * NR + cols, dst + (p + 1) * NR, 0.0f);
    }
    return;
  }
  for (size_t p = 0; p < kc; ++p) {
    const float* src = g.b + (pc + p) * g.b_rs;
    for (size_t r = 0; r < NR; ++r) dst[p * NR + r] = r < cols ? src[(j0 + r) * g.b_cs] : 0.0f;
  }
}

// Fewer rows than a register tile (a decoder's step: one token) — the full tile would multiply
// kMR rows, all but R of them zero, after copying B into panels. With B stored [K, N] its rows
// stream through SmallRowsDirect; otherwise each NR-wide column panel keeps R × kNV accumulators
// in registers over the whole of K, through a K block's packed panel. Every output is still the
// one FMA chain over p = 0..K-1 from C or +0: the same bits as the tiled path.
template <size_t R>
void SmallPanel(const GemmArgs& g, size_t j0, float* HWY_RESTRICT bpanel) {
  using D = hn::ScalableTag<float>;
  const D d;
  using V = hn::Vec<D>;
  constexpr size_t N = hn::MaxLanes(D());
  constexpr size_t NR = kNV * N;
  const size_t nr = std::min(NR, g.N - j0), K = g.K;
  size_t K0 = 0;  // depths the gathered path below has done
  V acc[R][kNV];
  HWY_ALIGN float edge[R * NR] = {};
  for (size_t r = 0; r < R; ++r) {
    if (g.accumulate) std::memcpy(edge + r * NR, g.c + r * g.ldc + j0, nr * sizeof(float));
    for (size_t v = 0; v < kNV; ++v) acc[r][v] = hn::Load(d, edge + r * NR + v * N);
  }
  if (g.b_rs == 1) {  // Bᵀ stored [N, K] (logits, scores): each depth's columns gathered
    const hn::RebindToSigned<D> di;
    HWY_ALIGN int32_t index[NR];
    for (size_t j = 0; j < NR; ++j) {  // lanes past the edge repeat its last column
      index[j] = static_cast<int32_t>(std::min(j, nr - 1) * g.b_cs);
    }
    decltype(hn::Load(di, index)) idx[kNV];
    for (size_t v = 0; v < kNV; ++v) idx[v] = hn::Load(di, index + v * N);
    const float* bcol = g.b + j0 * g.b_cs;
    for (size_t p = 0; p < K; ++p) {
      V b[kNV];
      HWY_UNROLL(4)
      for (size_t v = 0; v < kNV; ++v) b[v] = hn::GatherIndex(d, bcol + p, idx[v]);
      HWY_UNROLL(8)
      for (size_t r = 0; r < R; ++r) {
        const V a = hn::Set(d, g.a[r * g.a_rs + p * g.a_cs]);
        HWY_UNROLL(4)
        for (size_t v = 0; v < kNV; ++v) acc[r][v] = FusedMulAdd(d, a, b[v], acc[r][v]);
      }
    }
    K0 = K;  // done
  }
  const bool direct = g.b_cs == 1 && nr == NR;
  for (size_t pc = K0; pc < K; pc += kKC) {
    const size_t kc = std::min(kKC, K - pc);
    const float* bp = g.b + pc * g.b_rs + j0;
    size_t stride = g.b_rs;
    if (!direct) {
      PackBPanel(g, j0, g.N, pc, kc, bpanel);
      bp = bpanel, stride = NR;
    }
    for (size_t p = 0; p < kc; ++p) {
      V b[kNV];
      HWY_UNROLL(4)
      for (size_t v = 0; v < kNV; ++v) b[v] = hn::LoadU(d, bp + p * stride + v * N);
      HWY_UNROLL(8)
      for (size_t r = 0; r < R; ++r) {
        const V a = hn::Set(d, g.a[r * g.a_rs + (pc + p) * g.a_cs]);
        HWY_UNROLL(4)
        for (size_t v = 0; v < kNV; ++v) acc[r][v] = FusedMulAdd(d, a, b[v], acc[r][v]);
      }
    }
  }
  for (size_t r = 0; r < R; ++r) {
    for (size_t v = 0; v < kNV; ++v) hn::Store(acc[r][v], d, edge + r * NR + v * N);
    std::memcpy(g.c + r * g.ldc + j0, edge + r * NR, nr * sizeof(float));
  }
}

// B stored [K, N]: columns [j0, j1) (whole vectors) of R rows accumulated in a row buffer
// while B's rows stream by in order, each read once in one contiguous run (a panel at a time
// would jump a whole row between reads). acc[r][j] is output (r, j)'s chain over p ascending.
template <size_t R>
void SmallRowsDirect(const GemmArgs& g, size_t j0, size_t j1) {
  using D = hn::ScalableTag<float>;
  const D d;
  constexpr size_t N = hn::MaxLanes(D());
  const size_t w = j1 - j0;
  thread_local hwy::AlignedFreeUniquePtr<float[]> buffer;
  thread_local size_t capacity = 0;
  if (capacity < R * w) buffer = hwy::AllocateAligned<float>(R * w), capacity = R * w;
  float* HWY_RESTRICT acc = buffer.get();
  for (size_t r = 0; r < R; ++r) {
    if (g.accumulate) {
      std::memcpy(acc + r * w, g.c + r * g.ldc + j0, w * sizeof(float));
    } else {
      std::fill(acc + r * w, acc + (r + 1) * w, 0.0f);
    }
  }
  for (size_t p = 0; p < static_cast<size_t>(g.K); ++p) {
    const float* HWY_RESTRICT b = g.b + p * g.b_rs + j0;
    for (size_t r = 0; r < R; ++r) {
      const auto a = hn::Set(d, g.a[r * g.a_rs + p * g.a_cs]);
      float* HWY_RESTRICT c = acc + r * w;
      for (size_t j = 0; j < w; j += N) {
        hn::Store(FusedMulAdd(d, a, hn::LoadU(d, b + j), hn::Load(d, c + j)), d, c + j);
      }
    }
  }
  for (size_t r = 0; r < R; ++r) std::memcpy(g.c + r * g.ldc + j0, acc + r * w, w * sizeof(float));
}

template <size_t R>
void GemmSmallM(const GemmArgs& g) {
  constexpr size_t N = hn::MaxLanes(hn::ScalableTag<float>());
  constexpr size_t NR = kNV * N;
  ThreadPool& pool = KernelPool();
  if (g.b_cs == 1 && g.N >= static_cast<int64_t>(N)) {
    // Whole vectors in up to 4 tasks a thread (at least 4 vectors each: a thread that wakes
    // late finds work left rather than a half it must wait for); the last partial vector's
    // columns go through a zero-padded panel.
    const size_t vecs = g.N / N;
    const size_t tasks = std::min(pool.num_threads(), std::max<size_t>(1, vecs / 4));
    pool.ParallelFor(tasks + 1, [&](size_t t) {
      if (t < tasks) return SmallRowsDirect<R>(g, vecs * t / tasks * N, vecs * (t + 1) / tasks * N);
      if (static_cast<int64_t>(vecs * N) == g.N) return;
      thread_local hwy::AlignedFreeUniquePtr<float[]> bpanel;
      if (!bpanel) bpanel = hwy::AllocateAligned<float>(kKC * NR);
      SmallPanel<R>(g, vecs * N, bpanel.get());
    });
    return;
  }
  const size_t panels = (g.N + NR - 1) / NR;
  const size_t tasks = std::min(panels, 4 * pool.num_threads());
  pool.ParallelFor(tasks, [&](size_t t) {
    thread_local hwy::AlignedFreeUniquePtr<float[]> bpanel;
    if (!bpanel) bpanel = hwy::AllocateAligned<float>(kKC * NR);
    for (size_t jp = panels * t / tasks; jp < panels * (t + 1) / tasks; ++jp) {
      SmallPanel<R>(g, jp * NR, bpanel.get());
    }
  });
}

void GemmImpl(const GemmArgs& g) {
  using D = hn::ScalableTag<float>;
  const D d;
  constexpr size_t N = hn::MaxLanes(D());
  constexpr size_t NR = kNV * N;
  const size_t M = g.M, Ncols = g.N, K = g.K;
  if (M == 0 || Ncols == 0) return;
  if (K == 0) {
    if (!g.accumulate)
      for (size_t i = 0; i < M; ++i) std::fill(g.c + i * g.ldc, g.c + i * g.ldc + Ncols, 0.0f);
    return;
  }
  static_assert(kMR >= 4 && kMR <= 6);
  switch (M) {
    case 1:
      return GemmSmallM<1>(g);
    case 2:
      return GemmSmallM<2>(g);
    case 3:
      return GemmSmallM<3>(g);
    case 4:
      if constexpr (kMR > 4) return GemmSmallM<4>(g);
      break;
    case 5:
      if constexpr (kMR > 5) return GemmSmallM<5>(g);
      break;
    default:
      break;
  }
  ThreadPool& pool = KernelPool();
  const size_t nc_max = std::min(kNC, (Ncols + NR - 1) / NR * NR);
  // The calling thread's buffer (nested calls run inline on their own thread): attention makes
  // thousands of small products a step, and a fresh allocation each was a visible share.
  // (The tasks below run on other threads: they see the buffer through `bpack`, a plain pointer,
  // never through the thread_local itself.)
  thread_local hwy::AlignedFreeUniquePtr<float[]> bpack_storage;
  thread_local size_t bpack_size = 0;
  if (bpack_size < std::min(kKC, K) * nc_max) {
    bpack_size = std::min(kKC, K) * nc_max;
    bpack_storage = hwy::AllocateAligned<float>(bpack_size);
  }
  float* const bpack = bpack_storage.get();

  for (size_t jc = 0; jc < Ncols; jc += kNC) {
    const size_t nc = std::min(kNC, Ncols - jc);
    const size_t panels = (nc + NR - 1) / NR;
    for (size_t pc = 0; pc < K; pc += kKC) {
      const size_t kc = std::min(kKC, K - pc);
      const bool load = g.accumulate || pc > 0;
      // Pack B(pc:pc+kc, jc:jc+nc) into NR-wide panels, zero-padded at the right edge.
      pool.ParallelFor(panels, [&](size_t jp) {
        PackBPanel(g, jc + jp * NR, jc + nc, pc, kc, bpack + jp * kc * NR);
      });
      const size_t mblocks = (M + kMC - 1) / kMC;
      const size_t splits =
          std::max<size_t>(1, std::min(panels, (2 * pool.num_threads() + mblocks - 1) / mblocks));
      pool.ParallelFor(mblocks * splits, [&](size_t task) {
        const size_t ic = (task / splits) * kMC;
        const size_t mc = std::min(kMC, M - ic);
        const size_t jp_begin = panels * (task % splits) / splits;
        const size_t jp_end = panels * (task % splits + 1) / splits;
        thread_local std::vector<float> apack_storage;
        apack_storage.resize(kMC * kKC + 16);
        float* apack = apack_storage.data();
        const size_t mpanels = (mc + kMR - 1) / kMR;
        PackA(g, ic, mc, pc, kc, apack);
        for (size_t jp = jp_begin; jp < jp_end; ++jp) {
          const size_t j0 = jc + jp * NR;
          const size_t nr = std::min(NR, jc + nc - j0);
          for (size_t ip = 0; ip < mpanels; ++ip) {
            const size_t i0 = ic + ip * kMR;
            const size_t mr = std::min(kMR, ic + mc - i0);
            float* cp = g.c + i0 * g.ldc + j0;
            const float* ap = apack + ip * kc * kMR;
            const float* bp = bpack + jp * kc * NR;
            if (mr == kMR && nr == NR) {
              MicroKernel(d, kc, ap, bp, cp, g.ldc, load);
            } else {
              HWY_ALIGN float tile[kMR * NR] = {};
              if (load)
                for (size_t r = 0; r < mr; ++r) std::memcpy(tile + r * NR, cp + r * g.ldc, nr * 4);
              MicroKernel(d, kc, ap, bp, tile, NR, true);
              for (size_t r = 0; r < mr; ++r) std::memcpy(cp + r * g.ldc, tile + r * NR, nr * 4);
            }
          }
        }
      });
    }
  }
}

}  // namespace trail::repops::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // TRAIL_REPOPS_GEMM_INL_H_
