// `trail import --from HF_DIR --out DIR [--max-seq-len N]`: a Hugging Face checkpoint as a model
// trail continues, samples, evaluates and exports (infer/import_hf.h); prints what it read and
// wrote, and the hashes a recipe continuing it names.
#pragma once

#include <cstdint>
#include <string>

namespace CLI {
class App;
}

namespace trail::cli {

struct ImportCommand {
  CLI::App* import = nullptr;
  std::string from, out;
  int64_t max_seq_len = 0;
};
void AddImportCommand(CLI::App& app, ImportCommand& cmd);
int RunImportCommand(const ImportCommand& cmd);

}  // namespace trail::cli
