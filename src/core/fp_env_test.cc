#include "core/fp_env.h"

#include <gtest/gtest.h>

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

namespace trail {
float ContractedMulAddProbe(float a, float b, float c);  // built with -ffp-contract=fast
namespace {

TEST(FpContract, HoldsInThisBuild) {
  SetContractFpMode();
  const FpCheck r = CheckFpContract();
  EXPECT_TRUE(r.ok) << r.problems;
}

TEST(FpContract, CatchesABuildWithContraction) {
  SetContractFpMode();
  const FpCheck r = CheckFpContract(&ContractedMulAddProbe);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.problems.find("-ffp-contract=off"), std::string::npos) << r.problems;
}

#if defined(__x86_64__)
TEST(FpContract, CatchesFlushToZeroAndRounding) {
  const unsigned saved = _mm_getcsr();
  _mm_setcsr(saved | (1u << 15) | (1u << 6));  // FTZ + DAZ
  FpCheck r = CheckFpContract();
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.problems.find("FTZ"), std::string::npos) << r.problems;
  EXPECT_NE(r.problems.find("DAZ"), std::string::npos) << r.problems;
  _mm_setcsr((saved & ~(3u << 13)) | (3u << 13));  // round toward zero
  r = CheckFpContract();
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.problems.find("rounding mode"), std::string::npos) << r.problems;
  _mm_setcsr(saved);
  SetContractFpMode();
  EXPECT_NO_THROW(RequireFpContract());
}
#endif

}  // namespace
}  // namespace trail
