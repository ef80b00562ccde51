// What every packed int8 GEMM kernel of gemm_i8-inl.h shares: the tile schedule, the float
// epilogue applied per finished tile, and the packing of operands as 4-byte depth groups (the
// layout of vpdpbusd, vpmaddubsw and SDOT). Compiled once per Highway target.
//
// Per-target include (Highway's pattern): no include guard of the usual kind.
#if defined(TRAIL_REPOPS_GEMM_I8_TILES_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TRAIL_REPOPS_GEMM_I8_TILES_INL_H_
#undef TRAIL_REPOPS_GEMM_I8_TILES_INL_H_
#else
#define TRAIL_REPOPS_GEMM_I8_TILES_INL_H_
#endif

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/thread_pool.h"
#include "hwy/highway.h"
#include "repops/kernels.h"

HWY_BEFORE_NAMESPACE();
namespace trail::repops::HWY_NAMESPACE {

// The float epilogue of GemmI8Args (kernels.h) for the finished block c[rows, cols] (row stride
// ldc) of output rows [i0, +rows) and columns [j0, +cols), while it is in L1: the same elementwise
// operations in the same order as ApplyI8Epilogue, a vector of columns at a time (int32 -> float
// conversion rounds to nearest-even on every target, as the scalar cast does).
inline void TileEpilogue(const GemmI8Args& g, const int32_t* c, size_t ldc, size_t i0, size_t rows,
                         size_t j0, size_t cols) {
  namespace hn = hwy::HWY_NAMESPACE;
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const size_t L = hn::Lanes(df), whole = cols / L * L;
  const float* cs = g.col_scale ? g.col_scale + j0 : nullptr;
  for (size_t r = 0; r < rows; ++r) {
    const int32_t* cr = c + r * ldc;
    float* out = g.out + (i0 + r) * g.N + j0;
    const float rs = g.row_scale ? g.row_scale[i0 + r] : 1.0f;
    const auto vrs = hn::Set(df, rs);
    for (size_t j = 0; j < whole; j += L) {
      auto v = hn::Mul(hn::ConvertTo(df, hn::LoadU(di, cr + j)), vrs);
      if (cs) v = hn::Mul(v, hn::LoadU(df, cs + j));
      if (g.accumulate) v = hn::Add(hn::LoadU(df, out + j), v);
      hn::StoreU(v, df, out + j);
    }
    for (size_t j = whole; j < cols; ++j) {
      float v = static_cast<float>(cr[j]) * rs;
      if (cs) v = v * cs[j];
      out[j] = g.accumulate ? out[j] + v : v;
    }
  }
}

// The packed kernels' schedule over C [M, N] (g.c): row panels of MR rows, 8 to a task, and the
// NR-column panels split among tasks so that about 2·threads tasks exist. A task packs its row
// panels once (pack_a(ip, ap): `words` int32 depth words of each of the panel's MR rows, in the
// order its kernel reads them), then runs every one of its column panels against all of them while
// that panel is in cache (with a long reduction the whole B is megabytes: streaming it once per row
// panel made the kernel memory-bound). kernel(ap, jp, c, ldc) writes an MR × NR tile at c; edge
// tiles go through a scratch tile. With g.out, every tile goes through the scratch tile and
// TileEpilogue writes its floats; g.c is not used.
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
        if (g.out != nullptr) {
          kernel(ap, jp, tile, NR);
          TileEpilogue(g, tile, NR, ip * MR, rows, jp * NR, cols);
          continue;
        }
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

// B's column panel jp (columns [jp·NR, +NR)) as [k4][column][4 bytes]: depths 4q..4q+3 of a
// column in one little-endian word, zero-padded. sums[c] = Σ_p B[p, jp·NR + c].
template <size_t NR>
void PackQuadPanel(const GemmI8Args& g, size_t jp, uint8_t* panel, int32_t* sums) {
  const size_t K = g.K, N = g.N, cols = std::min(NR, N - jp * NR);
  std::fill(sums, sums + NR, 0);
  if (g.b != nullptr) {  // B as [K, N]: interleave 4 rows' stretches of the panel's columns
    size_t p = 0;
    if (cols == NR) {  // four rows into one word per column: constant trip counts
      for (; p + 4 <= K; p += 4) {
        const int8_t* s0 = g.b + p * N + jp * NR;
        uint32_t* dst = reinterpret_cast<uint32_t*>(panel + (p >> 2) * NR * 4);
        for (size_t c = 0; c < NR; ++c) {
          const int8_t b0 = s0[c], b1 = s0[N + c], b2 = s0[2 * N + c], b3 = s0[3 * N + c];
          dst[c] = uint32_t{static_cast<uint8_t>(b0)} | uint32_t{static_cast<uint8_t>(b1)} << 8 |
                   uint32_t{static_cast<uint8_t>(b2)} << 16 |
                   uint32_t{static_cast<uint8_t>(b3)} << 24;
          sums[c] += (b0 + b1) + (b2 + b3);
        }
      }
    }
    for (; p < K; ++p) {
      const int8_t* src = g.b + p * N + jp * NR;
      uint8_t* dst = panel + (p >> 2) * NR * 4 + (p & 3);
      for (size_t c = 0; c < cols; ++c) {
        dst[c * 4] = static_cast<uint8_t>(src[c]);
        sums[c] += src[c];
      }
    }
    return;
  }
  for (size_t c = 0; c < cols; ++c) {  // Bᵀ as [N, K]: a column's depths are contiguous
    const int8_t* src = g.bt + (jp * NR + c) * K;
    for (size_t p = 0; p < K; ++p) sums[c] += src[p];
    for (size_t p4 = 0; p4 < K / 4; ++p4)  // whole groups of 4 as one word
      std::memcpy(panel + (p4 * NR + c) * 4, src + 4 * p4, 4);
    for (size_t p = K / 4 * 4; p < K; ++p)
      panel[((p >> 2) * NR + c) * 4 + (p & 3)] = static_cast<uint8_t>(src[p]);
  }
}

// Row panel ip of A (rows [ip·MR, +MR)) as little-endian words of 4 depths, ap[word·MR + r],
// each byte xor flip's (0x80 biases it to unsigned for vpdpbusd; 0 keeps it); padding bytes are
// the value 0 (0 ^ flip).
template <size_t MR>
void PackQuadRows(const GemmI8Args& g, size_t ip, size_t k4, uint32_t flip, int32_t* ap) {
  const size_t M = g.M, K = g.K;
  for (size_t r = 0; r < MR; ++r) {
    const size_t i = ip * MR + r;
    const size_t full = i < M ? K / 4 : 0;  // whole groups of 4 inside the row
    const int8_t* row = g.a + i * K;
    for (size_t p = 0; p < full; ++p) {
      uint32_t word;
      std::memcpy(&word, row + 4 * p, 4);
      ap[p * MR + r] = static_cast<int32_t>(word ^ flip);
    }
    for (size_t p = full; p < k4; ++p) {
      uint32_t word = 0;
      for (size_t q = 0; q < 4; ++q) {
        const size_t kk = p * 4 + q;
        const uint32_t byte = (i < M && kk < K) ? static_cast<uint8_t>(row[kk]) : 0u;
        word |= byte << (8 * q);
      }
      ap[p * MR + r] = static_cast<int32_t>(word ^ flip);
    }
  }
}

// An int8 GEMM on 4-byte depth groups: B packed once into NR-column panels (shared by the tasks),
// A per task, then kernel(k4, ap, panel, sums, c, ldc) per MR × NR tile; sums are the panel's
// column sums (what a biased kernel subtracts). The packed buffers are reused per calling thread
// (a fresh buffer per call was mapped and faulted in anew); tasks on other threads reach them
// through the references.
template <size_t MR, size_t NR, class Kernel>
void RunQuadGemm(const GemmI8Args& g, uint32_t flip, Kernel kernel) {
  const size_t k4 = (g.K + 3) / 4, panels = (g.N + NR - 1) / NR;
  thread_local std::vector<uint8_t> bpack_storage;
  thread_local std::vector<int32_t> sums_storage;
  bpack_storage.assign(panels * k4 * NR * 4, 0);
  sums_storage.assign(panels * NR, 0);
  std::vector<uint8_t>& bpack = bpack_storage;
  std::vector<int32_t>& sums = sums_storage;
  KernelPool().ParallelFor(panels, [&](size_t jp) {
    PackQuadPanel<NR>(g, jp, bpack.data() + jp * k4 * NR * 4, sums.data() + jp * NR);
  });
  RunI8Tiles<MR, NR>(
      g, k4, panels, [&](size_t ip, int32_t* ap) { PackQuadRows<MR>(g, ip, k4, flip, ap); },
      [&](const int32_t* ap, size_t jp, int32_t* c, size_t ldc) {
        kernel(k4, ap, bpack.data() + jp * k4 * NR * 4, sums.data() + jp * NR, c, ldc);
      });
}

}  // namespace trail::repops::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // TRAIL_REPOPS_GEMM_I8_TILES_INL_H_
