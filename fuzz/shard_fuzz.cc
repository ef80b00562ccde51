// Token shard reader on arbitrary bytes: the header, document index, keys and token array are
// validated on open (the trailing hash is not checked — an attacker recomputes it anyway), then
// every document and token is read.
#include "data/shard_reader.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trail;
  const std::string path = fuzz::WriteScratch("input.shard", fuzz::AsText(data, size));
  fuzz::Refused([&] {
    data::ShardExpectations expect;
    expect.verify_hash = false;
    const data::ShardReader r(path, expect);
    uint64_t tokens = 0;
    for (uint64_t i = 0; i < r.num_docs(); ++i) {
      const data::DocRecord d = r.doc(i);
      (void)r.doc_key(i);
      tokens += r.doc_length(i);
      (void)d;
    }
    if (tokens != r.num_tokens()) fuzz::Violated("documents do not cover the token array");
    std::vector<int32_t> out(r.num_tokens());
    r.CopyTokens(0, r.num_tokens(), out.data());
  });
  return 0;
}
