// Token shards from already-tokenized documents: JSONL lines {"key": "...", "tokens": [ids],
// "domain": n} ("domain" optional, 0 by default; no other keys), in file order, one document per
// line. Every error names the file and line; nothing is written unless the whole input is good
// (the shard writer writes atomically).
#pragma once

#include <string>

#include "data/shard_writer.h"

namespace trail::ingest {

data::ShardSummary ImportTokenJsonl(const std::string& input, const std::string& output,
                                    const data::ShardWriterOptions& options);

}  // namespace trail::ingest
