#include "corpus/dedup/exact_phase.h"

#include <charconv>
#include <chrono>
#include <filesystem>

#include "core/error.h"
#include "core/spill.h"
#include "corpus/pipeline/doc_runs.h"

namespace trail::corpus {
namespace {

struct HashOrdinal {  // exact dedup: (content hash, document)
  uint64_t h0, h1;
  uint32_t ord, pad;
  bool operator<(const HashOrdinal& o) const {
    return h0 != o.h0 ? h0 < o.h0 : h1 != o.h1 ? h1 < o.h1 : ord < o.ord;
  }
};

uint64_t HexU64(std::string_view hex) {
  uint64_t v = 0;
  const auto r = std::from_chars(hex.data(), hex.data() + hex.size(), v, 16);
  TRAIL_CHECK(r.ec == std::errc() && r.ptr == hex.data() + hex.size(), "bad content hash ", hex);
  return v;
}

void MergeInto(const std::vector<std::string>& group, const std::string& out,
               const Budget& budget) {
  SpillWriter w(out, budget.write_buffer());
  DocRunMerge merge(group, budget.run_buffer(group.size()));
  std::string bytes;
  for (DocRunMerge::Item it; merge.Next(it);) {
    bytes.clear();
    EncodeDocRecord(it.doc, &bytes);
    w.AppendRecord(bytes);
  }
  w.Close();
}

// Streams the merged runs: ordinals, repeated keys, drop counts, locations.bin, and the kept
// documents' (content hash, ordinal) into the sorter.
void AssignOrdinals(const std::vector<std::string>& runs, size_t run_buffer,
                    const std::vector<std::string>& files, const std::string& work,
                    ExternalSorter<HashOrdinal>& by_hash, ExactDedupResult& out,
                    BuildReport& report) {
  SpillWriter locations(work + "/locations.bin", 1 << 16);
  DocRunMerge merge(runs, run_buffer);
  for (DocRunMerge::Item it; merge.Next(it);) {
    const DocRecord& d = it.doc;
    if (it.repeated) {
      report.quarantined.push_back(
          {files[d.file_index], d.offset, 0, d.raw_bytes, "duplicate_id",
           "key " + d.key + " was already read from " + files[it.first_file], d.raw_sample,
           d.raw_sha256});
      ++report.dropped["read"]["quarantine.duplicate_id"];
      continue;
    }
    TRAIL_CHECK(out.documents < UINT32_MAX, "corpus build: more than 2^32 - 1 documents");
    const Location loc{it.offset, it.run,
                       static_cast<uint32_t>(std::min<uint64_t>(d.text.size(), UINT32_MAX))};
    locations.Append(&loc, sizeof loc);
    const uint32_t ord = static_cast<uint32_t>(out.documents++);
    out.bytes_in += d.raw_bytes;
    if (!d.drop_stage.empty()) ++report.dropped[d.drop_stage][d.drop.text()];
    if (!d.drop.dropped()) {
      const std::string_view h = d.content_hash;
      TRAIL_CHECK(h.size() == 32, "content hash of ", d.key, " is not 128 bits");
      by_hash.Add({HexU64(h.substr(0, 16)), HexU64(h.substr(16)), ord, 0});
    }
  }
  locations.Close();
}

}  // namespace

std::vector<std::string> MergeDocRunGroups(std::vector<std::string> runs, const Budget& budget,
                                           const std::string& work) {
  for (int level = 0; runs.size() > budget.merge_fan_in(); ++level) {
    const size_t fan_in = budget.merge_fan_in();
    std::vector<std::string> merged;
    for (size_t g = 0; g * fan_in < runs.size(); ++g) {
      const std::vector<std::string> group(runs.begin() + g * fan_in,
                                           runs.begin() + std::min(runs.size(), (g + 1) * fan_in));
      merged.push_back(work + "/merge-" + std::to_string(level) + "-" + std::to_string(g) + ".run");
      MergeInto(group, merged.back(), budget);
      if (level > 0) {
        for (const std::string& r : group) std::filesystem::remove(r);
      }
    }
    runs = std::move(merged);
  }
  return runs;
}

ExactDedupResult ExactDedup(const std::vector<std::string>& runs, size_t run_buffer,
                            const std::vector<std::string>& files, const Budget& budget,
                            const std::string& work, BuildReport& report) {
  const auto t = std::chrono::steady_clock::now();
  ExactDedupResult out;
  ExternalSorter<HashOrdinal> by_hash(work, "exact", budget.sort());
  AssignOrdinals(runs, run_buffer, files, work, by_hash, out, report);
  // The smallest ordinal (= key) per content hash survives; the others are listed by ordinal.
  report.spilled_sort_bytes += by_hash.spilled_bytes();
  ExternalSorter<ExactDup> dups(work, "exact-dups", budget.sort());
  HashOrdinal first{};
  bool any = false;
  by_hash.Drain([&](const HashOrdinal& x) {
    if (any && x.h0 == first.h0 && x.h1 == first.h1) {
      dups.Add({x.ord, first.ord});
      out.survivors.insert(first.ord);
    } else {
      first = x;
      any = true;
    }
  });
  SpillWriter exact(work + "/exact.bin", 1 << 16);
  dups.Drain([&](const ExactDup& x) { exact.Append(&x, sizeof x); });
  exact.Close();
  report.spilled_sort_bytes += dups.spilled_bytes();
  report.seconds["exact_dedup"] +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  return out;
}

}  // namespace trail::corpus
