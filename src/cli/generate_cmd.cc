#include "cli/generate_cmd.h"

#include <CLI/CLI.hpp>

#include <bit>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/device_option.h"
#include "core/file_util.h"
#include "core/thread_pool.h"
#include "infer/generate.h"
#include "repops/kernels.h"

namespace trail::cli {

void AddGenerateCommand(CLI::App& app, GenerateCommand& c) {
  c.generate = app.add_subcommand(
      "generate",
      "Sample a continuation of a prompt from a run's checkpoint; the same options give the "
      "same tokens and log-probability bits on every machine");
  auto* g = c.generate;
  g->add_option("--run", c.run, "The run directory")->required();
  g->add_option("--step", c.step, "The checkpoint's step (default: the newest)");
  auto* prompt = g->add_option("--prompt", c.prompt, "The prompt text");
  auto* file = g->add_option("--prompt-file", c.prompt_file, "A file whose bytes are the prompt");
  prompt->excludes(file);
  g->add_option("--max-tokens", c.max_tokens, "New tokens at most")->capture_default_str();
  g->add_option("--temperature", c.temperature, "Sampling temperature; 0 is greedy")
      ->capture_default_str();
  g->add_option("--top-k", c.top_k, "Keep the k likeliest tokens (0: all)")->capture_default_str();
  g->add_option("--top-p", c.top_p, "Keep the smallest set of likeliest tokens of this mass")
      ->capture_default_str();
  g->add_option("--seed", c.seed, "Seed of the draws (keyed with each token's position)")
      ->capture_default_str();
  g->add_option("--stop", c.stop, "End where the text contains this string (repeat)");
  g->add_option("--tokenizer", c.tokenizer,
                "The run's tokenizer.contract.json (default: found beside the data manifest or "
                "in the run directory by the hash the manifest records)");
  g->add_option("--threads", c.threads, "Kernel threads (default: all CPUs)");
  g->add_flag("--json", c.json,
              "Print one JSON object: ids, text (bytes that are not UTF-8 as U+FFFD), "
              "log-probability bits");
  AddDeviceOption(g, c.device);
}

namespace {

std::string Bits(float x) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08x", std::bit_cast<uint32_t>(x));
  return buf;
}

nlohmann::json ToJson(const GenerateCommand& c, const infer::GenerateRun& r) {
  const infer::Generation& g = r.generation;
  nlohmann::json lp = nlohmann::json::array(), bits = nlohmann::json::array();
  for (float x : g.logprobs) lp.push_back(x), bits.push_back(Bits(x));
  return {{"run", c.run},
          {"step", r.step},
          {"checkpoint", r.checkpoint_dir},
          {"prompt_ids", r.prompt},
          {"ids", g.ids},
          {"text", g.text},
          {"finish", g.finish},
          {"logprobs", lp},
          {"logprob_bits", bits},
          {"sampling",
           {{"temperature", c.temperature},
            {"top_k", c.top_k},
            {"top_p", c.top_p},
            {"seed", c.seed},
            {"max_tokens", c.max_tokens},
            {"stop", c.stop}}},
          {"backend", r.backend},
          {"prefill_seconds", g.prefill_seconds},
          {"decode_seconds", g.decode_seconds},
          {"kv_cache_bytes", r.cache_bytes}};
}

}  // namespace

int RunGenerateCommand(const GenerateCommand& c) {
  TRAIL_CHECK(!c.prompt.empty() || !c.prompt_file.empty(),
              "give the prompt: --prompt TEXT or --prompt-file FILE");
  if (c.threads > 0) SetKernelThreads(static_cast<size_t>(c.threads));
  repops::UseDefaultSimdTarget();
  const std::string prompt = c.prompt_file.empty() ? c.prompt : ReadFileToString(c.prompt_file);
  infer::GenerateOptions o;
  o.max_tokens = c.max_tokens;
  o.sampling = {c.temperature, c.top_k, c.top_p, c.seed};
  o.stop = c.stop;
  const infer::TrainedModelOptions m{c.run, c.step, c.tokenizer, repops::ParseDevice(c.device)};
  auto stream = [&](std::string_view s) {
    if (c.json) return;
    std::fwrite(s.data(), 1, s.size(), stdout);
    std::fflush(stdout);
  };
  const infer::GenerateRun r = infer::GenerateFromRun(m, prompt, o, stream);
  const infer::Generation& g = r.generation;
  if (c.json) {
    // The text is the decoded bytes; a sequence that is not UTF-8 (a multi-byte character cut by
    // the token limit, or bytes a model put out of order) is written as U+FFFD. ids are exact.
    const std::string json =
        ToJson(c, r).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    std::printf("%s\n", json.c_str());
    return 0;
  }
  const double tps = g.decode_seconds > 0 ? (g.ids.size() - 1) / g.decode_seconds : 0;
  std::printf("\n");
  std::fflush(stdout);
  std::fprintf(stderr,
               "[%zu tokens, finish: %s; step %lld; prompt %zu tokens in %.3f s, %.1f tokens/s]\n",
               g.ids.size(), g.finish.c_str(), static_cast<long long>(r.step), r.prompt.size(),
               g.prefill_seconds, tps);
  return 0;
}

}  // namespace trail::cli
