#include "core/safetensors.h"

#include <cstring>
#include <fstream>

#include <gtest/gtest.h>

#include "core/file_util.h"
#include "core/hash.h"
#include "core/test_util.h"

namespace trail {
namespace {

std::vector<Tensor> SampleTensors() {
  std::vector<Tensor> ts;
  ts.push_back(Tensor::Of<float>("layers.0.w", {3, 5}));
  ts.push_back(Tensor::Of<int32_t>("step", {1}));
  ts.push_back(Tensor::Of<float>("empty", {0, 4}));
  for (int i = 0; i < 15; ++i) ts[0].data<float>()[i] = 0.25f * float(i) - 1.0f;
  ts[1].data<int32_t>()[0] = 42;
  return ts;
}

TEST(Safetensors, RoundTripKeepsNamesShapesBytesAndMetadata) {
  TempDir dir;
  std::vector<Tensor> ts = SampleTensors();
  std::vector<const Tensor*> ptrs{&ts[0], &ts[1], &ts[2]};
  WriteSafetensors(dir.path() + "/a.safetensors", ptrs, {{"format", "pt"}, {"step", "7"}});
  const SafetensorsFile f = ReadSafetensors(dir.path() + "/a.safetensors");
  ASSERT_EQ(f.tensors.size(), 3u);
  EXPECT_EQ(f.metadata.at("step"), "7");
  for (const Tensor& t : ts) {
    const Tensor* r = f.Find(t.name());
    ASSERT_NE(r, nullptr) << t.name();
    EXPECT_EQ(ToHex(TensorDigest(*r)), ToHex(TensorDigest(t))) << t.name();
  }
  // The layout is the published one: u64 header length, JSON, 8-byte aligned data.
  const std::string bytes = ReadFileToString(dir.path() + "/a.safetensors");
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  EXPECT_EQ(n % 8, 0u);
  EXPECT_EQ(bytes[8], '{');
  EXPECT_EQ(bytes.size(), 8 + n + 15 * 4 + 4);
}

TEST(Safetensors, DamagedFilesAreRefusedWithTheReason) {
  TempDir dir;
  std::vector<Tensor> ts = SampleTensors();
  std::vector<const Tensor*> ptrs{&ts[0], &ts[1]};
  const std::string path = dir.path() + "/a.safetensors";
  WriteSafetensors(path, ptrs);
  const std::string good = ReadFileToString(path);
  auto write = [&](const std::string& s) { WriteFileAtomic(path, s); };

  write(good.substr(0, good.size() - 3));
  EXPECT_NE(ErrorOf([&] { ReadSafetensors(path); }).find("truncated"), std::string::npos);
  write(good.substr(0, 5));
  EXPECT_NE(ErrorOf([&] { ReadSafetensors(path); }).find("truncated"), std::string::npos);
  std::string bad = good;
  bad[8] = '#';  // the header's opening brace
  write(bad);
  EXPECT_NE(ErrorOf([&] { ReadSafetensors(path); }).find("not valid JSON"), std::string::npos);
  write(good + "xx");
  EXPECT_NE(ErrorOf([&] { ReadSafetensors(path); }).find("trailing bytes"), std::string::npos);
  bad = good;
  bad.replace(bad.find("\"F32\""), 5, "\"BF9\"");
  write(bad);
  EXPECT_NE(ErrorOf([&] { ReadSafetensors(path); }).find("dtype 'BF9'"), std::string::npos);
  bad = good;
  bad.replace(bad.find("[3,5]"), 5, "[5,3]");  // same size: accepted, shape read as written
  write(bad);
  EXPECT_EQ(ReadSafetensors(path).Find("layers.0.w")->dim(0), 5);
  bad = good;
  bad.replace(bad.find("[3,5]"), 5, "[4,5]");
  write(bad);
  EXPECT_NE(ErrorOf([&] { ReadSafetensors(path); }).find("dtype and shape need"),
            std::string::npos);
}

}  // namespace
}  // namespace trail
