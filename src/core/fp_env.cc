#include "core/fp_env.h"

#include <cstdint>
#include <cstring>

#include "core/error.h"

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace trail {

void SetContractFpMode() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned csr = _mm_getcsr();
  csr &= ~(1u << 15);  // FTZ off
  csr &= ~(1u << 6);   // DAZ off
  csr &= ~(3u << 13);  // rounding control = nearest-even
  _mm_setcsr(csr);
#elif defined(__aarch64__)
  uint64_t fpcr = __builtin_aarch64_get_fpcr64();
  fpcr &= ~(uint64_t{1} << 24);  // FZ off
  fpcr &= ~(uint64_t{1} << 19);  // FZ16 off
  fpcr &= ~(uint64_t{3} << 22);  // RMode = nearest-even
  fpcr &= ~uint64_t{3};          // FEAT_AFP: FIZ and AH off
  __builtin_aarch64_set_fpcr64(fpcr);
#else
#error "trail supports x86-64 and aarch64"
#endif
}

namespace {

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float FromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Operands pass through volatile so the compiler cannot fold the checks at build time.
float Add(float a, float b) {
  volatile float x = a, y = b;
  return x + y;
}
float Mul(float a, float b) {
  volatile float x = a, y = b;
  return x * y;
}

void Expect(FpCheck& r, bool cond, const char* what) {
  if (!cond) {
    r.ok = false;
    r.problems += what;
    r.problems += '\n';
  }
}

}  // namespace

FpCheck CheckFpContract(MulAddProbe probe) {
  FpCheck r;
  // (1 + 2^-23)^2 = 1 + 2^-22 + 2^-46: the rounded product loses 2^-46, a fused one keeps it.
  volatile MulAddProbe p = probe;
  const float a = FromBits(0x3F800001u);
  const float c = -FromBits(0x3F800002u);
  Expect(r, p(a, a, c) == 0.0f,
         "a*b+c was fused into one rounding: the binary was built with floating-point "
         "contraction (build with -ffp-contract=off)");

  // Gradual underflow: FLT_MIN/2 must be the subnormal 2^-127, not zero (FTZ)...
  const float flt_min = FromBits(0x00800000u);
  Expect(r, Bits(Mul(flt_min, 0.5f)) == 0x00400000u,
         "a product below FLT_MIN was flushed to zero (FTZ is on; the contract keeps subnormals)");
  // ...and a subnormal input must not be read as zero (DAZ).
  const float sub = FromBits(0x00000001u);  // 2^-149; times 2^23 is FLT_MIN
  Expect(r, Bits(Mul(sub, 8388608.0f)) == 0x00800000u,
         "a subnormal input was read as zero (DAZ is on; the contract keeps subnormals)");

  // Round-to-nearest-even: ties go to even, non-ties to nearest, for both signs.
  const float one = 1.0f;
  Expect(r, Bits(Add(one, FromBits(0x33800000u))) == 0x3F800000u,  // 1 + 2^-24 -> 1 (tie)
         "rounding mode is not nearest-even (tie 1+2^-24)");
  Expect(r, Bits(Add(FromBits(0x3F800001u), FromBits(0x33800000u))) == 0x3F800002u,
         "rounding mode is not nearest-even (tie to even upward)");
  Expect(r, Bits(Add(one, FromBits(0x33C00000u))) == 0x3F800001u,  // 1 + 1.5*2^-24
         "rounding mode is not nearest (positive non-tie rounded down)");
  Expect(r, Bits(Add(-one, -FromBits(0x33C00000u))) == 0xBF800001u,
         "rounding mode is not nearest (negative non-tie rounded toward zero)");
  return r;
}

void RequireFpContract() {
  FpCheck r = CheckFpContract();
  TRAIL_CHECK(r.ok, "this build or thread breaks trail's floating-point contract:\n", r.problems);
}

}  // namespace trail
