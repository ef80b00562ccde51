#include "repops/math.h"

#include "hwy/highway.h"
#include "repops/math-inl.h"
#include "repops/scalar_ops.h"

namespace trail::repops {

namespace impl = trail::repops::HWY_NAMESPACE;

float Exp(float x) { return impl::ExpT(ScalarOps{}, x); }
float Log(float x) { return impl::LogT(ScalarOps{}, x); }
float Tanh(float x) { return impl::TanhT(ScalarOps{}, x); }
float Sigmoid(float x) { return impl::SigmoidT(ScalarOps{}, x); }
float Sin(float x) {
  float s, c;
  impl::SinCosT(ScalarOps{}, x, &s, &c);
  return s;
}
float Cos(float x) {
  float s, c;
  impl::SinCosT(ScalarOps{}, x, &s, &c);
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
