#include <gtest/gtest.h>

#include <cstdio>
#include <map>

#include "core/file_util.h"
#include "core/hash.h"
#include "core/test_util.h"
#include "fetch/chunk_cache.h"
#include "fetch/content_range.h"
#include "fetch/source.h"

namespace trail::fetch {
namespace {

// An in-memory server: files by path, a count of bytes served, and faults on demand.
class FakeSource : public Source {
 public:
  std::map<std::string, std::string> files;
  uint64_t served = 0;
  int fail_after = -1;  // reads that succeed before every later one fails (-1: none)
  bool flip = false;    // flip the first byte of every answer

  std::string Read(const std::string& path, uint64_t offset, uint64_t length, uint64_t) override {
    if (fail_after == 0) throw FetchError(path + ": connection dropped");
    if (fail_after > 0) --fail_after;
    std::string out = files.at(path).substr(offset, length);
    if (flip && !out.empty()) out[0] ^= 1;
    served += out.size();
    return out;
  }
  std::string ReadSmall(const std::string& path, uint64_t) override { return files.at(path); }
  std::string Describe(const std::string& path) const override { return "fake://" + path; }
};

RemoteFile Publish(const std::string& path, const std::string& bytes, uint64_t chunk) {
  RemoteFile f;
  f.path = path, f.size = bytes.size(), f.chunk_bytes = chunk;
  auto hex = [](const std::string& s) {
    return ToHex(Sha256({reinterpret_cast<const uint8_t*>(s.data()), s.size()}));
  };
  f.sha256 = hex(bytes);
  for (uint64_t at = 0; at < bytes.size(); at += chunk)
    f.chunks.push_back(hex(bytes.substr(at, chunk)));
  return f;
}

const std::string kRoot(64, 'a');  // a publication's root, as the cache is keyed

std::string Bytes(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131 + 7) % 251);
  return s;
}

TEST(ContentRange, ParsesOnlyWellFormedRanges) {
  const auto r = ParseContentRange("bytes 0-1023/4096");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->first, 0u);
  EXPECT_EQ(r->last, 1023u);
  EXPECT_EQ(r->total, 4096u);
  EXPECT_FALSE(ParseContentRange("bytes 10-20/*")->total);
  for (const char* bad :
       {"", "bytes", "bytes 5-4/10", "bytes 0-10/10", "items 0-1/2", "bytes 0-1/2 ", "bytes -1/2",
        "bytes 0-99999999999999999999/1", "bytes 1-2/3x"}) {
    EXPECT_FALSE(ParseContentRange(bad)) << bad;
  }
}

TEST(ChunkCache, FetchesOnlyMissingChunksAndVerifiesThem) {
  TempDir dir;
  FakeSource src;
  src.files["a.bin"] = Bytes(10000);
  const RemoteFile f = Publish("a.bin", src.files["a.bin"], 4096);
  Progress quiet(true);
  ChunkCache cache(dir.path(), kRoot, src, quiet);
  EXPECT_EQ(cache.MissingBytes(f, 5000, 5001), 4096u);
  const std::string local = cache.Ensure(f, 5000, 5001);  // chunk 1 only
  EXPECT_EQ(src.served, 4096u);
  EXPECT_EQ(ReadFileToString(local).substr(4096, 4096), src.files["a.bin"].substr(4096, 4096));
  cache.Ensure(f, 4100, 8000);
  EXPECT_EQ(src.served, 4096u) << "a cached chunk was fetched again";
  cache.EnsureWhole(f);
  EXPECT_EQ(src.served, 10000u);
  EXPECT_EQ(ReadFileToString(local), src.files["a.bin"]);
  // Another cache object on the same folder (the next audit) fetches nothing.
  ChunkCache again(dir.path(), kRoot, src, quiet);
  again.EnsureWhole(f);
  EXPECT_EQ(src.served, 10000u);
}

TEST(ChunkCache, ADroppedTransferResumesWhereItStopped) {
  TempDir dir;
  FakeSource src;
  src.files["b.bin"] = Bytes(40000);
  const RemoteFile f = Publish("b.bin", src.files["b.bin"], 4096);
  Progress quiet(true);
  {
    ChunkCache cache(dir.path(), kRoot, src, quiet);
    src.fail_after = 0;
    EXPECT_THROW(cache.Ensure(f, 0, 4096), FetchError);
  }
  src.fail_after = -1;
  ChunkCache cache(dir.path(), kRoot, src, quiet);
  cache.Ensure(f, 0, 20000);  // runs of missing chunks come in one request each
  const uint64_t first = src.served;
  src.fail_after = 0;
  EXPECT_THROW(cache.EnsureWhole(f), FetchError);
  src.fail_after = -1;
  EXPECT_EQ(ReadFileToString(cache.EnsureWhole(f)), src.files["b.bin"]);
  EXPECT_EQ(src.served, 40000u) << "bytes were fetched twice (first run: " << first << ")";
}

