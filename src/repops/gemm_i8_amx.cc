#include "repops/gemm_i8_amx.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/thread_pool.h"

#if defined(__x86_64__) && defined(__AMX_TILE__) && defined(__AMX_INT8__)
#define TRAIL_HAVE_AMX 1
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "repops/x86_intrinsics.h"
#else
#define TRAIL_HAVE_AMX 0
#endif

namespace trail::repops {
namespace {

std::atomic<bool> amx_allowed{true};

// Tile rows are 64 bytes: a tile read from or written to memory that is not 64-byte aligned
// splits every row across two cache lines, which made the products 2.3x slower (malloc's
// 16-byte alignment, measured). Packed operands and partial sums live in these.
template <class T>
struct Align64 {
  using value_type = T;
  Align64() = default;
  template <class U>
  Align64(const Align64<U>&) {}
  T* allocate(size_t n) {
    return static_cast<T*>(::operator new (n * sizeof(T), std::align_val_t{64}));
  }
  void deallocate(T* p, size_t) { ::operator delete (p, std::align_val_t{64}); }
  template <class U>
  bool operator==(const Align64<U>&) const {
    return true;
  }
};
template <class T>
using AlignedVector = std::vector<T, Align64<T>>;

bool EnvironmentAllowsAmx() {
  const char* v = std::getenv("TRAIL_AMX");
  if (v == nullptr) return true;
  const std::string_view s(v);
  return !(s == "off" || s == "0" || s == "no");
}

#if TRAIL_HAVE_AMX
bool DetectAmxInt8() {
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  const bool tile = edx & (1u << 24), int8 = edx & (1u << 25);
  if (!tile || !int8) return false;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !(ecx & (1u << 27))) return false;  // OSXSAVE
  unsigned xcr0_lo, xcr0_hi;
  asm volatile("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
  if ((xcr0_lo & (3u << 17)) != (3u << 17)) return false;  // XTILECFG and XTILEDATA enabled
  // Tile data is a dynamic XSAVE feature: the kernel traps its first use unless the process
  // asked for it. The permission covers every thread of the process.
  constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
}

// Tiles: C in tmm0..3 (a 32×32 int32 block as 2×2 tiles of 16×16), A in tmm4..5 (16 rows × 64
// bytes each), B in tmm6..7 (16 rows of 16 columns × 4 consecutive depths each).
constexpr size_t kTileRows = 16, kTileBytes = 64, kBlockRows = 32, kPairCols = 32;
constexpr size_t kGroupRows = 128;    // rows of A one task packs
constexpr size_t kDepthSlice = 1024;  // depths of one pass (a multiple of 64)

struct alignas(64) TileConfig {
  uint8_t palette = 1, start_row = 0, reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

TileConfig BlockConfig() {
  TileConfig cfg;
  for (int t = 0; t < 8; ++t) cfg.colsb[t] = kTileBytes, cfg.rows[t] = kTileRows;
  return cfg;
}

// Four rows of 16 columns of B (row stride N) interleaved bytewise into the 64 bytes of one
// depth group of a panel.
inline void InterleaveFourRows(const int8_t* s0, size_t N, int8_t* dst_bytes) {
  const __m128i r0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s0));
  const __m128i r1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s0 + N));
  const __m128i r2 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s0 + 2 * N));
  const __m128i r3 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s0 + 3 * N));
  const __m128i lo01 = _mm_unpacklo_epi8(r0, r1), hi01 = _mm_unpackhi_epi8(r0, r1);
  const __m128i lo23 = _mm_unpacklo_epi8(r2, r3), hi23 = _mm_unpackhi_epi8(r2, r3);
  __m128i* dst = reinterpret_cast<__m128i*>(dst_bytes);
  _mm_storeu_si128(dst + 0, _mm_unpacklo_epi16(lo01, lo23));
  _mm_storeu_si128(dst + 1, _mm_unpackhi_epi16(lo01, lo23));
  _mm_storeu_si128(dst + 2, _mm_unpacklo_epi16(hi01, hi23));
  _mm_storeu_si128(dst + 3, _mm_unpackhi_epi16(hi01, hi23));
}

