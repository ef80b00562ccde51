#include "cli/data_cmd.h"

#include <CLI/CLI.hpp>

#include "cli/checks.h"

#include <cstdio>
#include <iostream>

#include "core/error.h"
#include "core/hash.h"
#include "data/inspect.h"
#include "data/packing.h"
#include "data/shard_writer.h"
#include "data/stream.h"
#include "ingest/manifest_builder.h"
#include "ingest/token_import.h"
#include "ingest/tokenize_job.h"
#include "ingest/tokenize_tasks.h"
#include "tokenizer/contract.h"

namespace trail::cli {
namespace {

using data::CanonicalStream;
using data::Json;
using data::kUnlimited;

template <class... Args>
std::string Fmt(const char* f, Args... args) {
  char buf[512];
  std::snprintf(buf, sizeof(buf), f, args...);
  return buf;
}

using ull = unsigned long long;

void PrintWindowDocuments(const data::WindowInspection& r) {
  std::printf("documents:\n  %-3s %-20s %-8s %-24s %-5s %-18s %-6s %s\n", "id", "shard", "doc",
              "key", "chunk", "doc tokens", "pass", "window");
  size_t i = 0;
  for (const data::WindowDocument& d : r.documents) {
    const uint64_t off = d.doc_offset, n = d.tokens, at = d.window_offset;
    const bool eos = d.ends_with_eos, bos = d.starts_with_bos;
    const std::string range =
        Fmt("%s[%llu, %llu)%s", bos ? "BOS+" : "", (ull)off,
            (ull)(off + n - (eos ? 1 : 0) - (bos ? 1 : 0)), eos ? "+EOS" : "");
    std::printf("  %-3zu %-20s %-8llu %-24s %-5u %-18s %-6llu [%llu, %llu)\n", i++, d.shard.c_str(),
                (ull)d.doc, d.key.c_str(), d.chunk, range.c_str(), (ull)d.pass, (ull)at,
                (ull)(at + n));
    if (d.text) std::printf("      \"%s\"\n", d.text->c_str());
  }
}

void PrintWindowTokens(const data::WindowInspection& r, bool decoded) {
  std::printf("tokens:\n  %5s %10s %4s %7s %10s %4s %5s  %s\n", "i", "token", "doc", "pos", "label",
              "loss", "key", decoded ? "piece" : "");
  long long i = 0;
  for (const data::WindowToken& t : r.tokens) {
    const bool has = t.has_label;
    const std::string label = !has                            ? "-"
                              : t.label == data::kIgnoreLabel ? "ignore"
                                                              : std::to_string(t.label);
    const std::string piece = decoded && t.real ? "'" + t.piece.value_or("") + "'" : "";
    std::printf("  %5lld %10d %4d %7d %10s %4s %5s  %s%s\n", i++, t.token, t.doc, t.position,
                label.c_str(), !has ? "-" : (t.loss ? "1" : "0"),
                !has ? "-" : (t.key_valid ? "1" : "0"), piece.c_str(), t.real ? "" : "(padding)");
  }
}

void PrintWindow(const data::WindowInspection& r, bool decoded) {
  std::printf(
      "window %llu: source '%s' (its window %llu, from its token %llu), %lld real tokens "
      "of %lld, %lld targets\n",
      (ull)r.window, r.source.c_str(), (ull)r.source_window, (ull)r.source_offset,
      (long long)r.real_tokens, (long long)r.seq_len + 1, (long long)r.targets);
  if (r.step) {
    std::printf("consumed by step %lld", (long long)*r.step);
    if (r.mixture_phase_from_step) {
      std::printf(", in the mixture phase from step %lld", (long long)*r.mixture_phase_from_step);
    }
    if (r.seq_len_phase_from_step) {
      std::printf(", in the length phase from step %lld", (long long)*r.seq_len_phase_from_step);
    }
    std::printf("\n");
  }
  PrintWindowDocuments(r);
  PrintWindowTokens(r, decoded);
}

// A micro-batch's windows as JSON prints them: [3,4,null].
std::string WindowList(const data::MicroBatchInspection& mb) {
  std::string out = "[";
  for (size_t i = 0; i < mb.windows.size(); ++i) {
    out += (i ? "," : "") + (mb.windows[i] ? std::to_string(*mb.windows[i]) : "null");
  }
  return out + "]";
}

void PrintStep(const data::StepInspection& r, int64_t micro_batch_windows, bool one_rank) {
  std::printf(
      "step %lld: windows [%llu, %llu) of L = %lld, %lld logical ranks, micro-batches of "
      "%lld windows; %llu tokens consumed before it (the LR clock)\n",
      (long long)r.step, (ull)r.first_window, (ull)r.end_window, (long long)r.seq_len,
      (long long)r.logical_ranks, (long long)micro_batch_windows, (ull)r.tokens_before);
  for (const data::RankInspection& rk : r.ranks) {
    for (size_t m = 0; m < rk.micro_batches.size(); ++m) {
      const data::MicroBatchInspection& mb = rk.micro_batches[m];
      std::printf("  rank %lld micro %zu: windows %s  B_input %lld  B_target %lld\n",
                  (long long)rk.rank, m, WindowList(mb).c_str(), (long long)mb.input_tokens,
                  (long long)mb.target_tokens);
    }
  }
  std::printf("  %s: B_input %lld, B_target %lld (the loss normalizer)\n",
              one_rank ? "this rank" : "step", (long long)r.input_tokens,
              (long long)r.target_tokens);
}

void PrintPhases(const data::SourceShareReport& r) {
  if (!r.seq_len_phases.empty()) std::printf("sequence-length phases:\n");
  for (const data::LengthPhaseTokens& p : r.seq_len_phases) {
    std::printf("  from step %lld (window %llu): L = %lld, %llu windows, %llu tokens\n",
                (long long)p.from_step, (ull)p.start_window, (long long)p.seq_len, (ull)p.windows,
                (ull)p.tokens);
  }
  if (r.mixture_phases.empty()) return;
  std::printf("mixture phases (target / measured token share of each phase's stretch):\n");
  for (const data::MixturePhaseShares& p : r.mixture_phases) {
    std::printf("  from step %lld (window %llu, %llu windows):", (long long)p.from_step,
                (ull)p.start_window, (ull)p.windows);
    for (size_t k = 0; k < p.target_share.size(); ++k) {
      std::printf("  %s %.4f/%.4f", p.target_share[k].first.c_str(), p.target_share[k].second,
                  p.measured_share[k].second);
    }
    std::printf("\n");
  }
}

void PrintShares(const data::SourceShareReport& r) {
  const bool endless = r.stream_windows == kUnlimited;
  std::printf("first %llu windows (L=%lld from step 0): %llu tokens; stream length: %s\n",
              (ull)r.windows, (long long)r.seq_len, (ull)r.tokens,
              endless ? "unlimited" : (std::to_string(r.stream_windows) + " windows").c_str());
  std::printf("  %-16s %-12s %8s %9s %9s %12s %14s %9s\n", "source", "sampling", "target",
              "scheduled", "measured", "windows", "tokens", "epochs");
  for (const data::SourceShare& s : r.sources) {
    std::printf("  %-16s %-12s %8.5f %9.5f %9.5f %12llu %14llu %9.3f%s\n", s.source.c_str(),
                s.sampling == data::Sampling::kPermutation ? "permutation" : "replacement",
                s.target_share, s.scheduled_share, s.measured_share, (ull)s.windows, (ull)s.tokens,
                s.epochs, s.ended ? "  (ended)" : "");
  }
  PrintPhases(r);
}

// A report as JSON (--json) or through its table printer.
template <class Report, class Print>
void Emit(const Report& report, bool json, Print&& print) {
  if (json) {
    std::cout << data::ToJson(report).dump(2) << "\n";
  } else {
    print(report);
  }
}

int RunShard(const DataOptions& o) {
  data::ShardWriterOptions w;
  w.token_bytes = o.token_bytes;
  w.vocab_size = o.vocab_size;
  w.contract = data::ParseContractHash(o.contract, "--contract");
  const data::ShardSummary s = ingest::ImportTokenJsonl(o.input, o.output, w);
  // The line a manifest's "shards" list takes.
  std::cout << Json{{"path", o.output},
                    {"sha256", s.sha256},
                    {"tokens", s.num_tokens},
                    {"documents", s.num_docs}}
                   .dump()
            << "\n";
  return 0;
}

void PrintTokenizeProgress(const ingest::TokenizeProgress& p) {
  std::fprintf(stderr, "tokenize: %llu documents, %.1f MB, %llu tokens, %.1f MB/s\n",
               (unsigned long long)p.documents, p.bytes / 1e6, (unsigned long long)p.tokens,
               p.bytes / 1e6 / p.seconds);
}

// One encode task of a tokenize job in tasks.
int RunTokenizeTask(const DataOptions& o, const ingest::TokenizeOptions& t) {
  TRAIL_CHECK(o.task < o.tasks, "--task ", o.task, " is not a task of --tasks ", o.tasks,
              ": tasks are numbered 0 to ", o.tasks - 1);
  const ingest::TokenizeTaskSummary s =
      ingest::RunTokenizeTask(t, static_cast<uint32_t>(o.task), static_cast<uint32_t>(o.tasks));
  std::fprintf(stderr,
               "tokenize: encode task %lld of %lld %s: inputs %u..%u (%.1f MB), %llu "
               "documents, %llu tokens -> %s\n",
               (long long)o.task, (long long)o.tasks,
               s.already_complete ? "was already complete" : "done", s.first_file, s.end_file,
               s.bytes / 1e6, (unsigned long long)s.documents, (unsigned long long)s.tokens,
               s.dir.c_str());
  return 0;
}

int RunTokenize(const DataOptions& o) {
  ingest::TokenizeOptions t;
  t.contract = o.contract;
  t.inputs = o.inputs;
  t.output_dir = o.output_dir;
  t.prefix = o.prefix;
  t.shard_tokens = o.shard_tokens;
  t.domain = o.domain;
  t.threads = o.threads;
  t.max_shards = o.max_shards;
  TRAIL_CHECK(o.task < 0 || o.tasks > 0, "--task belongs to a job in tasks: give --tasks N too");
  if (o.task >= 0) return RunTokenizeTask(o, t);
  const ingest::TokenizeResult r =
      o.tasks > 0 ? ingest::RunTokenizeFromTasks(t, static_cast<uint32_t>(o.tasks))
                  : ingest::RunTokenize(t, PrintTokenizeProgress);
  ingest::WriteShardList(r, o.output_dir + "/" + o.prefix + ".shards.json");
  std::fprintf(stderr,
               "tokenize: %s: %zu shards (%d verified from an earlier run), %llu documents "
               "(%llu empty, skipped), %llu tokens, %.2f bytes/token\n",
               r.complete ? "complete" : "stopped", r.shards.size(), r.resumed_shards,
               (unsigned long long)r.documents, (unsigned long long)r.empty_documents,
               (unsigned long long)r.tokens, r.tokens ? double(r.bytes) / r.tokens : 0.0);
  return 0;
}

int RunManifest(const DataOptions& o) {
  ingest::ManifestSpec spec;
  spec.contract = o.contract;
  spec.sources = o.sources;
  spec.validation = o.validation;
  spec.test = o.test;
  spec.seq_len = o.seq_len;
  spec.seed = o.seed;
  spec.batch_schedule = o.batch_schedule;
  spec.seq_len_phases = o.seq_len_phases;
  spec.mixture_phases = o.mixture_phases;
  spec.micro_batch = o.micro_batch;
  spec.chunk_tokens = o.chunk_tokens;
  spec.positions = o.positions;
  spec.prepend_bos = o.prepend_bos;
  spec.lineage = o.lineage;
  spec.output = o.manifest_out;
  const ingest::BuiltManifest m = ingest::BuildManifest(spec);
  std::printf("%s: %zu sources, stream of %s windows\n", o.manifest_out.c_str(), m.sources,
              m.windows == kUnlimited ? "unlimited" : std::to_string(m.windows).c_str());
  return 0;
}

int RunVerify(const DataOptions& o) {
  int bad = 0, ok = 0;
  for (const data::ShardCheck& c : data::VerifyManifestShards(data::LoadManifest(o.manifest))) {
    if (c.error.empty()) {
      ++ok;
    } else {
      ++bad;
      std::printf("FAIL %s: %s\n", c.what.c_str(), c.error.c_str());
    }
  }
  std::printf("%d shards verified, %d failed\n", ok, bad);
  return bad == 0 ? 0 : 1;
}

// The tokenizer behind --contract, checked to be the manifest's, as a decoder.
data::Decoder ManifestDecoder(const std::string& contract, const data::Manifest& m,
                              std::unique_ptr<tok::Tokenizer>& holder) {
  if (contract.empty()) return {};
  tok::LoadedContract lc = tok::LoadContract(contract);
  TRAIL_CHECK(std::equal(lc.hash.begin(), lc.hash.end(), m.tokenizer.contract.begin()), contract,
              ": this contract's hash ", ToHex(lc.hash),
              " is not the manifest's tokenizer contract");
  holder = std::move(lc.tokenizer);
  const tok::Tokenizer* t = holder.get();
  return [t](const std::vector<uint32_t>& ids) { return t->Decode(ids); };
}

int RunInspect(CanonicalStream& stream, const DataOptions& o) {
  if (o.window >= 0) {
    std::unique_ptr<tok::Tokenizer> tokenizer;
    const data::Decoder decode = ManifestDecoder(o.decode_contract, stream.manifest(), tokenizer);
    Emit(data::InspectWindow(stream, static_cast<uint64_t>(o.window), decode), o.json,
         [&](const data::WindowInspection& r) { PrintWindow(r, static_cast<bool>(decode)); });
    return 0;
  }
  TRAIL_CHECK(o.step >= 0, "data inspect needs --window or --step");
  TRAIL_CHECK(o.rank < o.ranks, "--rank ", o.rank, " is not below --ranks ", o.ranks);
  Emit(data::InspectStep(stream, o.step, o.ranks, o.rank), o.json,
       [&](const data::StepInspection& r) {
         PrintStep(r, stream.manifest().stream.micro_batch_windows, o.rank >= 0);
       });
  return 0;
}

int RunStats(CanonicalStream& stream, const DataOptions& o) {
  TRAIL_CHECK(o.windows >= 0 || o.steps >= 0, "data stats needs --windows or --steps");
  const uint64_t windows = o.steps >= 0 ? data::WindowsBeforeStep(stream.manifest(), o.steps)
                                        : static_cast<uint64_t>(o.windows);
  Emit(data::SourceShares(stream, windows), o.json, PrintShares);
  return 0;
}

void AddInspectCommand(DataCommand& cmd) {
  DataOptions& o = cmd.opt;
  cmd.inspect = cmd.data->add_subcommand(
      "inspect",
      "Show one window (tokens, documents, positions, labels, masks, provenance) or "
      "the windows and token counts of one step");
  cmd.inspect->add_option("--manifest", o.manifest, "Data manifest (JSON)")->required();
  auto* win =
      cmd.inspect->add_option("--window", o.window, "Global window index")->check(kNonNegative);
  auto* step = cmd.inspect->add_option("--step", o.step, "Training step")->check(kNonNegative);
  win->excludes(step);
  cmd.inspect->add_option("--ranks", o.ranks, "Logical data-parallel ranks (with --step)")
      ->check(CLI::Range(1, 1 << 20));
  cmd.inspect->add_option("--rank", o.rank, "Show only this logical rank (with --step)")
      ->check(kNonNegative);
  cmd.inspect->add_flag("--json", o.json, "Print JSON");
  cmd.inspect->add_option("--contract", o.decode_contract,
                          "Tokenizer contract: show the text of the tokens and documents");
  cmd.inspect->add_flag("--no-verify", o.no_verify, "Skip rehashing the shards on open");
}

void AddStatsCommand(DataCommand& cmd) {
  DataOptions& o = cmd.opt;
  cmd.stats = cmd.data->add_subcommand(
      "stats", "Target vs measured token shares, epochs per source and tokens seen");
  cmd.stats->add_option("--manifest", o.manifest, "Data manifest (JSON)")->required();
  auto* nw = cmd.stats->add_option("--windows", o.windows, "Over the first N windows")
                 ->check(kNonNegative);
  auto* ns =
      cmd.stats->add_option("--steps", o.steps, "Over the first N steps")->check(kNonNegative);
  nw->excludes(ns);
  cmd.stats->add_flag("--json", o.json, "Print JSON");
  cmd.stats->add_flag("--no-verify", o.no_verify, "Skip rehashing the shards on open");
}

void AddShardCommand(DataCommand& cmd) {
  DataOptions& o = cmd.opt;
  cmd.shard = cmd.data->add_subcommand(
      "shard",
      "Write a token shard from JSONL lines {\"key\": ..., \"tokens\": [...], "
      "\"domain\": n}; prints the manifest entry");
  cmd.shard->add_option("--input", o.input, "JSONL of tokenized documents")->required();
  cmd.shard->add_option("--output", o.output, "Shard file to write (atomically)")->required();
  cmd.shard->add_option("--vocab-size", o.vocab_size, "Tokenizer vocabulary size")
      ->required()
      ->check(CLI::Range(1u, 1u << 31));
  cmd.shard->add_option("--contract", o.contract, "Tokenizer contract hash (64 hex)")->required();
  cmd.shard->add_option("--token-bytes", o.token_bytes, "2 or 4")->check(CLI::IsMember({2, 4}));
}

void AddTokenizeCommand(DataCommand& cmd) {
  DataOptions& o = cmd.opt;
  cmd.tokenize = cmd.data->add_subcommand(
      "tokenize",
      "Documents (dolma JSONL, plain/.gz/.zst) to token shards under a tokenizer "
      "contract; parallel, deterministic, resumable");
  cmd.tokenize->add_option("--contract", o.contract, "tokenizer.contract.json")->required();
  cmd.tokenize->add_option("--input", o.inputs, "JSONL files, read in order")->required();
  cmd.tokenize->add_option("--output-dir", o.output_dir, "Where shards go")->required();
  cmd.tokenize->add_option("--prefix", o.prefix, "Shard file prefix")->capture_default_str();
  cmd.tokenize->add_option("--shard-tokens", o.shard_tokens, "Close a shard at this many tokens")
      ->capture_default_str()
      ->check(kPositive);
  cmd.tokenize->add_option("--domain", o.domain, "Domain id recorded for every document");
  cmd.tokenize->add_option("--threads", o.threads, "Encoding threads")->check(CLI::Range(1, 1024));
  cmd.tokenize->add_option("--max-shards", o.max_shards,
                           "Stop after writing this many shards (rerun to continue)");
  cmd.tokenize
      ->add_option("--tasks", o.tasks,
                   "Tokenize in this many encode tasks plus a final phase (any scheduler "
                   "runs them; docs/data.md, \"Tokenizing in tasks\")")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  cmd.tokenize
      ->add_option("--task", o.task,
                   "The encode task to run, 0 .. tasks-1 (with --tasks); without it, "
                   "the final phase")
      ->check(CLI::Range(int64_t{0}, (int64_t{1} << 20) - 1));
}

void AddManifestCommand(DataCommand& cmd) {
  DataOptions& o = cmd.opt;
  cmd.manifest = cmd.data->add_subcommand(
      "manifest", "Write a data manifest from tokenize outputs (checked by opening its stream)");
  cmd.manifest->add_option("--contract", o.contract, "tokenizer.contract.json")->required();
  cmd.manifest
      ->add_option("--source", o.sources, "NAME=SHARE=path/to/PREFIX.shards.json (repeatable)")
      ->required();
  cmd.manifest->add_option("--seq-len", o.seq_len, "Window length L")->capture_default_str();
  cmd.manifest->add_option("--seed", o.seed, "Stream seed")->capture_default_str();
  cmd.manifest->add_option("--validation", o.validation,
                           "Frozen validation set DOMAIN=path/to/PREFIX.shards.json (repeatable)");
  cmd.manifest->add_option("--test", o.test,
                           "Frozen test set DOMAIN=path/to/PREFIX.shards.json (repeatable)");
  cmd.manifest->add_option("--batch-schedule", o.batch_schedule,
                           "Windows per step: N, or phases FROM_STEP:N,FROM_STEP:N,...");
  cmd.manifest->add_option("--seq-len-phases", o.seq_len_phases,
                           "Sequence-length curriculum: from step FROM_STEP on, windows of L "
                           "tokens: FROM_STEP:L,FROM_STEP:L,...");
  cmd.manifest->add_option("--mixture-phase", o.mixture_phases,
                           "Data annealing: from step FROM_STEP on, these shares (sources not "
                           "named: 0): FROM_STEP:NAME=SHARE,NAME=SHARE,... (repeatable)");
  cmd.manifest
      ->add_option("--micro-batch", o.micro_batch, "Windows per micro-batch on one logical rank")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  cmd.manifest
      ->add_option("--chunk-tokens", o.chunk_tokens,
                   "Cut documents into independent pieces of at most this many tokens "
                   "(0: never)")
      ->capture_default_str();
  cmd.manifest
      ->add_option("--positions", o.positions,
                   "Token positions: document (offset in the piece) or window")
      ->capture_default_str();
  cmd.manifest->add_flag("--prepend-bos", o.prepend_bos,
                         "A BOS (the contract's bos_id) before every document, as the base "
                         "model saw in pretraining (Llama 3)");
  cmd.manifest->add_option("--output", o.manifest_out, "Manifest to write")->required();
  cmd.manifest->add_option("--lineage", o.lineage,
                           "The corpus build's lineage.sqlite, linked by path and SHA-256 (trail "
                           "data find then says what became of a text the data lacks)");
}

void AddVerifyCommand(DataCommand& cmd) {
  DataOptions& o = cmd.opt;
  cmd.verify = cmd.data->add_subcommand(
      "verify", "Rehash every shard of a manifest (train, validation, test) against it");
  cmd.verify->add_option("--manifest", o.manifest, "Data manifest (JSON)")->required();
}

}  // namespace

void AddDataCommand(CLI::App& app, DataCommand& cmd) {
  cmd.data = app.add_subcommand("data", "Token shards and the canonical data stream");
  cmd.data->require_subcommand(1);
  AddInspectCommand(cmd);
  AddStatsCommand(cmd);
  AddShardCommand(cmd);
  AddTokenizeCommand(cmd);
  AddManifestCommand(cmd);
  AddVerifyCommand(cmd);
  AddDataFindCommands(*cmd.data, cmd.find);
}

int RunDataCommand(const DataCommand& cmd) {
  const DataOptions& o = cmd.opt;
  if (cmd.find.parsed()) return RunDataFindCommand(cmd.find);
  if (*cmd.shard) return RunShard(o);
  if (*cmd.verify) return RunVerify(o);
  if (*cmd.tokenize) return RunTokenize(o);
  if (*cmd.manifest) return RunManifest(o);
  CanonicalStream stream(data::LoadManifest(o.manifest), data::StreamOptions{!o.no_verify});
  if (*cmd.inspect) return RunInspect(stream, o);
  if (*cmd.stats) return RunStats(stream, o);
  return 0;
}

}  // namespace trail::cli
