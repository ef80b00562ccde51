#include "core/device.h"

#include <gtest/gtest.h>

#include <cstring>

#include "core/guarded_memory.h"

namespace trail {
namespace {

// Names print as ParseDevice (repops/devices.h) reads them; kinds compare by name.
TEST(Device, PrintsItsName) {
  constexpr DeviceKind kNumbered{"npu", true};
  EXPECT_EQ(Device{}.ToString(), "cpu");
  EXPECT_EQ((Device{kGuardedDevice, 0}).ToString(), "guarded");
  EXPECT_EQ((Device{kNumbered, 3}).ToString(), "npu:3");
  EXPECT_EQ((Device{kNumbered, Device::kLocalGpu}).ToString(), "npu");
  EXPECT_EQ((Device{DeviceKind{"cpu"}, 0}), Device{});
  EXPECT_NE((Device{kNumbered, 0}), (Device{kNumbered, 1}));
  EXPECT_NE((Device{kGuardedDevice, 0}), Device{});
  EXPECT_TRUE(HostAllocator().is_host_memory());
  GuardedAllocator guarded;
  EXPECT_FALSE(guarded.is_host_memory());
}

TEST(Buffer, ZeroedAlignedTypedAndMovable) {
  Buffer b = Buffer::Of<float>(HostAllocator(), 1000);
  EXPECT_EQ(b.numel(), 1000);
  EXPECT_EQ(b.nbytes(), 4000u);
  EXPECT_EQ(b.device(), Device{});
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data<float>()) % 64, 0u);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(b.data<float>()[i], 0.0f);
  EXPECT_THROW(b.data<int32_t>(), Error);
  float* p = b.data<float>();
  Buffer moved = std::move(b);
  EXPECT_EQ(moved.data<float>(), p);
  EXPECT_TRUE(b.empty());
  Buffer none = Buffer::Of<float>(HostAllocator(), 0);
  EXPECT_NE(none.data<float>(), nullptr);
}

TEST(TensorView, ContiguousStridesAndChecks) {
  Buffer b = Buffer::Of<int32_t>(HostAllocator(), 24);
  const TensorView v = b.view({2, 3, 4});
  EXPECT_EQ(v.rank, 3);
  EXPECT_EQ(v.numel(), 24);
  EXPECT_EQ(v.strides[0], 12);
  EXPECT_EQ(v.strides[1], 4);
  EXPECT_EQ(v.strides[2], 1);
  EXPECT_TRUE(v.contiguous());
  EXPECT_EQ(v.as<int32_t>(), b.data<int32_t>());
  EXPECT_THROW(v.as<float>(), Error);
  TensorView column = v;  // every fourth element: not contiguous
  column.rank = 1, column.shape[0] = 6, column.strides[0] = 4;
  EXPECT_FALSE(column.contiguous());
  EXPECT_THROW(b.view({5, 5}), Error);  // more elements than the buffer holds
  EXPECT_THROW(b.view({1, 1, 1, 1, 1}), Error);
}

TEST(GuardedMemory, ReadableOnlyInsideAWindow) {
  GuardedAllocator mem;
  EXPECT_EQ(mem.device(), (Device{kGuardedDevice, 0}));
  Buffer b = Buffer::Of<float>(mem, 3000);
  {
    GuardedWindow open(mem);
    EXPECT_TRUE(mem.is_open());
    for (int i = 0; i < 3000; ++i) EXPECT_EQ(b.data<float>()[i], 0.0f);
    b.data<float>()[2999] = 7.0f;
    Buffer inner = Buffer::Of<float>(mem, 10);  // made while open: open too
    inner.data<float>()[9] = 1.0f;
  }
  EXPECT_FALSE(mem.is_open());
  EXPECT_EQ(mem.live_allocations(), 1u);
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        volatile float x = b.data<float>()[0];
        (void)x;
      },
      "");
  EXPECT_DEATH(b.data<float>()[1] = 1.0f, "");
  GuardedWindow open(mem);
  EXPECT_EQ(b.data<float>()[2999], 7.0f);
}

TEST(GuardedMemory, WindowsNest) {
  GuardedAllocator mem;
  Buffer b = Buffer::Of<float>(mem, 4);
  mem.Open();
  mem.Open();
  mem.Close();
  b.data<float>()[0] = 2.0f;  // still open: the outer window holds
  mem.Close();
  EXPECT_FALSE(mem.is_open());
  EXPECT_THROW(mem.Close(), Error);
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        volatile float x = b.data<float>()[0];
        (void)x;
      },
      "");
}

}  // namespace
}  // namespace trail
