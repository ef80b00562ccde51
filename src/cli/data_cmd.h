// `trail data …`: inspect windows and steps of the canonical stream, report token shares and
// epochs, write shards from token-id JSONL, verify a manifest's shards.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli/data_find_cmd.h"

namespace CLI {
class App;
}

namespace trail::cli {

struct DataOptions {
  std::string manifest;
  // inspect
  int64_t window = -1, step = -1, rank = -1, ranks = 1;
  // stats
  int64_t windows = -1, steps = -1;
  // shard
  std::string input, output, contract;
  uint32_t vocab_size = 0, token_bytes = 2;
  bool json = false;
  std::string decode_contract;  // inspect: decode tokens with this tokenizer contract
  // tokenize
  std::vector<std::string> inputs;
  std::string output_dir, prefix = "shard";
  uint64_t shard_tokens = 100'000'000;
  uint32_t domain = 0;
  int threads = 1;
  int64_t max_shards = -1;
  int64_t task = -1, tasks = 0;  // tokenize in tasks (ingest/tokenize_tasks.h)
  // manifest
  std::vector<std::string> sources;           // NAME=SHARE=SHARDS_JSON
  std::vector<std::string> validation, test;  // DOMAIN=SHARDS_JSON
  std::string batch_schedule;                 // N or FROM:N,FROM:N
  std::string seq_len_phases;                 // FROM:L,FROM:L
  std::vector<std::string> mixture_phases;    // FROM:NAME=SHARE,...
  int64_t micro_batch = 1;
  uint32_t chunk_tokens = 0;
  std::string positions = "document";
  bool prepend_bos = false;
  std::string manifest_out;
  int64_t seq_len = 2048;
  uint64_t seed = 0;
  bool no_verify = false;
  std::string lineage;  // manifest: the corpus build's lineage database
};

// Adds the `data` command and its subcommands; returns a runner for whichever was parsed.
struct DataCommand {
  CLI::App* data = nullptr;
  CLI::App *inspect = nullptr, *stats = nullptr, *shard = nullptr, *verify = nullptr,
           *tokenize = nullptr, *manifest = nullptr;
  DataOptions opt;
  DataFindCommand find;  // index, find
};
void AddDataCommand(CLI::App& app, DataCommand& cmd);
// Runs the parsed subcommand; returns the exit code (0 ok, 1 verification failed).
int RunDataCommand(const DataCommand& cmd);

}  // namespace trail::cli
