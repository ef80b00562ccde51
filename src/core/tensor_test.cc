#include "core/tensor.h"

#include <gtest/gtest.h>

namespace trail {
namespace {

TEST(Tensor, ShapeSizeAndAlignment) {
  Tensor t = Tensor::Of<float>("x", {3, 5});
  EXPECT_EQ(t.numel(), 15);
  EXPECT_EQ(t.nbytes(), 60u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.bytes()) % 64, 0u);
  for (float v : t.span<float>()) EXPECT_EQ(v, 0.0f);
}

TEST(Tensor, WrongTypeAccessIsAClearError) {
  Tensor t = Tensor::Of<int8_t>("q", {4});
  try {
    t.data<float>();
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tensor 'q' holds I8, accessed as F32"),
              std::string::npos);
  }
}

TEST(Tensor, NegativeDimensionRejected) { EXPECT_THROW(Tensor::Of<float>("bad", {2, -1}), Error); }

}  // namespace
}  // namespace trail
