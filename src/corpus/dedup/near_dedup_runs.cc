#include "corpus/dedup/near_dedup_runs.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <queue>
#include <unordered_map>

#include "core/error.h"
#include "corpus/pipeline/doc_runs.h"
#include "corpus/pipeline/progress.h"
#include "corpus/dedup/shingles.h"
#include "core/spill.h"

namespace trail::corpus {
namespace {

struct BandEntry {  // near dedup: one LSH band of one document
  uint64_t hash;
  uint32_t band, ord;
  bool operator<(const BandEntry& o) const {
    return band != o.band ? band < o.band : hash != o.hash ? hash < o.hash : ord < o.ord;
  }
};

// Union-find over the documents of verified pairs only (everything else is its own cluster);
// a root is always its set's smallest ordinal, i.e. its smallest key.
class SparseUnionFind {
 public:
  uint32_t Find(uint32_t x) {
    for (;;) {
      const auto it = parent_.find(x);
      if (it == parent_.end() || it->second == x) return x;
      const auto up = parent_.find(it->second);
      if (up != parent_.end()) it->second = up->second;  // path halving
      x = it->second;
    }
  }
  void Unite(uint32_t a, uint32_t b) {
    uint32_t ra = Find(a), rb = Find(b);
    if (ra == rb) return;
    if (rb < ra) std::swap(ra, rb);
    parent_[rb] = ra;
    parent_.emplace(ra, ra);
  }
  std::vector<uint32_t> Members() const {
    std::vector<uint32_t> m;
    for (const auto& [x, p] : parent_) m.push_back(x);
    std::sort(m.begin(), m.end());
    return m;
  }

 private:
  std::unordered_map<uint32_t, uint32_t> parent_;
};

// Pass 2: documents sharing a band bucket are candidate pairs (i < j) into the pair sorter.
void AddCandidatePairs(ExternalSorter<BandEntry>& bands, ExternalSorter<uint64_t>& pairs) {
  std::vector<uint32_t> bucket;
  BandEntry head{};
  auto close_bucket = [&] {
    for (size_t x = 0; x < bucket.size(); ++x) {
      for (size_t y = x + 1; y < bucket.size(); ++y)
        pairs.Add(uint64_t{bucket[x]} << 32 | bucket[y]);
    }
    bucket.clear();
  };
  bands.Drain([&](const BandEntry& e) {
    if (!bucket.empty() && (e.band != head.band || e.hash != head.hash)) close_bucket();
    head = e;
    bucket.push_back(e.ord);
  });
  close_bucket();
}

// Pass 3: every distinct candidate verified by exact Jaccard over the shingle sets, in batches
// whose texts fit verify_budget; each candidate and its verdict to the pairs file, in order.
class CandidateVerifier {
 public:
  CandidateVerifier(const NearDedupRunsInput& in, ThreadPool& pool, SpillWriter& out,
                    PartitionCounts& res)
      : in_(in), pool_(pool), out_(out), res_(res), loc_file_(in.locations) {
    for (const std::string& r : in.runs)
      run_files_.push_back(std::make_unique<PositionalReader>(r));
  }

  void Add(uint64_t pair) {
    ++res_.candidates;
    Member(static_cast<uint32_t>(pair >> 32));
    Member(static_cast<uint32_t>(pair));
    cand_.push_back(pair);
    if (cand_bytes_ >= in_.verify_budget || cand_.size() >= (1u << 20)) Verify();
  }

  void Verify() {
    std::vector<std::vector<uint64_t>> sets(members_.size());
    pool_.ParallelFor(members_.size(), [&](size_t i) {
      const Location loc = LocationOf(members_[i]);
      const DocRecord d = DecodeDocRecord(run_files_[loc.run]->ReadRecordAt(loc.offset));
      sets[i] = Shingles(d.text, in_.ngram);
    });
    std::vector<uint8_t> ok(cand_.size());
    pool_.ParallelFor(cand_.size(), [&](size_t c) {
      const auto& a = sets[slot_.at(static_cast<uint32_t>(cand_[c] >> 32))];
      const auto& b = sets[slot_.at(static_cast<uint32_t>(cand_[c]))];
      ok[c] = ExactJaccard(a, b) >= in_.threshold;
    });
    for (size_t c = 0; c < cand_.size(); ++c) {
      res_.verified += ok[c];
      const CandidatePair p{cand_[c], ok[c]};
      out_.Append(&p, sizeof p);
    }
    cand_.clear();
    slot_.clear();
    members_.clear();
    cand_bytes_ = 0;
  }

 private:
  Location LocationOf(uint32_t ord) const {
    Location loc;
    loc_file_.ReadAt(uint64_t{ord} * sizeof(Location), &loc, sizeof loc);
    return loc;
  }
  void Member(uint32_t ord) {
    if (slot_.emplace(ord, members_.size()).second) {
      members_.push_back(ord);
      cand_bytes_ += LocationOf(ord).text_bytes;
    }
  }

