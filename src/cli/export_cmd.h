// `trail export --run DIR [--step N] --format hf|gguf --out PATH [--type f32|f16] [--threads N]`: a
// run's checkpoint as a Hugging Face folder or a GGUF file (infer/export.h); prints what it wrote.
#pragma once

#include <cstdint>
#include <string>

namespace CLI {
class App;
}

namespace trail::cli {

struct ExportCommand {
  CLI::App* export_ = nullptr;
  std::string run, format, out, type = "f32", tokenizer;
  int64_t step = -1;
  int threads = 0;  // kernel threads (0: all CPUs)
};
void AddExportCommand(CLI::App& app, ExportCommand& cmd);
int RunExportCommand(const ExportCommand& cmd);

}  // namespace trail::cli
