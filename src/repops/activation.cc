#include "repops/activation.h"

#include <algorithm>
#include <vector>

#include "repops/kernels.h"
#include "repops/parallel.h"

namespace trail::repops {
namespace {

constexpr int64_t kChunk = 4096;

// Runs f(begin, end) over fixed chunks of [0, n) in parallel.
template <class F>
void Chunks(int64_t n, F&& f) {
  ForEachRow((n + kChunk - 1) / kChunk, [&](int64_t c) {
    const int64_t begin = c * kChunk, end = std::min(n, begin + kChunk);
    f(begin, end);
  });
}

}  // namespace

void SwiGluForward(const Kernels& kernels, const float* a, const float* b, int64_t n, float* h) {
  Chunks(n, [&](int64_t i0, int64_t i1) {
    std::vector<float> sigmoid(i1 - i0);
    float* s = sigmoid.data();
    kernels.map(MathFn::kSigmoid, a + i0, s, i1 - i0);
    for (int64_t i = i0; i < i1; ++i) h[i] = (a[i] * s[i - i0]) * b[i];
  });
}

void SwiGluBackward(const Kernels& kernels, const float* dh, const float* a, const float* b,
                    int64_t n, float* da, float* db) {
  Chunks(n, [&](int64_t i0, int64_t i1) {
    std::vector<float> sigmoid(i1 - i0);
    float* s = sigmoid.data();
    kernels.map(MathFn::kSigmoid, a + i0, s, i1 - i0);
    for (int64_t i = i0; i < i1; ++i) {
      const float si = s[i - i0];
      db[i] = dh[i] * (a[i] * si);
      da[i] = (dh[i] * b[i]) * (si * (1.0f + a[i] * (1.0f - si)));
    }
  });
}

void GeluForward(const Kernels& kernels, const float* x, int64_t n, float* y) {
  Chunks(n, [&](int64_t i0, int64_t i1) { kernels.gelu(x + i0, y + i0, i1 - i0); });
}

void GeluBackward(const Kernels& kernels, const float* dy, const float* x, int64_t n, float* dx) {
  Chunks(n,
         [&](int64_t i0, int64_t i1) { kernels.gelu_backward(dy + i0, x + i0, dx + i0, i1 - i0); });
}

}  // namespace trail::repops
