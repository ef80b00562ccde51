#include "core/spill.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>

#include "core/error.h"
#include "core/file_util.h"
#include "core/test_util.h"

namespace trail {
namespace {

namespace fs = std::filesystem;

struct Rec {
  uint64_t key;
  uint32_t seq, pad;
  bool operator<(const Rec& o) const { return key < o.key; }
};

size_t FilesIn(const std::string& dir) {
  return static_cast<size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

TEST(ExternalSorter, SpilledRunsMergeToTheInMemorySortAndKeepEqualRecordsInOrder) {
  TempDir dir;
  std::mt19937_64 rng(7);
  std::vector<Rec> all;
  for (uint32_t i = 0; i < 200000; ++i) all.push_back({rng() % 5000, i, 0});  // many equal keys
  std::vector<Rec> want = all;
  std::stable_sort(want.begin(), want.end());
  for (size_t budget : {size_t{1} << 30, size_t{64} << 10, size_t{16} << 10}) {
    ExternalSorter<Rec> sorter(dir.path(), "t", budget);
    for (const Rec& r : all) sorter.Add(r);
    EXPECT_EQ(sorter.size(), all.size());
    std::vector<Rec> got;
    sorter.Drain([&](const Rec& r) { got.push_back(r); });
    ASSERT_EQ(got.size(), want.size()) << budget;
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i].key, want[i].key) << budget << " at " << i;
      ASSERT_EQ(got[i].seq, want[i].seq) << budget << " at " << i;  // stable across runs
    }
    if (budget < (1u << 20)) {
      EXPECT_GT(sorter.spilled_bytes(), 0u);
    }
    EXPECT_EQ(FilesIn(dir.path()), 0u) << "runs are removed once drained";
  }
}

TEST(SpillFiles, RecordsRoundTripSequentiallyAndByPositionAndATornFileIsAnError) {
  TempDir dir;
  const std::string path = dir / "r.bin";
  std::vector<std::string> recs = {"", "a", std::string(100000, 'x'), "tail"};
  std::vector<uint64_t> offsets;
  {
    SpillWriter w(path, 4096);
    for (const std::string& r : recs) {
      offsets.push_back(w.offset());
      w.AppendRecord(r);
    }
    w.Close();
  }
  SpillReader r(path, 4096);
  std::string got;
  for (const std::string& want : recs) {
    ASSERT_TRUE(r.ReadRecord(got));
    EXPECT_EQ(got, want);
  }
  EXPECT_FALSE(r.ReadRecord(got));
  const PositionalReader p(path);
  for (size_t i = 0; i < recs.size(); ++i) EXPECT_EQ(p.ReadRecordAt(offsets[i]), recs[i]);
  fs::resize_file(path, fs::file_size(path) - 2);
  SpillReader torn(path, 4096);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(torn.ReadRecord(got));
  EXPECT_THROW(torn.ReadRecord(got), Error);
  // A forged length (2^39 bytes) is refused before anything is allocated, read in sequence or
  // by position.
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(offsets[2]));
    const uint64_t huge = 1ull << 39;
    f.write(reinterpret_cast<const char*>(&huge), 8);
  }
  SpillReader forged(path, 4096);
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(forged.ReadRecord(got));
  EXPECT_NE(ErrorOf([&] { forged.ReadRecord(got); }).find("runs past the end of the file"),
            std::string::npos);
  const PositionalReader q(path);
  EXPECT_NE(ErrorOf([&] { q.ReadRecordAt(offsets[2]); }).find("runs past the end of the file"),
            std::string::npos);
  EXPECT_THROW(q.ReadRecordAt(fs::file_size(path) - 3), Error);
}

}  // namespace
}  // namespace trail
