#include "cli/import_cmd.h"

#include <CLI/CLI.hpp>

#include <cstdio>

#include "infer/import_hf.h"

namespace trail::cli {

void AddImportCommand(CLI::App& app, ImportCommand& c) {
  c.import = app.add_subcommand(
      "import",
      "Read a Hugging Face checkpoint (Llama, Qwen3, OLMo 2: config.json, safetensors in "
      "F32/BF16/F16, "
      "tokenizer.json) as a model to continue pretraining with `trail train --init-from`; what "
      "trail cannot represent is refused by name");
  auto* i = c.import;
  i->add_option("--from", c.from, "The Hugging Face checkpoint folder")->required();
  i->add_option("--out", c.out, "The folder to write the imported model to")->required();
  i->add_option("--max-seq-len", c.max_seq_len,
                "Positions the RoPE table covers (default: config.json's "
                "max_position_embeddings)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 24));
}

int RunImportCommand(const ImportCommand& c) {
  const infer::ImportResult r = infer::ImportHf({c.from, c.out, c.max_seq_len});
  std::printf("%s (%s), %lld parameters in %lld tensors, from:\n", r.model.architecture.c_str(),
              r.model.dtype.empty() ? "dtype not stated" : r.model.dtype.c_str(),
              static_cast<long long>(r.parameters), static_cast<long long>(r.tensors));
  for (const std::string& f : r.source_files) std::printf("  %s\n", f.c_str());
  for (const std::string& n : r.ignored) std::printf("ignored: %s\n", n.c_str());
  for (const std::string& n : r.model.notes) std::printf("note: %s\n", n.c_str());
  std::printf(
      "import_sha256 %s\nparams_sha256 %s\nwrote %s/{import.json, model.safetensors, "
      "tokenizer.json, tokenizer.contract.json, recipe.toml}\n",
      r.import_sha256.c_str(), r.params_sha256.c_str(), c.out.c_str());
  return 0;
}

}  // namespace trail::cli
