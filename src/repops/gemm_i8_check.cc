#include "repops/gemm_i8_check.h"

#include <cstring>

#include "core/philox.h"

namespace trail::repops {
namespace {

struct Shape {
  int64_t M, K, N;
};

constexpr int8_t kExtremes[] = {-128, 127, -127, 0, 1, -1, -128, -128, 127, 5};

// Operand element i of a fill: 0 the extremes cycled, 1 random bytes with every seventh an
// extreme, 2 all -128 (the largest sums: K·2^14).
int8_t FillValue(int fill, uint64_t stream, int64_t i) {
  if (fill == 2) return -128;
  if (fill == 0) return kExtremes[(i + static_cast<int64_t>(stream)) % 10];
  if (PhiloxWord(5, stream, static_cast<uint64_t>(i)) % 7 == 0) return kExtremes[i % 10];
  return static_cast<int8_t>(PhiloxWord(6, stream, static_cast<uint64_t>(i)));
}

std::string Describe(const Shape& s, int fill, bool transposed, const char* what) {
  return "gemm_i8 " + std::string(what) + " M=" + std::to_string(s.M) +
         " K=" + std::to_string(s.K) + " N=" + std::to_string(s.N) + " fill " +
         std::to_string(fill) + (transposed ? " (B as Bt)" : " (B as [K, N])") +
         ": not the exact sums";
}

void CheckShape(const Kernels& k, const Shape& s, int fill, std::vector<std::string>& failures) {
  const int64_t M = s.M, K = s.K, N = s.N;
  std::vector<int8_t> a(M * K), bt(N * K), b(K * N);
  for (int64_t i = 0; i < M * K; ++i) a[i] = FillValue(fill, 0, i);
  for (int64_t i = 0; i < N * K; ++i) bt[i] = FillValue(fill, 1, i);
  for (int64_t j = 0; j < N; ++j)
    for (int64_t p = 0; p < K; ++p) b[p * N + j] = bt[j * K + p];
  std::vector<float> rs(M), cs(N);
  for (int64_t i = 0; i < M; ++i) rs[i] = 1.0f / static_cast<float>(3 + i);
  for (int64_t j = 0; j < N; ++j) cs[j] = 0.1f * static_cast<float>(1 + j % 3);
  std::vector<int32_t> want(M * N);
  std::vector<float> want_out(M * N);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      int64_t sum = 0;
      for (int64_t p = 0; p < K; ++p) sum += int64_t{a[i * K + p]} * bt[j * K + p];
      want[i * N + j] = static_cast<int32_t>(sum);
      want_out[i * N + j] = (static_cast<float>(sum) * rs[i]) * cs[j];
    }
  for (bool transposed : {false, true}) {
    GemmI8Args g{.M = M, .N = N, .K = K, .a = a.data()};
    if (transposed) {
      g.bt = bt.data();
    } else {
      g.b = b.data();
    }
    std::vector<int32_t> c(M * N, 7);
    g.c = c.data();
    k.gemm_i8(g);
    if (c != want) failures.push_back(Describe(s, fill, transposed, "int32"));
    std::vector<float> out(M * N, -1.0f);
    g.c = nullptr, g.out = out.data(), g.row_scale = rs.data(), g.col_scale = cs.data();
    k.gemm_i8(g);
    if (std::memcmp(out.data(), want_out.data(), out.size() * sizeof(float)) != 0)
      failures.push_back(Describe(s, fill, transposed, "float epilogue"));
  }
}

}  // namespace

std::vector<std::string> GemmI8ExactnessFailures(const Kernels& k) {
  std::vector<std::string> failures;
  for (const Shape s : {Shape{1, 1, 1}, Shape{7, 17, 33}, Shape{13, 31, 48}, Shape{6, 16, 16},
                        Shape{50, 385, 97}, Shape{9, 2, 64}, Shape{25, 64, 12}})
    for (int fill = 0; fill < 3; ++fill) CheckShape(k, s, fill, failures);
  return failures;
}

}  // namespace trail::repops
