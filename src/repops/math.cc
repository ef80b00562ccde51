#include "repops/math.h"

#include "hwy/highway.h"
#include "repops/math-inl.h"
#include "repops/scalar_ops.h"

// The scalar entry points are compiled inside the static target's namespace so that the
// always-inline templates share its target attributes (required on aarch64).
HWY_BEFORE_NAMESPACE();
namespace trail::repops::HWY_NAMESPACE {
float ScalarExp(float x) { return ExpT(ScalarOps{}, x); }
float ScalarLog(float x) { return LogT(ScalarOps{}, x); }
float ScalarTanh(float x) { return TanhT(ScalarOps{}, x); }
float ScalarSigmoid(float x) { return SigmoidT(ScalarOps{}, x); }
float ScalarGelu(float x) { return GeluT(ScalarOps{}, x); }
float ScalarGeluGrad(float x) { return GeluGradT(ScalarOps{}, x); }
void ScalarSinCos(float x, float* s, float* c) { SinCosT(ScalarOps{}, x, s, c); }
}  // namespace trail::repops::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

namespace trail::repops {

namespace impl = trail::repops::HWY_NAMESPACE;

float Exp(float x) { return impl::ScalarExp(x); }
float Log(float x) { return impl::ScalarLog(x); }
float Tanh(float x) { return impl::ScalarTanh(x); }
float Sigmoid(float x) { return impl::ScalarSigmoid(x); }
float Gelu(float x) { return impl::ScalarGelu(x); }
float GeluGrad(float x) { return impl::ScalarGeluGrad(x); }
float Sin(float x) {
  float s, c;
  impl::ScalarSinCos(x, &s, &c);
  return s;
}
float Cos(float x) {
  float s, c;
  impl::ScalarSinCos(x, &s, &c);
  return c;
}

float PowInt(float b, int64_t n) {
  float r = 1.0f;
  while (n > 0) {
    if (n & 1) r = r * b;
    b = b * b;
    n >>= 1;
  }
  return r;
}

}  // namespace trail::repops
