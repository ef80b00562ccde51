// Elementwise kernels of the CUDA backend: each element's value is the spec's expression, one
// rounded operation at a time (docs/repops.md §5), so any launch geometry gives the same bits.
#include "repops/cuda/device_math.cuh"
#include "repops/cuda/for_each.cuh"
#include "repops/cuda/launch.h"

namespace trail::repops::cuda {

void LaunchFill(float* x, int64_t n, float value) {
  LaunchForEach(n, [=] __device__(int64_t i) { x[i] = value; });
}
void LaunchScale(float* x, int64_t n, float coef) {
  LaunchForEach(n, [=] __device__(int64_t i) { x[i] = __fmul_rn(x[i], coef); });
}
void LaunchAddInto(float* y, const float* x, int64_t n) {
  LaunchForEach(n, [=] __device__(int64_t i) { y[i] = __fadd_rn(y[i], x[i]); });
}
void LaunchAddZero(float* x, int64_t n) {
  LaunchForEach(n, [=] __device__(int64_t i) { x[i] = __fadd_rn(x[i], 0.0f); });
}
void LaunchSumGroups(const float* x, int64_t groups, int64_t group, int64_t block, float* y) {
  LaunchForEach(groups * block, [=] __device__(int64_t i) {
    const int64_t g = i / block, e = i % block;
    const float* first = x + g * group * block + e;
    float acc = first[0];
    for (int64_t m = 1; m < group; ++m) acc = __fadd_rn(acc, first[m * block]);
    y[i] = acc;
  });
}

void LaunchSwiGluForward(const float* a, const float* b, int64_t n, float* h) {
  LaunchForEach(n, [=] __device__(int64_t i) {
    const float s = DevSigmoid(a[i]);
    h[i] = __fmul_rn(__fmul_rn(a[i], s), b[i]);
  });
}
void LaunchSwiGluBackward(const float* dh, const float* a, const float* b, int64_t n, float* da,
                          float* db) {
  LaunchForEach(n, [=] __device__(int64_t i) {
    const float s = DevSigmoid(a[i]), ai = a[i], dhi = dh[i], bi = b[i];
    db[i] = __fmul_rn(dhi, __fmul_rn(ai, s));
    // (dh·b)·(s·(1 + a·(1 − s)))
    const float inner = __fadd_rn(1.0f, __fmul_rn(ai, __fsub_rn(1.0f, s)));
    da[i] = __fmul_rn(__fmul_rn(dhi, bi), __fmul_rn(s, inner));
  });
}
void LaunchGeluForward(const float* x, int64_t n, float* y) {
  LaunchForEach(n, [=] __device__(int64_t i) { y[i] = DevGelu(x[i]); });
}
void LaunchGeluBackward(const float* dy, const float* x, int64_t n, float* dx) {
  // kernels.cc's gelu_backward: dx = dy · GeluGrad(x).
  LaunchForEach(n, [=] __device__(int64_t i) { dx[i] = __fmul_rn(dy[i], DevGeluGrad(x[i])); });
}

void LaunchAdamW(float* p, const float* g, float* m, float* v, int64_t n, const AdamWConstants& k) {
  LaunchForEach(n, [=] __device__(int64_t i) {
    const float gi = g[i];
    const float mi = __fadd_rn(__fmul_rn(k.beta1, m[i]), __fmul_rn(k.omb1, gi));
    const float vi = __fadd_rn(__fmul_rn(k.beta2, v[i]), __fmul_rn(k.omb2, __fmul_rn(gi, gi)));
    m[i] = mi;
    v[i] = vi;
    const float denom = __fadd_rn(__fsqrt_rn(__fmul_rn(vi, k.bc2)), k.eps);
    const float update = __fmul_rn(k.lr, __fdiv_rn(__fmul_rn(mi, k.bc1), denom));
    p[i] = __fsub_rn(__fmul_rn(p[i], k.decay), update);
  });
}

void LaunchFillNormal(float* x, int64_t n, uint64_t seed, uint64_t stream, float mean,
                      float stddev) {
  LaunchForEach(n, [=] __device__(int64_t i) {
    const PhiloxOut b = DevPhilox(seed, stream, static_cast<uint64_t>(i));
    // core/philox.h: UniformOpenZeroFromBits and UniformFromBits (exact conversions).
    const float u1 = __fmul_rn(__uint2float_rn((b.w[0] >> 8) + 1u), 0x1p-24f);
    const float u2 = __fmul_rn(__uint2float_rn(b.w[1] >> 8), 0x1p-24f);
    const float z =
        __fmul_rn(__fsqrt_rn(__fmul_rn(-2.0f, DevLog(u1))), DevCos(__fmul_rn(6.28318548f, u2)));
    x[i] = __fadd_rn(mean, __fmul_rn(stddev, z));
  });
}

void LaunchRope(float* x, int64_t rows, int64_t hd, const int32_t* pos, const float* cos,
                const float* sin, bool backward) {
  const int64_t h = hd / 2;
  LaunchForEach(rows * h, [=] __device__(int64_t e) {
    const int64_t r = e / h, i = e % h;
    const float c = cos[pos[r] * h + i], s = sin[pos[r] * h + i];
    float* xr = x + r * hd;
    const float x0 = xr[i], x1 = xr[i + h];
    if (!backward) {
      xr[i] = __fsub_rn(__fmul_rn(x0, c), __fmul_rn(x1, s));
      xr[i + h] = __fadd_rn(__fmul_rn(x0, s), __fmul_rn(x1, c));
    } else {
      xr[i] = __fadd_rn(__fmul_rn(x0, c), __fmul_rn(x1, s));
      xr[i + h] = __fsub_rn(__fmul_rn(x1, c), __fmul_rn(x0, s));
    }
  });
}

// x [rows, T, H, hd] <-> y [rows, H, T, hd]: element e of y.
void LaunchSplitHeads(const float* x, float* y, int64_t rows, int64_t T, int64_t H, int64_t hd) {
  LaunchForEach(rows * T * H * hd, [=] __device__(int64_t e) {
    const int64_t d = e % hd, t = (e / hd) % T, h = (e / (hd * T)) % H, r = e / (hd * T * H);
    y[e] = x[((r * T + t) * H + h) * hd + d];
  });
}
void LaunchAppendKeysTransposed(const float* k, int64_t n, int64_t d, float* kt, int64_t capacity,
                                int64_t first) {
  if (n == 0) return;
  LaunchForEach(n * d, [=] __device__(int64_t e) {
    const int64_t i = e / d, c = e % d;
    kt[c * capacity + first + i] = k[e];
  });
}
void LaunchMergeHeads(const float* y, float* x, int64_t rows, int64_t T, int64_t H, int64_t hd) {
  LaunchForEach(rows * T * H * hd, [=] __device__(int64_t e) {
    const int64_t d = e % hd, t = (e / hd) % T, h = (e / (hd * T)) % H, r = e / (hd * T * H);
    x[((r * T + t) * H + h) * hd + d] = y[e];
  });
}

void LaunchEmbeddingForward(const float* table, int64_t d, const int32_t* tokens, int64_t n,
                            float* out) {
  LaunchForEach(n * d, [=] __device__(int64_t e) {
    const int64_t t = e / d, j = e % d;
    out[e] = table[int64_t{tokens[t]} * d + j];
  });
}
// One thread per column: positions in ascending order, as the spec orders the additions.
void LaunchEmbeddingBackward(const float* dout, const int32_t* tokens, int64_t n, int64_t d,
                             float* dtable) {
  LaunchForEach(d, [=] __device__(int64_t j) {
    for (int64_t t = 0; t < n; ++t) {
      float* cell = dtable + int64_t{tokens[t]} * d + j;
      *cell = __fadd_rn(*cell, dout[t * d + j]);
    }
  });
}

void LaunchCheckIds(const int32_t* ids, int64_t n, int64_t lo, int64_t hi, int64_t except,
                    unsigned long long* first_bad, unsigned long long* valid) {
  LaunchForEach(n, [=] __device__(int64_t i) {
    const int64_t id = ids[i];
    if (id == except) return;
    atomicAdd(valid, 1ull);
    if (id < lo || id >= hi) atomicMin(first_bad, static_cast<unsigned long long>(i));
  });
}

}  // namespace trail::repops::cuda
