#include "corpus/read/source_reader.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "core/error.h"
#include "core/file_util.h"
#include "corpus/read/fortune.h"

namespace trail::corpus {
namespace {
namespace fs = std::filesystem;

// Keys name a file by its path below the deepest directory all of the source's files share,
// so files with the same name in different directories stay apart.
fs::path CommonDirectory(const std::vector<std::string>& paths) {
  fs::path common = fs::path(paths[0]).parent_path();
  for (const std::string& p : paths) {
    const fs::path dir = fs::path(p).parent_path();
    while (!common.empty() &&
           std::mismatch(common.begin(), common.end(), dir.begin(), dir.end()).first !=
               common.end()) {
      common = common.parent_path();
    }
  }
  return common;
}

}  // namespace

std::string Padded(uint64_t i) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "%08llu", static_cast<unsigned long long>(i));
  return buf;
}

void ReadSource(const CorpusConfig& cfg, size_t index, uint32_t first_file, FileRange range,
                const std::function<void(RawDoc&&)>& on_doc, const QuarantineFn& on_bad,
                uint64_t& warc_skipped, const std::function<void(uint64_t)>& on_file_done) {
  const SourceConfig& s = cfg.sources[index];
  const fs::path common = CommonDirectory(s.paths);
  for (size_t f = 0; f < s.paths.size(); ++f) {
    const std::string& path = s.paths[f];
    const uint32_t file_index = first_file + static_cast<uint32_t>(f);
    if (!range.contains(file_index)) continue;
    TRAIL_CHECK(fs::exists(path), s.name, ": input file ", path, " does not exist");
    const std::string base = fs::path(path).lexically_relative(common).string();
    auto keep = [&](RawRecord&& r) {
      on_doc(
          RawDoc{s.name + "/" + r.id, file_index, r.offset, std::move(r.text), s.format == "warc"});
    };
    if (s.format == "jsonl") {
      ReadJsonlRecords(path, cfg.max_record_bytes, keep, on_bad);
    } else if (s.format == "warc") {
      ReadWarcRecords(path, cfg.max_record_bytes, keep, on_bad, &warc_skipped,
                      /*extract_html=*/false);
    } else {
      std::string all = ReadFileToString(path);
      if (s.format == "html") {
        on_doc(RawDoc{s.name + "/" + base, file_index, 0, std::move(all), /*html=*/true});
      } else if (s.format == "text") {
        on_doc(RawDoc{s.name + "/" + base, file_index, 0, std::move(all)});
      } else {
        for (const FortuneRecord& r : FortuneRecords(all)) {
          on_doc(RawDoc{s.name + "/" + base + ":" + Padded(r.index), file_index, r.offset,
                        std::string(r.text)});
        }
      }
    }
    on_file_done(fs::file_size(path));
  }
}

}  // namespace trail::corpus
