#include "repops/activation.h"

#include <algorithm>
#include <vector>

#include "repops/kernels.h"
#include "repops/parallel.h"

namespace trail::repops {
namespace {

constexpr int64_t kChunk = 4096;
constexpr float kGeluC = 0.7978845608f;   // sqrt(2/pi)
constexpr float kGeluA = 0.044715f;
constexpr float kGeluA3 = 0.134145f;      // 3 * 0.044715

// Runs f(begin, end, scratch) over fixed chunks of [0, n) in parallel.
template <class F>
void Chunks(int64_t n, F&& f) {
  ForEachRow((n + kChunk - 1) / kChunk, [&](int64_t c) {
    const int64_t begin = c * kChunk, end = std::min(n, begin + kChunk);
    std::vector<float> scratch(end - begin);
    f(begin, end, scratch.data());
  });
}

}  // namespace

void SwiGluForward(const float* a, const float* b, int64_t n, float* h) {
  Chunks(n, [&](int64_t i0, int64_t i1, float* s) {
    ActiveKernels().map(MathFn::kSigmoid, a + i0, s, i1 - i0);
    for (int64_t i = i0; i < i1; ++i) h[i] = (a[i] * s[i - i0]) * b[i];
  });
}

void SwiGluBackward(const float* dh, const float* a, const float* b, int64_t n, float* da,
                    float* db) {
  Chunks(n, [&](int64_t i0, int64_t i1, float* s) {
    ActiveKernels().map(MathFn::kSigmoid, a + i0, s, i1 - i0);
    for (int64_t i = i0; i < i1; ++i) {
      const float si = s[i - i0];
      db[i] = dh[i] * (a[i] * si);
      da[i] = (dh[i] * b[i]) * (si * (1.0f + a[i] * (1.0f - si)));
    }
  });
}

void GeluForward(const float* x, int64_t n, float* y) {
  Chunks(n, [&](int64_t i0, int64_t i1, float* t) {
    for (int64_t i = i0; i < i1; ++i) t[i - i0] = kGeluC * (x[i] + kGeluA * ((x[i] * x[i]) * x[i]));
    ActiveKernels().map(MathFn::kTanh, t, t, i1 - i0);
    for (int64_t i = i0; i < i1; ++i) y[i] = (0.5f * x[i]) * (1.0f + t[i - i0]);
  });
}

void GeluBackward(const float* dy, const float* x, int64_t n, float* dx) {
  Chunks(n, [&](int64_t i0, int64_t i1, float* t) {
    for (int64_t i = i0; i < i1; ++i) t[i - i0] = kGeluC * (x[i] + kGeluA * ((x[i] * x[i]) * x[i]));
    ActiveKernels().map(MathFn::kTanh, t, t, i1 - i0);
    for (int64_t i = i0; i < i1; ++i) {
      const float ti = t[i - i0];
      const float inner = kGeluC * (1.0f + kGeluA3 * (x[i] * x[i]));
      dx[i] = dy[i] * (0.5f * (1.0f + ti) + (0.5f * x[i]) * ((1.0f - ti * ti) * inner));
    }
  });
}

}  // namespace trail::repops
