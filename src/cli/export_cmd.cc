#include "cli/export_cmd.h"

#include <CLI/CLI.hpp>

#include <cstdio>

#include "core/thread_pool.h"
#include "infer/export.h"

namespace trail::cli {

void AddExportCommand(CLI::App& app, ExportCommand& c) {
  c.export_ = app.add_subcommand(
      "export",
      "Write a run's checkpoint as a Hugging Face model folder (Llama, Qwen3 or OLMo 2) or a GGUF "
      "file "
      "for llama.cpp; a feature neither represents is refused, never approximated");
  auto* e = c.export_;
  e->add_option("--run", c.run, "The run directory")->required();
  e->add_option("--step", c.step, "The checkpoint's step (default: the newest)");
  e->add_option("--format", c.format, "hf or gguf")
      ->required()
      ->check(CLI::IsMember({"hf", "gguf"}));
  e->add_option("--out", c.out, "The folder (hf) or the .gguf file (gguf)")->required();
  e->add_option("--type", c.type, "GGUF tensor type: f32, or f16 for the matrices")
      ->check(CLI::IsMember({"f32", "f16"}))
      ->capture_default_str();
  e->add_option("--tokenizer", c.tokenizer, "The run's tokenizer.contract.json (default: found)");
  e->add_option("--threads", c.threads, "Kernel threads (default: all CPUs)")
      ->check(CLI::Range(1, 1024));
}

int RunExportCommand(const ExportCommand& c) {
  if (c.threads > 0) SetKernelThreads(static_cast<size_t>(c.threads));
  infer::ExportOptions o;
  o.model = {c.run, c.step, c.tokenizer, {}};
  o.format = c.format == "hf" ? infer::ExportFormat::kHf : infer::ExportFormat::kGguf;
  o.out = c.out, o.gguf_type = c.type;
  const infer::ExportResult r = infer::ExportModel(o);
  std::printf("step %lld as %s (%s), %lld tensors:\n", static_cast<long long>(r.step),
              r.arch.name.c_str(), c.format == "hf" ? r.arch.hf_class.c_str() : c.type.c_str(),
              static_cast<long long>(r.written.tensors));
  for (const std::string& f : r.written.files) std::printf("  %s\n", f.c_str());
  return 0;
}

}  // namespace trail::cli
