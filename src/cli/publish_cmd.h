// `trail publish --run DIR --out DIR --key KEY [--checkpoint-every K]`: a finished run as a
// signed bundle that auditors fetch from anywhere (audit/publish.h); and `trail publish verify
// --bundle DIR|URL`: every byte of a bundle against its signed file list. Exit status
// (cli/exit_codes.h): 0 when the bundle verifies, 1 when a file does not, 2 on a usage error, 3
// on an error, 4 when bytes cannot be fetched, 6 when the publication's signature does not verify
// or its key is not the trainer's (and not trusted).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace trail::cli {

struct PublishCommand {
  CLI::App *publish = nullptr, *verify = nullptr;
  std::string run, out, key, bundle, contract;
  std::string corpus_config;  // --corpus-config: commit to the training documents' band keys
  int64_t checkpoint_every = 0, chunk_bytes = 1 << 20, retries = 4;
  std::vector<std::string> trust_publishers;  // --trust-publisher: fingerprints or .pub files
  std::string trainer_key;                    // --trainer: a fingerprint or a .pub file
  bool quiet = false, json = false;
};
void AddPublishCommand(CLI::App& app, PublishCommand& cmd);
int RunPublishCommand(const PublishCommand& cmd);

}  // namespace trail::cli