// B packed for TDPBSSD: panels of 16 columns, each [Kp/4][16 columns][4 depths] bytes, zero in
// the padding (depths ≥ K, columns ≥ N). The panel count is even, so panels go in pairs. Only
// B's zero depths matter: they cancel whatever A holds there, and padding rows and columns
// only reach outputs that are never written.
void PackB(const GemmI8Args& g, size_t Kp, size_t panels, ThreadPool& pool,
           AlignedVector<int8_t>& packed) {
  const size_t K = g.K, N = g.N, panel_bytes = Kp * kTileRows;
  if (packed.size() < panels * panel_bytes) packed.resize(panels * panel_bytes);
  // Four panels a task: with B as [K, N], each 64-byte stretch of a row is read once for all
  // four (one panel at a time read 16 bytes of each line and came back for the rest later).
  constexpr size_t kPanelsPerTask = 4;
  pool.ParallelFor((panels + kPanelsPerTask - 1) / kPanelsPerTask, [&](size_t task) {
    const size_t jp_begin = task * kPanelsPerTask;
    const size_t jp_end = std::min(panels, jp_begin + kPanelsPerTask);
    size_t full_end = jp_begin;  // panels [jp_begin, full_end) have all 16 columns
    for (size_t jp = jp_begin; jp < jp_end; ++jp) {
      const size_t j0 = jp * kTileRows, cols = j0 < N ? std::min(kTileRows, N - j0) : 0;
      if (cols == kTileRows && full_end == jp) ++full_end;
      // The buffer is reused: zero what the copies below leave out (every byte of a panel with
      // missing columns; from the last whole group of 4 depths on otherwise).
      const size_t copied = cols == kTileRows ? K / 4 * kTileBytes : 0;
      std::memset(packed.data() + jp * panel_bytes + copied, 0, panel_bytes - copied);
    }
    for (size_t jp = jp_begin; jp < jp_end; ++jp) {
      int8_t* panel = packed.data() + jp * panel_bytes;
      const size_t j0 = jp * kTileRows, cols = j0 < N ? std::min(kTileRows, N - j0) : 0;
      if (g.bt != nullptr) {  // column j is a contiguous row of Bᵀ: whole groups of 4 as words
        for (size_t c = 0; c < cols; ++c) {
          const int8_t* src = g.bt + (j0 + c) * K;
          for (size_t p4 = 0; p4 < K / 4; ++p4)
            std::memcpy(panel + p4 * kTileBytes + c * 4, src + 4 * p4, 4);
          for (size_t p = K / 4 * 4; p < K; ++p)
            panel[(p / 4) * kTileBytes + c * 4 + p % 4] = src[p];
        }
        continue;
      }
      // Depths the interleaving below leaves: the last partial group, or every depth of a
      // panel with missing columns (depth p is a contiguous row of B).
      for (size_t p = jp < full_end ? K / 4 * 4 : 0; p < K; ++p)
        for (size_t c = 0; c < cols; ++c)
          panel[(p / 4) * kTileBytes + c * 4 + p % 4] = g.b[p * N + j0 + c];
    }
    if (g.bt != nullptr) return;
    for (size_t p = 0; p + 4 <= K; p += 4)
      for (size_t jp = jp_begin; jp < full_end; ++jp)
        InterleaveFourRows(g.b + p * N + jp * kTileRows, N,
                           packed.data() + jp * panel_bytes + (p / 4) * kTileBytes);
  });
}

// The float epilogue of GemmI8Args (kernels.h) for one block, 16 columns per vector: the same
// elementwise operations as ApplyI8Epilogue, in AVX-512 (every AMX CPU has it).
__attribute__((target("avx512f"))) void BlockEpilogue(const GemmI8Args& g, const int32_t* c,
                                                      size_t ldc, size_t i0, size_t rows, size_t j0,
                                                      size_t cols) {
  for (size_t r = 0; r < rows; ++r) {
    float* out = g.out + (i0 + r) * g.N + j0;
    const __m512 rs = _mm512_set1_ps(g.row_scale ? g.row_scale[i0 + r] : 1.0f);
    for (size_t j = 0; j < cols; j += 16) {
      const __mmask16 m = cols - j >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << (cols - j)) - 1);
      __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_loadu_si512(c + r * ldc + j)), rs);
      if (g.col_scale) v = _mm512_mul_ps(v, _mm512_maskz_loadu_ps(m, g.col_scale + j0 + j));
      if (g.accumulate) v = _mm512_add_ps(_mm512_maskz_loadu_ps(m, out + j), v);
      _mm512_mask_storeu_ps(out + j, m, v);
    }
  }
}