  const NearDedupRunsInput& in_;
  ThreadPool& pool_;
  SpillWriter& out_;
  PartitionCounts& res_;
  const PositionalReader loc_file_;
  std::vector<std::unique_ptr<PositionalReader>> run_files_;
  std::vector<uint64_t> cand_;
  std::unordered_map<uint32_t, size_t> slot_;
  std::vector<uint32_t> members_;
  uint64_t cand_bytes_ = 0;
};

}  // namespace

void WriteBandPartitions(const NearDedupRunsInput& in, const std::vector<std::string>& partitions) {
  std::vector<std::unique_ptr<SpillWriter>> out;
  for (const std::string& p : partitions) out.push_back(std::make_unique<SpillWriter>(p, 1 << 16));
  StageProgress progress("near_dedup", in.documents, in.bytes_in, in.progress);
  SpillReader exact(in.exact_dups, 1 << 16);
  ExactDup next_dup{UINT32_MAX, 0};
  if (!exact.Read(&next_dup, sizeof next_dup)) next_dup.ord = UINT32_MAX;
  DocRunMerge merge(in.runs, in.run_buffer);
  uint32_t ord = 0;
  for (DocRunMerge::Item it; merge.Next(it);) {
    if (it.repeated) continue;
    const bool dup = next_dup.ord == ord;
    if (dup && !exact.Read(&next_dup, sizeof next_dup)) next_dup.ord = UINT32_MAX;
    if (!it.doc.drop.dropped() && !dup) {
      TRAIL_CHECK(it.doc.bands.empty() || it.doc.bands.size() == static_cast<size_t>(in.bands),
                  "document run: ", it.doc.key, " has ", it.doc.bands.size(), " band hashes, not ",
                  in.bands);
      for (size_t b = 0; b < it.doc.bands.size(); ++b) {
        const BandEntry e{it.doc.bands[b], static_cast<uint32_t>(b), ord};
        out[e.hash % out.size()]->Append(&e, sizeof e);
      }
    }
    ++ord;
    progress.Tick();
  }
  for (auto& w : out) w->Close();
  progress.Finish();
}

PartitionCounts NearDedupPartition(const NearDedupRunsInput& in, const std::string& band_file,
                                   const std::string& pairs_file, ThreadPool& pool) {
  PartitionCounts res;
  ExternalSorter<BandEntry> bands(in.work, "bands", in.sort_budget);
  {
    SpillReader r(band_file, 1 << 16);
    for (BandEntry e; r.Read(&e, sizeof e);) bands.Add(e);
  }
  ExternalSorter<uint64_t> pairs(in.work, "pairs", in.sort_budget);
  AddCandidatePairs(bands, pairs);
  res.spilled_bytes += bands.spilled_bytes();
  SpillWriter out(pairs_file, 1 << 16);
  CandidateVerifier verifier(in, pool, out, res);
  uint64_t last = UINT64_MAX;
  pairs.Drain([&](uint64_t p) {
    if (p != last) verifier.Add(p);
    last = p;
  });
  verifier.Verify();
  out.Close(/*sync=*/true);
  res.spilled_bytes += pairs.spilled_bytes();
  return res;
}

NearDedupRunsResult ClustersFromPairs(const std::vector<std::string>& pair_files) {
  struct Head {
    CandidatePair p;
    size_t file;
    bool operator>(const Head& o) const { return p.pair > o.p.pair; }
  };
  std::vector<std::unique_ptr<SpillReader>> readers;
  std::priority_queue<Head, std::vector<Head>, std::greater<Head>> heap;
  for (size_t f = 0; f < pair_files.size(); ++f) {
    readers.push_back(std::make_unique<SpillReader>(pair_files[f], 1 << 16));
    CandidatePair p;
    if (readers[f]->Read(&p, sizeof p)) heap.push({p, f});
  }
  SparseUnionFind clusters;
  NearDedupRunsResult res;
  CandidatePair last{UINT64_MAX, 0};
  while (!heap.empty()) {
    const Head h = heap.top();
    heap.pop();
    if (h.p.pair == last.pair) {
      TRAIL_CHECK(h.p.verified == last.verified, pair_files[h.file],
                  ": a candidate pair's verdict differs from another partition's");
    } else {
      TRAIL_CHECK(h.p.verified <= 1, pair_files[h.file], ": not a pairs file");
      ++res.candidates;
      if (h.p.verified) {
        ++res.verified;
        clusters.Unite(static_cast<uint32_t>(h.p.pair >> 32), static_cast<uint32_t>(h.p.pair));
      }
      last = h.p;
    }
    CandidatePair p;
    if (readers[h.file]->Read(&p, sizeof p)) heap.push({p, h.file});
  }
  for (uint32_t x : clusters.Members()) res.root_of[x] = clusters.Find(x);
  return res;
}

NearDedupRunsResult NearDedupRuns(const NearDedupRunsInput& in, ThreadPool& pool) {
  const std::string bands = in.work + "/bands-0.bin", pairs = in.work + "/pairs-0.bin";
  WriteBandPartitions(in, {bands});
  const PartitionCounts counts = NearDedupPartition(in, bands, pairs, pool);
  std::remove(bands.c_str());
  NearDedupRunsResult res = ClustersFromPairs({pairs});
  std::remove(pairs.c_str());
  res.spilled_bytes = counts.spilled_bytes;
  return res;
}

}  // namespace trail::corpus
