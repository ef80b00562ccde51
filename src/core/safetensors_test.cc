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

// The layout alone (what a reader that maps the file uses) points at each tensor's bytes, in
// file order, and refuses what ReadSafetensors refuses.
TEST(Safetensors, LayoutPointsAtEachTensorsBytes) {
  TempDir dir;
  std::vector<Tensor> ts = SampleTensors();
  std::vector<const Tensor*> ptrs{&ts[0], &ts[1], &ts[2]};
  const std::string path = dir.path() + "/a.safetensors";
  WriteSafetensors(path, ptrs, {{"step", "7"}});
  const SafetensorsLayout l = ReadSafetensorsLayout(path);
  const std::string bytes = ReadFileToString(path);
  EXPECT_EQ(l.file_size, bytes.size());
  EXPECT_EQ(l.metadata.at("step"), "7");
  ASSERT_EQ(l.tensors.size(), 3u);
  for (size_t i = 0; i < ts.size(); ++i) {
    const SafetensorsEntry& e = l.tensors[i];
    EXPECT_EQ(e.name, ts[i].name());
    EXPECT_EQ(e.dtype, ts[i].dtype());
    EXPECT_EQ(e.shape, ts[i].shape());
    ASSERT_EQ(e.nbytes, ts[i].nbytes());
    ASSERT_LE(e.offset + e.nbytes, bytes.size());
    if (e.nbytes > 0) {
      EXPECT_EQ(std::memcmp(bytes.data() + e.offset, ts[i].bytes(), e.nbytes), 0) << e.name;
    }
  }
  WriteFileAtomic(path, bytes.substr(0, bytes.size() - 3));
  EXPECT_NE(ErrorOf([&] { ReadSafetensorsLayout(path); }).find("truncated"), std::string::npos);
}