// One 32×32 block of C += two packed A row tiles (a0: rows 0-15, a1: rows 16-31) times a pair
// of B panel slices, over `depth` depths (a multiple of 64). Every operand tile is 1 KB of
// contiguous memory. `fresh` starts from zero instead of loading C.
void BlockProduct(const int8_t* a0, const int8_t* a1, const int8_t* b0, const int8_t* b1,
                  size_t depth, int32_t* c, size_t ldc_bytes, bool fresh) {
  char* out = reinterpret_cast<char*>(c);
  if (fresh) {
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
  } else {
    _tile_loadd(0, out, ldc_bytes);
    _tile_loadd(1, out + kTileRows * 4, ldc_bytes);
    _tile_loadd(2, out + kTileRows * ldc_bytes, ldc_bytes);
    _tile_loadd(3, out + kTileRows * ldc_bytes + kTileRows * 4, ldc_bytes);
  }
  for (size_t k = 0; k < depth; k += kTileBytes) {
    _tile_loadd(4, a0 + k * kTileRows, kTileBytes);
    _tile_loadd(5, a1 + k * kTileRows, kTileBytes);
    _tile_loadd(6, b0 + k * kTileRows, kTileBytes);
    _tile_loadd(7, b1 + k * kTileRows, kTileBytes);
    _tile_dpbssd(0, 4, 6);
    _tile_dpbssd(1, 4, 7);
    _tile_dpbssd(2, 5, 6);
    _tile_dpbssd(3, 5, 7);
  }
  _tile_stored(0, out, ldc_bytes);
  _tile_stored(1, out + kTileRows * 4, ldc_bytes);
  _tile_stored(2, out + kTileRows * ldc_bytes, ldc_bytes);
  _tile_stored(3, out + kTileRows * ldc_bytes + kTileRows * 4, ldc_bytes);
}
#endif

}  // namespace

bool AmxInt8Available() {
#if TRAIL_HAVE_AMX
  static const bool available = DetectAmxInt8();
  return available;
#else
  return false;
#endif
}

bool AmxInt8InUse() {
  static const bool env = EnvironmentAllowsAmx();
  return env && amx_allowed.load(std::memory_order_relaxed) && AmxInt8Available();
}

void AllowAmx(bool allow) { amx_allowed.store(allow, std::memory_order_relaxed); }

