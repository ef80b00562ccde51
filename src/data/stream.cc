#include "data/stream.h"

#include "core/error.h"
#include "data/batch_schedule.h"

namespace trail::data {
namespace {

MixtureSchedule BuildMixture(const Manifest& m,
                             const std::vector<std::unique_ptr<SourceStream>>& sources) {
  MixturePlan plan;
  for (size_t i = 0; i < sources.size(); ++i) {
    plan.shares.push_back(m.sources[i].target_share);
    plan.source_tokens.push_back(sources[i]->total_tokens());
  }
  // Mixture and length phases start at the first window of their step, which the batch
  // schedule fixes.
  const BatchSchedule schedule(m.stream.schedule);
  for (const MixturePhase& p : m.stream.mixture_phases) {
    SharePhase sp{schedule.StepWindows(p.from_step).begin,
                  std::vector<double>(m.sources.size(), 0.0)};
    for (const auto& [name, share] : p.shares) {
      for (size_t i = 0; i < m.sources.size(); ++i) {
        if (m.sources[i].name == name) sp.shares[i] = share;
      }
    }
    plan.later_shares.push_back(std::move(sp));
  }
  plan.lengths.push_back({0, m.stream.seq_len});
  for (const SeqLenPhase& p : m.stream.seq_len_phases) {
    plan.lengths.push_back({schedule.StepWindows(p.from_step).begin, p.seq_len});
  }
  return MixtureSchedule(plan);
}

std::vector<std::unique_ptr<SourceStream>> OpenSources(const Manifest& m,
                                                       const StreamOptions& opt) {
  std::vector<std::unique_ptr<SourceStream>> out;
  for (size_t i = 0; i < m.sources.size(); ++i) {
    out.push_back(std::make_unique<SourceStream>(static_cast<uint32_t>(i), m.sources[i],
                                                 OpenShards(m, m.sources[i].shards, opt), m.stream,
                                                 m.tokenizer));
  }
  return out;
}

}  // namespace

std::vector<std::shared_ptr<const ShardReader>> OpenShards(const Manifest& m,
                                                           const std::vector<ShardRef>& refs,
                                                           const StreamOptions& opt) {
  std::vector<std::shared_ptr<const ShardReader>> out;
  for (const ShardRef& ref : refs) {
    const std::string path = m.ShardPath(ref);
    ShardExpectations ex;
    const bool differs = opt.differing_shards.count(ref.path) > 0;
    if (!differs) ex.sha256 = ref.sha256;
    ex.contract = m.tokenizer.contract;
    ex.token_bytes = m.tokenizer.token_bytes;
    ex.verify_hash = opt.verify_hashes && !differs;
    auto r = std::make_shared<const ShardReader>(path, ex);
    TRAIL_CHECK(r->num_tokens() == ref.tokens && r->num_docs() == ref.documents, path,
                ": the manifest says ", ref.documents, " documents / ", ref.tokens,
                " tokens but the shard holds ", r->num_docs(), " / ", r->num_tokens());
    TRAIL_CHECK(r->header().vocab_size <= m.tokenizer.vocab_size, path, ": vocabulary of ",
                r->header().vocab_size, " exceeds the manifest's ", m.tokenizer.vocab_size);
    out.push_back(std::move(r));
  }
  return out;
}

CanonicalStream::CanonicalStream(Manifest manifest, const StreamOptions& opt)
    : manifest_(std::move(manifest)),
      sources_(OpenSources(manifest_, opt)),
      mixture_(BuildMixture(manifest_, sources_)) {
  const TokenizerSpec& t = manifest_.tokenizer;
  pad_token_ = static_cast<int32_t>(t.pad_id >= 0 ? t.pad_id : t.eos_id >= 0 ? t.eos_id : 0);
}

void CanonicalStream::Window(uint64_t w, RawWindow& out) {
  out.owner = mixture_.Owner(w);
  const int64_t L = out.owner.seq_len;
  out.Reset(L + 1);
  out.index = w;
  sources_[out.owner.source]->Fill(out.owner.token_offset, static_cast<uint64_t>(L + 1), out);
  // Padding: never a target; it continues the last document so no attention row is empty.
  const int32_t last_doc = out.length > 0 ? out.doc[out.length - 1] : 0;
  const int32_t last_pos = out.length > 0 ? out.positions[out.length - 1] : -1;
  for (int64_t i = out.length; i <= L; ++i) {
    out.tokens[i] = pad_token_;
    out.doc[i] = last_doc;
    out.target_ok[i] = 0;
    out.positions[i] = manifest_.stream.positions == PositionMode::kWindow
                           ? static_cast<int32_t>(i)
                           : last_pos + static_cast<int32_t>(i - out.length + 1);
  }
}

}  // namespace trail::data
