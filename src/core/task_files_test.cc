#include "core/task_files.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "core/file_util.h"
#include "core/test_util.h"

namespace trail {
namespace {

TEST(TaskSlice, ContiguousCoveringAndBalancedByBytes) {
  const std::vector<uint64_t> bytes = {100, 0, 5, 900, 40, 40, 0, 300, 1, 1, 2000, 7};
  const uint64_t total = std::accumulate(bytes.begin(), bytes.end(), uint64_t{0});
  for (uint32_t n : {1u, 2u, 3u, 7u, 12u, 40u}) {
    uint32_t next = 0;
    for (uint32_t t = 0; t < n; ++t) {
      const FileRange r = TaskSlice(bytes, t, n);
      EXPECT_EQ(r.begin, next) << "task " << t << " of " << n;  // contiguous, in order
      EXPECT_LE(r.begin, r.end);
      uint64_t mine = 0;
      for (uint32_t f = r.begin; f < r.end; ++f) mine += bytes[f];
      // A task holds at most its share plus the one file that straddles each of its edges.
      uint64_t largest = 0;
      for (uint32_t f = r.begin; f < r.end; ++f) largest = std::max(largest, bytes[f]);
      EXPECT_LE(mine, total / n + 2 * largest + 1) << "task " << t << " of " << n;
      next = r.end;
    }
    EXPECT_EQ(next, bytes.size()) << n << " tasks cover every file";
  }
  // The 2000-byte file is more than half of the bytes: with 2 tasks it makes task 1 alone.
  EXPECT_EQ(TaskSlice(bytes, 1, 2).begin, 10u);
  // More tasks than files: some are empty; all-empty files go by count.
  const std::vector<uint64_t> empty(3, 0);
  EXPECT_EQ(TaskSlice(empty, 0, 3).end, 1u);
  EXPECT_EQ(TaskSlice(empty, 2, 3).begin, 2u);
  EXPECT_EQ(TaskSlice(empty, 1, 6).begin, TaskSlice(empty, 1, 6).end);
  EXPECT_NE(ErrorOf([&] { TaskSlice(bytes, 3, 3); }), "");
}

TEST(SealedManifest, AnEditedOrTruncatedManifestReadsAsNull) {
  TempDir dir;
  const std::string path = dir / "task.json";
  WriteSealedManifest(path, {{"task", 3}, {"runs", {"a", "b"}}});
  const nlohmann::ordered_json m = ReadSealedManifest(path);
  ASSERT_FALSE(m.is_null());
  EXPECT_EQ(m.at("task"), 3);
  EXPECT_FALSE(m.contains("manifest_sha256"));
  std::string text = ReadFileToString(path);
  WriteFileAtomic(path, text.substr(0, text.size() / 2));
  EXPECT_TRUE(ReadSealedManifest(path).is_null()) << "truncated";
  text.replace(text.find("\"task\": 3"), 9, "\"task\": 4");
  WriteFileAtomic(path, text);
  EXPECT_TRUE(ReadSealedManifest(path).is_null()) << "edited";
  WriteFileAtomic(path, std::string(100, 'x'));
  EXPECT_TRUE(ReadSealedManifest(path, 99).is_null()) << "over the size bound";
  EXPECT_TRUE(ReadSealedManifest(dir / "missing.json").is_null());
}

TEST(TaskLock, ASecondHolderIsRefused) {
  TempDir dir;
  {
    const TaskLock first(dir / "t.lock");
    EXPECT_NE(ErrorOf([&] { TaskLock second(dir / "t.lock"); }).find("another process"),
              std::string::npos);
  }
  const TaskLock again(dir / "t.lock");  // released with the first
}

}  // namespace
}  // namespace trail