void GemmI8Amx(const GemmI8Args& g) {
#if TRAIL_HAVE_AMX
  TRAIL_CHECK(AmxInt8Available(), "the AMX int8 GEMM needs AMX-INT8 with tile state enabled");
  const size_t M = g.M, N = g.N, K = g.K;
  if (M == 0 || N == 0) return;
  ThreadPool& pool = KernelPool();
  const size_t Kp = std::max<size_t>(kTileBytes, (K + kTileBytes - 1) / kTileBytes * kTileBytes);
  const size_t pairs = (N + kPairCols - 1) / kPairCols, panel_bytes = Kp * kTileRows;
  // The calling thread's buffer, reused: a fresh one per call (megabytes for a dW product) was
  // mapped and faulted in anew each time. Tasks on other threads reach it through the reference.
  thread_local AlignedVector<int8_t> bpack_storage;
  PackB(g, Kp, 2 * pairs, pool, bpack_storage);
  const AlignedVector<int8_t>& bpack = bpack_storage;
  const size_t groups = (M + kGroupRows - 1) / kGroupRows;
  const size_t splits =
      std::max<size_t>(1, std::min(pairs, (2 * pool.num_threads() + groups - 1) / groups));
  pool.ParallelFor(groups * splits, [&](size_t task) {
    const size_t i_begin = (task / splits) * kGroupRows, i_end = std::min(M, i_begin + kGroupRows);
    const size_t pair_begin = pairs * (task % splits) / splits;
    const size_t pair_end = pairs * (task % splits + 1) / splits;
    const size_t blocks = (i_end - i_begin + kBlockRows - 1) / kBlockRows;
    // A rows of the group in tiles of 16 rows × 64 depths, each 1 KB of contiguous memory as
    // B's are. The padding (rows to whole blocks, depths to Kp) keeps what the reused buffer
    // held: B's zero depths cancel it (PackB).
    thread_local AlignedVector<int8_t> apack;
    if (apack.size() < blocks * kBlockRows * Kp) apack.resize(blocks * kBlockRows * Kp);
    for (size_t i = i_begin; i < i_end; ++i) {
      const size_t r = i - i_begin;
      int8_t* dst = apack.data() + (r / kTileRows) * Kp * kTileRows + (r % kTileRows) * kTileBytes;
      for (size_t k = 0; k < K; k += kTileBytes)
        std::memcpy(dst + k * kTileRows, g.a + i * K + k, std::min(kTileBytes, K - k));
    }
    const TileConfig cfg = BlockConfig();
    _tile_loadconfig(&cfg);
    alignas(64) int32_t edge[kBlockRows * kPairCols];
    // Depth slices keep a block's A (32 × kDepthSlice bytes) in L1 while the B panels of the
    // task stream past it from L2; C carries the exact partial sums from slice to slice. With a
    // float epilogue and more than one slice, the partial sums wait in a task buffer instead,
    // and each block's epilogue runs after its last slice.
    const bool epilogue = g.out != nullptr, buffered = epilogue && Kp > kDepthSlice;
    const size_t task_cols = (pair_end - pair_begin) * kPairCols;
    thread_local AlignedVector<int32_t> partial;
    if (buffered) partial.resize(blocks * kBlockRows * task_cols);
    for (size_t k0 = 0; k0 < Kp; k0 += kDepthSlice) {
      const size_t depth = std::min(kDepthSlice, Kp - k0);
      const bool first = k0 == 0, last = k0 + depth == Kp;
      for (size_t blk = 0; blk < blocks; ++blk) {
        const size_t i0 = i_begin + blk * kBlockRows, rows = std::min(kBlockRows, i_end - i0);
        const int8_t* a0 = apack.data() + blk * kBlockRows * Kp + k0 * kTileRows;
        const int8_t* a1 = a0 + kTileRows * Kp;
        for (size_t pair = pair_begin; pair < pair_end; ++pair) {
          const int8_t* b0 = bpack.data() + 2 * pair * panel_bytes + k0 * kTileRows;
          const int8_t* b1 = b0 + panel_bytes;
          const size_t j0 = pair * kPairCols, cols = std::min(kPairCols, N - j0);
          if (epilogue) {
            int32_t* c = edge;
            size_t ldc = kPairCols;
            if (buffered) {
              ldc = task_cols;
              c = partial.data() + blk * kBlockRows * ldc + (pair - pair_begin) * kPairCols;
            }
            BlockProduct(a0, a1, b0, b1, depth, c, ldc * 4, first);
            if (last) BlockEpilogue(g, c, ldc, i0, rows, j0, cols);
            continue;
          }
          int32_t* c = g.c + i0 * N + j0;
          if (rows == kBlockRows && cols == kPairCols) {
            BlockProduct(a0, a1, b0, b1, depth, c, N * 4, first);
            continue;
          }
          for (size_t r = 0; r < rows && !first; ++r)
            std::memcpy(edge + r * kPairCols, c + r * N, cols * 4);
          BlockProduct(a0, a1, b0, b1, depth, edge, kPairCols * 4, first);
          for (size_t r = 0; r < rows; ++r) std::memcpy(c + r * N, edge + r * kPairCols, cols * 4);
        }
      }
    }
    _tile_release();
  });
#else
  (void)g;
  TRAIL_CHECK(false, "this build has no AMX int8 GEMM");
#endif
}

}  // namespace trail::repops