TEST(ChunkCache, AlteredBytesAreNamedAndNeverMarked) {
  TempDir dir;
  FakeSource src;
  src.files["c.bin"] = Bytes(9000);
  const RemoteFile f = Publish("c.bin", src.files["c.bin"], 4096);
  Progress quiet(true);
  ChunkCache cache(dir.path(), kRoot, src, quiet);
  src.flip = true;
  const std::string e = ErrorOf([&] { cache.Ensure(f, 4096, 9000); });
  EXPECT_NE(e.find("fake://c.bin: bytes [4096, 8192) are not the published ones"),
            std::string::npos)
      << e;
  src.flip = false;
  EXPECT_EQ(cache.MissingBytes(f, 4096, 9000), 9000u - 4096u);
  EXPECT_EQ(ReadFileToString(cache.EnsureWhole(f)), src.files["c.bin"]);
}

// A publication signed by another key lists the genuine file's SHA-256 with one forged chunk
// hash; auditing it first must not change what the genuine publication's audit reads.
TEST(ChunkCache, AForgedPublicationCannotPoisonTheGenuineOne) {
  TempDir dir;
  FakeSource genuine, mirror;
  genuine.files["s.bin"] = Bytes(3 * 4096);
  mirror.files["s.bin"] = genuine.files["s.bin"];
  mirror.files["s.bin"][4096 + 7] ^= 0x40;
  const RemoteFile real = Publish("s.bin", genuine.files["s.bin"], 4096);
  RemoteFile forged = Publish("s.bin", mirror.files["s.bin"], 4096);
  forged.sha256 = real.sha256;  // the whole-file hash left genuine: only chunk 1 is forged
  Progress quiet(true);
  {
    ChunkCache hostile(dir.path(), std::string(64, 'b'), mirror, quiet);
    hostile.Ensure(forged, 4096, 8192);  // the forged chunk, verified against the forged hash
  }
  ChunkCache honest(dir.path(), kRoot, genuine, quiet);
  EXPECT_EQ(ReadFileToString(honest.EnsureWhole(real)), genuine.files["s.bin"]);
  EXPECT_EQ(honest.reused_bytes(), 0u) << "the forged chunk was taken for the genuine one";
  EXPECT_EQ(genuine.served, 3u * 4096u);
}

// Two publications of one file with different chunk sizes share bytes safely: the second reuses
// the first's verified bytes where its chunks lie wholly inside them, and fetches the rest.
TEST(ChunkCache, TwoChunkSizesShareOneCache) {
  TempDir dir;
  FakeSource src;
  src.files["t.bin"] = Bytes(64 * 1024 + 100);
  const RemoteFile small = Publish("t.bin", src.files["t.bin"], 4096);
  const RemoteFile large = Publish("t.bin", src.files["t.bin"], 16384);
  Progress quiet(true);
  ChunkCache a(dir.path(), std::string(64, '1'), src, quiet);
  a.Ensure(small, 0, 3 * 4096);  // bytes [0, 12288)
  ChunkCache b(dir.path(), std::string(64, '2'), src, quiet);
  const uint64_t before = src.served;
  EXPECT_EQ(ReadFileToString(b.EnsureWhole(large)), src.files["t.bin"]);
  EXPECT_EQ(b.reused_bytes(), 0u) << "chunk 0 of 16 KiB is not wholly inside [0, 12 KiB)";
  a.EnsureWhole(small);
  EXPECT_EQ(src.served - before, large.size) << "b fetched its file once";
  EXPECT_EQ(a.reused_bytes(), large.size - 3 * 4096) << "a reused b's verified bytes";
  EXPECT_EQ(ReadFileToString(a.EnsureWhole(small)), src.files["t.bin"]);
}

// A cached byte altered on disk after it was marked is found at its next use, dropped and
// fetched again.
TEST(ChunkCache, ACachedChunkIsCheckedAtEveryUse) {
  TempDir dir;
  FakeSource src;
  src.files["u.bin"] = Bytes(9000);
  const RemoteFile f = Publish("u.bin", src.files["u.bin"], 4096);
  Progress quiet(true);
  std::string local;
  {
    ChunkCache cache(dir.path(), kRoot, src, quiet);
    local = cache.EnsureWhole(f);
  }
  std::string bytes = ReadFileToString(local);
  bytes[5000] ^= 1;
  {
    FILE* out = std::fopen(local.c_str(), "r+b");
    ASSERT_NE(out, nullptr);
    std::fwrite(bytes.data(), 1, bytes.size(), out);
    std::fclose(out);
  }
  ChunkCache cache(dir.path(), kRoot, src, quiet);
  EXPECT_EQ(ReadFileToString(cache.Ensure(f, 0, 9000)), src.files["u.bin"]);
  EXPECT_EQ(cache.dropped_bytes(), 4096u);
  EXPECT_EQ(cache.fetched_bytes(), 4096u);
}

TEST(DirectorySource, RefusesAFileOfAnotherSizeAndBadUrls) {
  TempDir dir;
  WriteFileAtomic(dir.path() + "/x", "hello");
  auto src = OpenSource("file://" + dir.path());
  EXPECT_EQ(src->Read("x", 1, 3, 5), "ell");
  EXPECT_THROW(src->Read("x", 0, 5, 6), FetchError);
  EXPECT_THROW(src->Read("missing", 0, 1, 1), FetchError);
  EXPECT_THROW(OpenSource("ftp://host/x"), FetchError);
  EXPECT_THROW(OpenSource("file://relative/x"), FetchError);
  EXPECT_TRUE(IsUrl("https://huggingface.co/x") && IsUrl("file:///x") && !IsUrl("/x"));
}

}  // namespace
}  // namespace trail::fetch
