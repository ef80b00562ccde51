#include "corpus/pipeline/shard_groups.h"

#include <zstd.h>

#include <filesystem>

#include "core/error.h"
#include "core/file_util.h"
#include "corpus/read/source_reader.h"

namespace trail::corpus {
namespace {

// Compresses `bytes` bytes of `in` from `offset` into one zstd frame at `path` (atomically).
void CompressInto(const PositionalReader& in, uint64_t offset, uint64_t bytes,
                  const std::string& path, ZSTD_CCtx* cctx) {
  ZSTD_CCtx_reset(cctx, ZSTD_reset_session_only);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 3);
  // A fixed 1 MiB window (level 3 would take 2 MiB for large shards): the compressor's memory
  // stays small and the bytes never depend on the memory budget.
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, 20);
  ZSTD_CCtx_setPledgedSrcSize(cctx, bytes);
  AtomicFile out(path);
  std::vector<char> src(1 << 17), dst(ZSTD_CStreamOutSize());
  uint64_t left = bytes;
  for (;;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(src.size(), left));
    if (n > 0) in.ReadAt(offset, src.data(), n);
    offset += n;
    left -= n;
    const ZSTD_EndDirective mode = left == 0 ? ZSTD_e_end : ZSTD_e_continue;
    ZSTD_inBuffer ib{src.data(), n, 0};
    size_t pending;
    do {
      ZSTD_outBuffer ob{dst.data(), dst.size(), 0};
      pending = ZSTD_compressStream2(cctx, &ob, &ib, mode);
      TRAIL_CHECK(!ZSTD_isError(pending), "zstd: ", ZSTD_getErrorName(pending));
      out.Write(dst.data(), ob.pos);
    } while (mode == ZSTD_e_end ? pending != 0 : ib.pos < ib.size);
    if (mode == ZSTD_e_end) break;
  }
  out.Commit();
}

}  // namespace

ShardGroups::ShardGroups(std::string work, uint64_t shard_documents,
                         std::vector<std::string> source_names)
    : work_(std::move(work)),
      shard_documents_(shard_documents),
      sources_(std::move(source_names)) {}

ShardGroups::~ShardGroups() = default;

std::string ShardGroups::GroupPath(int split, uint32_t source) const {
  return work_ + "/group-" + SplitName(static_cast<Split>(split)) + "-" + std::to_string(source) +
         ".jsonl";
}

std::string ShardGroups::ShardName(int split, uint32_t source, uint64_t shard) const {
  return std::string(SplitName(static_cast<Split>(split))) + "/" + sources_[source] + "-" +
         Padded(shard).substr(3) + ".jsonl.zst";
}

ShardPlace ShardGroups::Append(Split split, uint32_t source, const std::string& line) {
  const int s = static_cast<int>(split);
  Group& g = groups_[{s, source}];
  if (!g.file) g.file = std::make_unique<SpillWriter>(GroupPath(s, source), 1 << 16);
  const uint64_t shard = g.count / shard_documents_;
  ShardPlace place{ShardName(s, source, shard), g.count % shard_documents_ + 1};
  ++g.count;
  if (g.shard_bytes.size() <= shard) g.shard_bytes.push_back(0);
  g.shard_bytes[shard] += line.size();
  g.file->Append(line.data(), line.size());
  return place;
}

uint64_t ShardGroups::Compress(const std::string& out_dir, ThreadPool& pool) {
  struct Job {
    const PositionalReader* in;
    uint64_t offset, bytes;
    std::string path;
  };
  std::vector<std::unique_ptr<PositionalReader>> files;
  std::vector<Job> jobs;
  for (auto& [key, group] : groups_) {
    const auto [split, source] = key;
    std::filesystem::create_directories(out_dir + "/" + SplitName(static_cast<Split>(split)));
    group.file->Close();
    files.push_back(std::make_unique<PositionalReader>(GroupPath(split, source)));
    uint64_t offset = 0;
    for (size_t s = 0; s < group.shard_bytes.size(); ++s) {
      jobs.push_back({files.back().get(), offset, group.shard_bytes[s],
                      out_dir + "/" + ShardName(split, source, s)});
      offset += group.shard_bytes[s];
    }
  }
  pool.ParallelFor(jobs.size(), [&](size_t j) {
    // One compression context per thread (a few MiB), freed when the thread ends.
    thread_local std::unique_ptr<ZSTD_CCtx, decltype(&ZSTD_freeCCtx)> cctx(ZSTD_createCCtx(),
                                                                           ZSTD_freeCCtx);
    CompressInto(*jobs[j].in, jobs[j].offset, jobs[j].bytes, jobs[j].path, cctx.get());
  });
  return jobs.size();
}

}  // namespace trail::corpus
