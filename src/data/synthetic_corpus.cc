#include "data/synthetic_corpus.h"

#include <filesystem>

#include "core/error.h"
#include "data/permutation.h"
#include "data/shard_writer.h"

namespace trail::data::synthetic {

uint32_t SyntheticToken(int source, int shard, int doc, int j) {
  return 16 + static_cast<uint32_t>(Mix64((uint64_t(source) << 48) ^ (uint64_t(shard) << 32) ^
                                          (uint64_t(doc) << 16) ^ uint64_t(j)) %
                                    (kSyntheticVocab - 16));
}

int SyntheticDocLength(const SyntheticSource& src, int source, int shard, int doc) {
  const uint64_t span = static_cast<uint64_t>(src.max_len - src.min_len + 1);
  return src.min_len + static_cast<int>(Mix64(0xabcdefull ^ (uint64_t(source) << 40) ^
                                              (uint64_t(shard) << 20) ^ uint64_t(doc)) %
                                        span);
}

Manifest MakeCorpus(const std::string& dir, const std::vector<SyntheticSource>& sources,
                    const StreamConfig& stream, uint32_t token_bytes, uint32_t vocab_size) {
  Manifest m;
  m.tokenizer.contract.fill(0x5a);
  m.tokenizer.vocab_size = vocab_size > 0 ? vocab_size : token_bytes == 2 ? 65536 : kSyntheticVocab;
  TRAIL_CHECK(m.tokenizer.vocab_size > 16, "synthetic corpus: vocab_size must exceed 16");
  m.tokenizer.token_bytes = token_bytes;
  m.tokenizer.eos_id = kSyntheticEos;
  m.tokenizer.pad_id = kSyntheticPad;
  m.stream = stream;
  for (size_t s = 0; s < sources.size(); ++s) {
    const SyntheticSource& src = sources[s];
    SourceSpec spec;
    spec.name = src.name;
    spec.target_share = src.share;
    spec.sampling = src.sampling;
    spec.max_epochs = src.max_epochs;
    for (int h = 0; h < src.shards; ++h) {
      const std::string name = src.name + "-" + std::to_string(h) + ".tshard";
      ShardWriterOptions opt;
      opt.token_bytes = token_bytes;
      opt.vocab_size = m.tokenizer.vocab_size;
      opt.contract = m.tokenizer.contract;
      ShardWriter w(dir + "/" + name, opt);
      for (int d = 0; d < src.docs_per_shard; ++d) {
        std::vector<uint32_t> toks(SyntheticDocLength(src, int(s), h, d));
        for (size_t j = 0; j < toks.size(); ++j) {
          toks[j] = SyntheticToken(int(s), h, d, int(j)) % m.tokenizer.vocab_size;
          if (toks[j] < 16) toks[j] += 16;
        }
        w.Add(src.name + "/" + std::to_string(h) + "/" + std::to_string(d), uint32_t(s), toks);
      }
      const ShardSummary sum = w.Finish();
      spec.shards.push_back({name, sum.sha256, sum.num_tokens, sum.num_docs});
    }
    m.sources.push_back(spec);
  }
  SaveManifest(m, dir + "/manifest.json");
  return LoadManifest(dir + "/manifest.json");
}

}  // namespace trail::data::synthetic
