// The CUDA backend's int8 QAT layers (repops/int8_linear.h): the same quantities as the CPU's,
// kept in the layer's operand structures on the GPU. The clipped weights are the byte mask every
// backend keeps (QuantizedWeight::clip_mask), marked on the device: nothing comes back to the host.
#include <cmath>

#include "repops/cuda/cuda_backend_impl.h"
#include "repops/int8_linear.h"

namespace trail::repops::cuda {

void CudaBackend::QuantizeWeight(const float* w, int64_t K, int64_t N, Int8Backward backward,
                                 QuantizedWeight& out, const float* learned_step) {
  TRAIL_CHECK(K > 0 && N > 0, "int8 quantization of a ", K, "x", N, " weight");
  out.K = K, out.N = N;
  out.step.resize(N), out.q.resize(K * N), out.clip_mask.resize(K * N);
  if (backward == Int8Backward::kFp32) out.dequant.resize(K * N);
  if (learned_step != nullptr) {
    CheckCuda(
        cudaMemcpy(out.step.data(), learned_step, N * sizeof(float), cudaMemcpyDeviceToDevice),
        "QuantizeWeight (learned step sizes)");
  } else {
    WeightStepSizes(w, K, N, out.step.data());
  }
  LaunchQuantizeWeight(w, K, N, out.step.data(), out.q.data(),
                       backward == Int8Backward::kFp32 ? out.dequant.data() : nullptr,
                       out.clip_mask.data());
  CheckLaunch("QuantizeWeight");
}

void CudaBackend::QuantizeInput(const float* x, int64_t M, int64_t K, QuantizedInput& out) {
  out.M = M, out.K = K, out.qt_ready = false;  // dW reads q transposed in place: no qt here
  out.q.resize(M * K), out.scale.resize(M);
  LaunchQuantizeRows(x, M, K, nullptr, out.q.data(), out.scale.data());
  CheckLaunch("QuantizeInput");
}

void CudaBackend::Int8LinearForward(const QuantizedInput& x, const QuantizedWeight& w, Int8Scratch&,
                                    float* y) {
  TRAIL_CHECK(x.K == w.K, "int8 linear: input width ", x.K, " against weight rows ", w.K);
  CheckInt8Reduction(w.K);
  // y [M, N] = (float(qx·qw)·r_t)·s_j.
  LaunchGemmI8({.M = x.M,
                .N = w.N,
                .K = w.K,
                .a_rs = w.K,
                .a_cs = 1,
                .b_rs = w.N,
                .b_cs = 1,
                .row_scale = x.scale.data(),
                .col_scale = w.step.data()},
               x.q.data(), w.q.data(), y);
  CheckLaunch("Int8LinearForward");
}

void CudaBackend::Int8BackwardInput(const float* dy, int64_t M, const QuantizedWeight& w,
                                    Int8Backward backward, float* dx, bool accumulate) {
  const int64_t K = w.K, N = w.N;
  if (backward == Int8Backward::kFp32) {
    MatMulBT(dy, w.dequant.data(), dx, M, N, K, accumulate);  // dX = dY·Q(W)ᵀ
    return;
  }
  // g = dY·diag(s) quantized per token (qg, u); dX (+)= u ⊙ (qg·qwᵀ), qw read as Bᵀ.
  CheckInt8Reduction(N);
  int8_t* qg = i8_a_.As<int8_t>(M * N);
  float* u = i8_u_.As<float>(M);
  LaunchQuantizeRows(dy, M, N, w.step.data(), qg, u);
  LaunchGemmI8({.M = M,
                .N = K,
                .K = N,
                .a_rs = N,
                .a_cs = 1,
                .b_rs = 1,
                .b_cs = N,
                .row_scale = u,
                .accumulate = accumulate},
               qg, w.q.data(), dx);
  CheckLaunch("Int8LinearBackward (dx)");
}

void CudaBackend::Int8BackwardWeight(const QuantizedInput& x, const float* dy,
                                     const QuantizedWeight& qw, Int8Backward backward, float* dw,
                                     const float* w, float* dstep) {
  const int64_t M = x.M, K = qw.K, N = qw.N;
  if (backward == Int8Backward::kFp32) {
    float* xd = i8_float_.As<float>(M * K);  // Q(X)
    LaunchDequantizeRows(x.q.data(), x.scale.data(), M, K, xd);
    CheckLaunch("Int8LinearBackward (Q(X))");
    MatMulAT(xd, dy, dw, K, M, N, false);  // dW = Q(X)ᵀ·dY
  } else {
    // h = diag(r)·dY quantized per column (scales v from the column maxima), then
    // dW = float(qxᵀ·qh)·v_j with qx read transposed in place.
    CheckInt8Reduction(M);
    float* v = i8_v_.As<float>(N);
    int8_t* qh = i8_a_.As<int8_t>(M * N);
    LaunchColumnAbsMaxScales(dy, x.scale.data(), M, N, v);
    LaunchQuantizeScaledRows(dy, x.scale.data(), v, M, N, qh);
    LaunchGemmI8(
        {.M = K, .N = N, .K = M, .a_rs = 1, .a_cs = K, .b_rs = N, .b_cs = 1, .col_scale = v},
        x.q.data(), qh, dw);
    CheckLaunch("Int8LinearBackward (dw)");
  }
  if (dstep != nullptr) {
    TRAIL_CHECK(w != nullptr, "int8 linear: the step-size gradient needs the weight");
    const float g = static_cast<float>(1.0 / std::sqrt(static_cast<double>(K) * kInt8QMax));
    LaunchLsqStepGradient(dw, w, qw.q.data(), qw.step.data(), K, N, g, dstep);
  }
  LaunchZeroMasked(dw, qw.clip_mask.data(), K * N);  // no gradient where W was clipped
  CheckLaunch("Int8LinearBackward (finish)");
}

void CudaBackend::Int8LinearBackward(QuantizedInput& x, const float* dy, const QuantizedWeight& qw,
                                     Int8Backward backward, Int8Scratch&, float* dx,
                                     bool accumulate, float* dw, const float* w, float* dstep) {
  TRAIL_CHECK(x.K == qw.K, "int8 linear: input width ", x.K, " against weight rows ", qw.K);
  // dX first: its quantized gradient and the dW operand share a scratch buffer, used in
  // stream order.
  Int8BackwardInput(dy, x.M, qw, backward, dx, accumulate);
  Int8BackwardWeight(x, dy, qw, backward, dw, w, dstep);
}

}  // namespace trail::repops::cuda