// The prefix (length, header, padding) is what WriteSafetensors writes before the data, and the
// data follows back to back: a file assembled from the prefix and each tensor's bytes at its
// offset, in pieces, is the same file (train/checkpoint.h writes checkpoints that way).
TEST(Safetensors, PrefixAndBackToBackDataAreTheWrittenFile) {
  TempDir dir;
  std::vector<Tensor> ts = SampleTensors();
  std::vector<const Tensor*> ptrs{&ts[0], &ts[1], &ts[2]};
  const std::string path = dir.path() + "/a.safetensors";
  WriteSafetensors(path, ptrs, {{"format", "pt"}});
  std::vector<SafetensorsEntry> entries;
  for (const Tensor& t : ts) entries.push_back({t.name(), t.dtype(), t.shape()});
  std::string assembled = SafetensorsPrefix(entries, {{"format", "pt"}}, path);
  for (const Tensor& t : ts) assembled.append(reinterpret_cast<const char*>(t.bytes()), t.nbytes());
  EXPECT_EQ(assembled, ReadFileToString(path));
  entries.push_back(entries[0]);
  EXPECT_NE(ErrorOf([&] { SafetensorsPrefix(entries, {}, path); }).find("repeated"),
            std::string::npos);
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
// A file of the given header text (padded to 8 bytes) and data bytes, as a hostile writer
// would make it.
std::string RawFile(const std::string& header, const std::string& data, uint64_t len = ~0ull) {
  std::string h = header;
  h.resize((h.size() + 7) / 8 * 8, ' ');
  if (len == ~0ull) len = h.size();
  std::string out(8, '\0');
  std::memcpy(out.data(), &len, 8);
  return out + h + data;
}

std::string ErrorReading(const TempDir& dir, const std::string& bytes) {
  const std::string path = dir.path() + "/h.safetensors";
  WriteFileAtomic(path, bytes);
  return ErrorOf([&] { ReadSafetensors(path); });
}

TEST(Safetensors, HostileHeadersAreRefusedWithoutCrashOrHugeAllocation) {
  TempDir dir;
  const std::string data24(24, '\x01');
  auto expect = [&](const std::string& bytes, const std::string& reason) {
    const std::string e = ErrorReading(dir, bytes);
    EXPECT_NE(e.find(reason), std::string::npos) << "want '" << reason << "', got: " << e;
  };
  // Header length beyond the file, and absurdly large.
  expect(RawFile(R"({})", "", 1000), "truncated safetensors file: header of 1000 bytes");
  expect(RawFile(R"({})", "", ~0ull - 3), "truncated");
  // Offsets overlapping, out of range, leaving a gap, not covering the data.
  expect(RawFile(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},)"
                 R"("b":{"dtype":"F32","shape":[4],"data_offsets":[8,24]}})",
                 data24),
         "overlap or leave a gap");
  expect(
      RawFile(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[1099511627776,1099511627792]}})",
              data24),
      "overlap or leave a gap");
  expect(
      RawFile(R"({"a":{"dtype":"F32","shape":[268435456],"data_offsets":[0,1073741824]}})", data24),
      "more elements than the file holds");
  expect(RawFile(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                 R"("b":{"dtype":"F32","shape":[2],"data_offsets":[16,24]}})",
                 data24),
         "overlap or leave a gap (expected to start at 8)");
  expect(RawFile(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", data24),
         "8 trailing bytes");
  expect(RawFile(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[16,0]}})", data24),
         "overlap or leave a gap");
  // dtype and shape disagreeing with the byte length; shapes whose product overflows.
  expect(RawFile(R"({"a":{"dtype":"I8","shape":[5],"data_offsets":[0,24]}})", data24),
         "holds 24 bytes but dtype and shape need 5");
  expect(RawFile(R"({"a":{"dtype":"F32","shape":[4294967296,4294967296,16],"data_offsets":[0,0]}})",
                 ""),
         "more elements than the file holds");
  expect(RawFile(R"({"a":{"dtype":"F32","shape":[-1,6],"data_offsets":[0,24]}})", data24),
         "a dimension must be a non-negative integer");
  expect(RawFile(R"({"a":{"dtype":"F32","shape":[1.5,4],"data_offsets":[0,24]}})", data24),
         "a dimension must be a non-negative integer");
  expect(RawFile(R"({"a":{"dtype":"F32","shape":[6],"data_offsets":[0,-24]}})", data24),
         "data_offsets must be a non-negative integer");
  expect(RawFile(R"({"a":{"dtype":"F32","shape":)" + std::string(20, '[') + "]", data24),
         "not valid JSON");
  expect(
      RawFile(
          R"({"a":{"dtype":"F32","shape":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1],"data_offsets":[0,4]}})",
          data24),
      "at most 16 dimensions");
  // Duplicate names (plain JSON parsing would keep the last silently); non-UTF-8 names.
  expect(RawFile(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,12]},)"
                 R"("a":{"dtype":"F32","shape":[3],"data_offsets":[12,24]}})",
                 data24),
         "tensor name 'a' appears twice");
  expect(
      RawFile("{\"\xff\xfe\":{\"dtype\":\"F32\",\"shape\":[6],\"data_offsets\":[0,24]}}", data24),
      "not valid JSON");
  expect(RawFile(R"({"\ud800":{"dtype":"F32","shape":[6],"data_offsets":[0,24]}})", data24),
         "not valid JSON");
  // Entries that are not objects of exactly the three fields.
  expect(RawFile(R"({"a":[1,2,3]})", data24), "must have exactly dtype, shape and data_offsets");
  expect(RawFile(R"({"a":{"dtype":7,"shape":[6],"data_offsets":[0,24]}})", data24),
         "dtype must be a string");
}

TEST(Safetensors, HeaderBeyondTheFormatLimitIsRefusedBeforeParsing) {
  // A sparse file of 200 MB whose header claims 150 MB: refused by the limit, not parsed.
  TempDir dir;
  const std::string path = dir.path() + "/big.safetensors";
  {
    std::ofstream out(path, std::ios::binary);
    const uint64_t len = 150'000'000;
    out.write(reinterpret_cast<const char*>(&len), 8);
    out.seekp(200'000'000 - 1);
    out.put('\0');
  }
  EXPECT_NE(ErrorOf([&] { ReadSafetensors(path); }).find("beyond the format's limit"),
            std::string::npos);
}

}  // namespace trail
