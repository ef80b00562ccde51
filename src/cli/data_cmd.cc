#include "cli/data_cmd.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <sstream>
#include <fstream>
#include <iostream>

#include "core/error.h"
#include "core/hash.h"
#include "data/batcher.h"
#include "data/shard_writer.h"
#include "data/stream.h"
#include "data/tokenize_job.h"
#include "tokenizer/contract.h"

namespace trail::cli {
namespace {

using data::CanonicalStream;
using data::kUnlimited;
using data::Manifest;
using data::PackedBatch;
using data::RawWindow;
using data::Segment;
using Json = nlohmann::ordered_json;

std::string Fmt(const char* f, auto... args) {
  char buf[512];
  std::snprintf(buf, sizeof(buf), f, args...);
  return buf;
}

data::StreamOptions Options(const DataOptions& o) {
  data::StreamOptions s;
  s.verify_hashes = !o.no_verify;
  return s;
}

Json SegmentJson(const CanonicalStream& s, const Segment& seg) {
  const data::SourceStream& src = s.source(seg.source);
  const data::ShardReader& sh = src.shard(seg.shard);
  const data::ShardRef& ref = s.manifest().sources[seg.source].shards[seg.shard];
  return Json{{"source", src.name()},
              {"shard", ref.path},
              {"doc", seg.doc},
              {"key", std::string(sh.doc_key(seg.doc))},
              {"chunk", seg.chunk},
              {"doc_offset", data::ChunkStart(s.manifest().stream.chunking, seg.chunk) +
                                 seg.piece_offset},
              {"piece_offset", seg.piece_offset},
              {"tokens", seg.length},
              {"ends_with_eos", seg.ends_with_eos},
              {s.manifest().sources[seg.source].sampling == data::Sampling::kPermutation
                   ? "epoch"
                   : "draw_block",
               seg.pass},
              {"window_offset", seg.window_offset}};
}

// Printable text of some bytes: control characters and newlines escaped.
std::string Printable(const std::string& bytes) {
  std::string out;
  for (unsigned char c : bytes) {
    if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c == 0x7f) {
      out += Fmt("\\x%02x", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

void PrintWindow(CanonicalStream& s, uint64_t w, bool json, const tok::Tokenizer* decoder) {
  RawWindow win;
  s.Window(w, win);
  const int64_t L = s.seq_len();
  PackedBatch b;
  b.Resize(1, L);
  data::PackRow(win, s.manifest().stream.semantics, b, 0);
  Json docs = Json::array();
  for (const Segment& seg : win.segments) docs.push_back(SegmentJson(s, seg));
  auto text_of = [&](int64_t from, int64_t n) {
    std::vector<uint32_t> ids;
    for (int64_t i = from; i < from + n; ++i) ids.push_back(static_cast<uint32_t>(win.tokens[i]));
    return decoder->Decode(ids);
  };
  if (decoder != nullptr) {
    for (size_t i = 0; i < docs.size(); ++i) {
      docs[i]["text"] = Printable(text_of(static_cast<int64_t>(win.segments[i].window_offset),
                                          static_cast<int64_t>(win.segments[i].length)));
    }
  }
  if (json) {
    Json tokens = Json::array();
    for (int64_t i = 0; i <= L; ++i) {
      Json t{{"token", win.tokens[i]}, {"doc", win.doc[i]}, {"position", win.positions[i]},
             {"real", i < win.length}};
      if (decoder != nullptr) t["piece"] = Printable(text_of(i, 1));
      if (i < L) {
        t["label"] = b.labels[i];
        t["loss"] = b.loss_mask[i];
        t["attn_doc"] = b.doc_ids[i];
        t["key_valid"] = b.key_valid[i];
      }
      tokens.push_back(t);
    }
    const Json out{{"window", w},
                   {"source", s.source(win.owner.source).name()},
                   {"source_window", win.owner.source_window},
                   {"seq_len", L},
                   {"real_tokens", win.length},
                   {"targets", b.target_tokens},
                   {"documents", docs},
                   {"tokens", tokens}};
    std::cout << out.dump(2) << "\n";
    return;
  }
  std::printf("window %llu: source '%s' (its window %llu), %lld real tokens of %lld, %lld targets\n",
              (unsigned long long)w, s.source(win.owner.source).name().c_str(),
              (unsigned long long)win.owner.source_window, (long long)win.length,
              (long long)L + 1, (long long)b.target_tokens);
  std::printf("documents:\n  %-3s %-20s %-8s %-24s %-5s %-18s %-6s %s\n", "id", "shard", "doc",
              "key", "chunk", "doc tokens", "pass", "window");
  for (size_t i = 0; i < docs.size(); ++i) {
    const Json& d = docs[i];
    const uint64_t off = d["doc_offset"], n = d["tokens"];
    const bool eos = d["ends_with_eos"];
    const std::string range =
        Fmt("[%llu, %llu)%s", (unsigned long long)off,
            (unsigned long long)(off + n - (eos ? 1 : 0)), eos ? "+EOS" : "");
    const uint64_t at = d["window_offset"];
    std::printf("  %-3zu %-20s %-8llu %-24s %-5u %-18s %-6llu [%llu, %llu)\n", i,
                d["shard"].get<std::string>().c_str(), (unsigned long long)d["doc"].get<uint64_t>(),
                d["key"].get<std::string>().c_str(), d["chunk"].get<uint32_t>(), range.c_str(),
                (unsigned long long)win.segments[i].pass, (unsigned long long)at,
                (unsigned long long)(at + n));
    if (d.contains("text")) std::printf("      \"%s\"\n", d["text"].get<std::string>().c_str());
  }
  std::printf("tokens:\n  %5s %10s %4s %7s %10s %4s %5s  %s\n", "i", "token", "doc", "pos", "label",
              "loss", "key", decoder ? "piece" : "");
  for (int64_t i = 0; i <= L; ++i) {
    const std::string label = i < L ? (b.labels[i] == data::kIgnoreLabel ? "ignore"
                                                                         : std::to_string(b.labels[i]))
                                    : "-";
    const std::string piece = decoder && i < win.length ? "'" + Printable(text_of(i, 1)) + "'" : "";
    std::printf("  %5lld %10d %4d %7d %10s %4s %5s  %s%s\n", (long long)i, win.tokens[i], win.doc[i],
                win.positions[i], label.c_str(), i < L ? (b.loss_mask[i] ? "1" : "0") : "-",
                i < L ? (b.key_valid[i] ? "1" : "0") : "-", piece.c_str(),
                i < win.length ? "" : "(padding)");
  }
}

void PrintStep(CanonicalStream& s, const DataOptions& o) {
  data::Batcher batcher(s);
  const data::WindowRange r = batcher.schedule().StepWindows(o.step);
  const int64_t K = o.ranks;
  Json ranks = Json::array();
  int64_t step_input = 0, step_targets = 0;
  for (int64_t k = 0; k < K; ++k) {
    if (o.rank >= 0 && k != o.rank) continue;
    Json micro = Json::array();
    for (int64_t m = 0; m < batcher.NumMicroBatches(o.step, k, K); ++m) {
      PackedBatch b;
      batcher.MicroBatch(o.step, k, K, m, b);
      Json wins = Json::array();
      for (uint64_t w : b.windows) {
        if (w == data::kPaddingRow) {
          wins.push_back(nullptr);
        } else {
          wins.push_back(w);
        }
      }
      micro.push_back(Json{{"windows", wins},
                           {"B_input", b.input_tokens},
                           {"real_tokens", b.real_tokens},
                           {"B_target", b.target_tokens}});
      step_input += b.input_tokens;
      step_targets += b.target_tokens;
    }
    ranks.push_back(Json{{"rank", k}, {"micro_batches", micro}});
  }
  const Json out{{"step", o.step},         {"windows", Json::array({r.begin, r.end})},
                 {"logical_ranks", K},     {"B_input", step_input},
                 {"B_target", step_targets}, {"ranks", ranks}};
  if (o.json) {
    std::cout << out.dump(2) << "\n";
    return;
  }
  std::printf("step %lld: windows [%llu, %llu), %lld logical ranks, micro-batches of %lld windows\n",
              (long long)o.step, (unsigned long long)r.begin, (unsigned long long)r.end,
              (long long)K, (long long)s.manifest().stream.micro_batch_windows);
  for (const Json& rk : ranks) {
    for (size_t m = 0; m < rk["micro_batches"].size(); ++m) {
      const Json& mb = rk["micro_batches"][m];
      std::printf("  rank %lld micro %zu: windows %s  B_input %lld  B_target %lld\n",
                  (long long)rk["rank"].get<int64_t>(), m, mb["windows"].dump().c_str(),
                  (long long)mb["B_input"].get<int64_t>(), (long long)mb["B_target"].get<int64_t>());
    }
  }
  std::printf("  %s: B_input %lld, B_target %lld (the loss normalizer)\n",
              o.rank >= 0 ? "this rank" : "step", (long long)step_input, (long long)step_targets);
}

int RunStats(CanonicalStream& s, const DataOptions& o) {
  const Manifest& m = s.manifest();
  const int64_t L = s.seq_len();
  uint64_t W = 0;
  if (o.steps >= 0) {
    W = data::BatchSchedule(m.stream.schedule).StepWindows(o.steps).begin;
  } else {
    W = static_cast<uint64_t>(o.windows);
  }
  if (s.num_windows() != kUnlimited) W = std::min(W, s.num_windows());
  const std::vector<uint64_t> counts = s.mixture().CountsBefore(W);
  const std::vector<double> sched = s.mixture().ScheduledShares();
  double share_total = 0;
  for (const auto& src : m.sources) share_total += src.target_share;
  std::vector<uint64_t> tokens(counts.size());
  uint64_t total = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    // Tokens read from the source: windows j < n cover source tokens [0, nL] (one shared
    // between neighbours); a finite source stops at its end.
    const uint64_t T = s.source(i).total_tokens();
    tokens[i] = counts[i] == 0 ? 0 : std::min<uint64_t>(counts[i] * L, T == kUnlimited ? UINT64_MAX : T - 1);
    total += tokens[i];
  }
  Json rows = Json::array();
  for (size_t i = 0; i < counts.size(); ++i) {
    const data::SourceStream& src = s.source(i);
    const double epochs = double(tokens[i] + (counts[i] ? 1 : 0)) / double(src.epoch_tokens());
    rows.push_back(Json{
        {"source", src.name()},
        {"sampling", m.sources[i].sampling == data::Sampling::kPermutation ? "permutation"
                                                                           : "replacement"},
        {"target_share", m.sources[i].target_share / share_total},
        {"scheduled_share", sched[i]},
        {"measured_share", total ? double(tokens[i]) / double(total) : 0.0},
        {"windows", counts[i]},
        {"tokens", tokens[i]},
        {"epoch_tokens", src.epoch_tokens()},
        {"epochs", epochs},
        {"ended", src.num_windows(L) != kUnlimited && counts[i] >= src.num_windows(L)}});
  }
  const Json out{{"windows", W},
                 {"stream_windows", s.num_windows() == kUnlimited ? Json("unlimited")
                                                                  : Json(s.num_windows())},
                 {"seq_len", L},
                 {"tokens", total},
                 {"sources", rows}};
  if (o.json) {
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  std::printf("first %llu windows (L=%lld): %llu tokens; stream length: %s\n",
              (unsigned long long)W, (long long)L, (unsigned long long)total,
              s.num_windows() == kUnlimited ? "unlimited"
                                            : (std::to_string(s.num_windows()) + " windows").c_str());
  std::printf("  %-16s %-12s %8s %9s %9s %12s %14s %9s\n", "source", "sampling", "target",
              "scheduled", "measured", "windows", "tokens", "epochs");
  for (const Json& r : rows) {
    std::printf("  %-16s %-12s %8.5f %9.5f %9.5f %12llu %14llu %9.3f%s\n",
                r["source"].get<std::string>().c_str(), r["sampling"].get<std::string>().c_str(),
                r["target_share"].get<double>(), r["scheduled_share"].get<double>(),
                r["measured_share"].get<double>(), (unsigned long long)r["windows"].get<uint64_t>(),
                (unsigned long long)r["tokens"].get<uint64_t>(), r["epochs"].get<double>(),
                r["ended"].get<bool>() ? "  (ended)" : "");
  }
  return 0;
}

int RunShard(const DataOptions& o) {
  data::ShardWriterOptions w;
  w.token_bytes = o.token_bytes;
  w.vocab_size = o.vocab_size;
  w.contract = data::ParseContractHash(o.contract, "--contract");
  std::ifstream in(o.input);
  TRAIL_CHECK(in.good(), o.input, ": cannot open");
  data::ShardWriter writer(o.output, w);
  std::string line;
  std::vector<uint32_t> tokens;
  for (int64_t n = 1; std::getline(in, line); ++n) {
    const std::string where = o.input + ":" + std::to_string(n);
    Json j;
    try {
      j = Json::parse(line);
    } catch (const Json::parse_error& e) {
      TRAIL_FAIL(where, ": not valid JSON: ", e.what());
    }
    TRAIL_CHECK(j.is_object(), where, ": each line must be a JSON object");
    for (auto it = j.begin(); it != j.end(); ++it) {
      TRAIL_CHECK(it.key() == "key" || it.key() == "tokens" || it.key() == "domain", where,
                  ": unknown key '", it.key(), "' (expected key, tokens, domain)");
    }
    TRAIL_CHECK(j.contains("key") && j["key"].is_string(), where, ": 'key' must be a string");
    TRAIL_CHECK(j.contains("tokens") && j["tokens"].is_array(), where,
                ": 'tokens' must be an array of token ids");
    uint32_t domain = 0;
    if (j.contains("domain")) {
      TRAIL_CHECK(j["domain"].is_number_unsigned(), where, ": 'domain' must be an unsigned integer");
      domain = j["domain"].get<uint32_t>();
    }
    tokens.clear();
    for (const Json& t : j["tokens"]) {
      TRAIL_CHECK(t.is_number_unsigned(), where, ": token ids must be non-negative integers");
      tokens.push_back(t.get<uint32_t>());
    }
    try {
      writer.Add(j["key"].get<std::string>(), domain, tokens);
    } catch (const Error& e) {
      TRAIL_FAIL(where, ": ", e.what());
    }
  }
  TRAIL_CHECK(in.eof(), o.input, ": read error");
  const data::ShardSummary s = writer.Finish();
  // The line a manifest's "shards" list takes.
  std::cout << Json{{"path", o.output}, {"sha256", s.sha256}, {"tokens", s.num_tokens},
                    {"documents", s.num_docs}}
                   .dump()
            << "\n";
  return 0;
}

int RunTokenize(const DataOptions& o) {
  data::TokenizeOptions t;
  t.contract = o.contract;
  t.inputs = o.inputs;
  t.output_dir = o.output_dir;
  t.prefix = o.prefix;
  t.shard_tokens = o.shard_tokens;
  t.domain = o.domain;
  t.threads = o.threads;
  t.max_shards = o.max_shards;
  const data::TokenizeResult r = data::RunTokenize(t, [](const data::TokenizeProgress& p) {
    std::fprintf(stderr, "tokenize: %llu documents, %.1f MB, %llu tokens, %.1f MB/s\n",
                 (unsigned long long)p.documents, p.bytes / 1e6, (unsigned long long)p.tokens,
                 p.bytes / 1e6 / p.seconds);
  });
  data::WriteShardList(r, o.output_dir + "/" + o.prefix + ".shards.json");
  std::fprintf(stderr, "tokenize: %s: %zu shards (%d verified from an earlier run), %llu documents "
               "(%llu empty, skipped), %llu tokens, %.2f bytes/token\n",
               r.complete ? "complete" : "stopped", r.shards.size(), r.resumed_shards,
               (unsigned long long)r.documents, (unsigned long long)r.empty_documents,
               (unsigned long long)r.tokens, r.tokens ? double(r.bytes) / r.tokens : 0.0);
  return 0;
}

// Builds a manifest from `trail data tokenize` outputs: the tokenizer section from the contract,
// one source per NAME=SHARE=path/to/PREFIX.shards.json, shard paths relative to the manifest.
int RunManifest(const DataOptions& o) {
  namespace fs = std::filesystem;
  const tok::LoadedContract lc = tok::LoadContract(o.contract);
  Manifest m;
  std::copy(lc.hash.begin(), lc.hash.end(), m.tokenizer.contract.begin());
  m.tokenizer.vocab_size = lc.contract.vocab_size;
  m.tokenizer.token_bytes = lc.contract.vocab_size <= 65536 ? 2 : 4;
  m.tokenizer.eos_id = lc.contract.eos_id;
  m.tokenizer.pad_id = lc.contract.pad_id;
  m.stream.seq_len = o.seq_len;
  m.stream.seed = o.seed;
  m.stream.append_eos = lc.contract.eos_id >= 0;
  const fs::path out_dir = fs::absolute(o.manifest_out).parent_path();
  // The shards a `trail data tokenize` run listed, with paths relative to the manifest.
  auto read_list = [&](const std::string& list) {
    Json j;
    try {
      j = Json::parse(ReadFileToString(list));
    } catch (const Json::parse_error& e) {
      TRAIL_FAIL(list, ": not valid JSON: ", e.what());
    }
    TRAIL_CHECK(j.value("contract", "") == ToHex(lc.hash), list,
                ": shards were written under another tokenizer contract");
    TRAIL_CHECK(j.value("complete", false), list, ": the tokenize run is not complete");
    const fs::path list_dir = fs::absolute(list).parent_path();
    std::vector<data::ShardRef> refs;
    for (const Json& s : j["shards"]) {
      data::ShardRef ref{s["path"], s["sha256"], s["tokens"], s["documents"]};
      ref.path = fs::relative(list_dir / ref.path, out_dir).string();
      refs.push_back(ref);
    }
    return refs;
  };
  for (const std::string& spec : o.sources) {
    const size_t a = spec.find('='), b = spec.find('=', a + 1);
    TRAIL_CHECK(a != std::string::npos && b != std::string::npos, "--source '", spec,
                "' is not NAME=SHARE=SHARDS_JSON");
    data::SourceSpec src;
    src.name = spec.substr(0, a);
    try {
      src.target_share = std::stod(spec.substr(a + 1, b - a - 1));
    } catch (...) {
      TRAIL_FAIL("--source '", spec, "': bad share");
    }
    src.shards = read_list(spec.substr(b + 1));
    m.sources.push_back(std::move(src));
  }
  for (auto [specs, sets] : {std::pair{&o.validation, &m.validation}, std::pair{&o.test, &m.test}}) {
    for (const std::string& spec : *specs) {
      const size_t a = spec.find('=');
      TRAIL_CHECK(a != std::string::npos, "'", spec, "' is not DOMAIN=SHARDS_JSON");
      sets->push_back({spec.substr(0, a), read_list(spec.substr(a + 1))});
    }
  }
  if (!o.batch_schedule.empty()) {
    m.stream.schedule.clear();
    std::stringstream in(o.batch_schedule);
    std::string item;
    while (std::getline(in, item, ',')) {
      const size_t c = item.find(':');
      try {
        m.stream.schedule.push_back(c == std::string::npos
                                        ? data::BatchPhase{0, std::stoll(item)}
                                        : data::BatchPhase{std::stoll(item.substr(0, c)),
                                                           std::stoll(item.substr(c + 1))});
      } catch (...) {
        TRAIL_FAIL("--batch-schedule '", o.batch_schedule,
                    "' is not WINDOWS or FROM_STEP:WINDOWS,...");
      }
    }
  }
  m.stream.micro_batch_windows = o.micro_batch;
  m.stream.chunking.max_tokens = o.chunk_tokens;
  TRAIL_CHECK(o.positions == "document" || o.positions == "window",
              "--positions must be document or window");
  m.stream.positions =
      o.positions == "document" ? data::PositionMode::kDocument : data::PositionMode::kWindow;
  const std::string text = data::ManifestToJson(m);
  // Check it the way a run will read it before writing it.
  data::Manifest check = data::ParseManifest(text, o.manifest_out, out_dir.string());
  data::CanonicalStream verify(check);
  WriteFileAtomic(o.manifest_out, text);
  std::printf("%s: %zu sources, stream of %s windows\n", o.manifest_out.c_str(), m.sources.size(),
              verify.num_windows() == kUnlimited ? "unlimited"
                                                 : std::to_string(verify.num_windows()).c_str());
  return 0;
}

int RunVerify(const DataOptions& o) {
  const Manifest m = data::LoadManifest(o.manifest);
  int bad = 0, ok = 0;
  auto check = [&](const std::string& what, const std::vector<data::ShardRef>& refs) {
    for (const data::ShardRef& ref : refs) {
      try {
        data::OpenShards(m, {ref}, {});
        ++ok;
      } catch (const Error& e) {
        ++bad;
        std::printf("FAIL %s: %s\n", what.c_str(), e.what());
      }
    }
  };
  for (const auto& s : m.sources) check("train/" + s.name, s.shards);
  for (const auto& e : m.validation) check("validation/" + e.domain, e.shards);
  for (const auto& e : m.test) check("test/" + e.domain, e.shards);
  std::printf("%d shards verified, %d failed\n", ok, bad);
  return bad == 0 ? 0 : 1;
}

}  // namespace

void AddDataCommand(CLI::App& app, DataCommand& cmd) {
  DataOptions& o = cmd.opt;
  cmd.data = app.add_subcommand("data", "Token shards and the canonical data stream");
  cmd.data->require_subcommand(1);

  cmd.inspect = cmd.data->add_subcommand(
      "inspect", "Show one window (tokens, documents, positions, labels, masks, provenance) or "
                 "the windows and token counts of one step");
  cmd.inspect->add_option("--manifest", o.manifest, "Data manifest (JSON)")->required();
  auto* win = cmd.inspect->add_option("--window", o.window, "Global window index")
                  ->check(CLI::NonNegativeNumber);
  auto* step = cmd.inspect->add_option("--step", o.step, "Training step")
                   ->check(CLI::NonNegativeNumber);
  win->excludes(step);
  cmd.inspect->add_option("--ranks", o.ranks, "Logical data-parallel ranks (with --step)")
      ->check(CLI::Range(1, 1 << 20));
  cmd.inspect->add_option("--rank", o.rank, "Show only this logical rank (with --step)")
      ->check(CLI::NonNegativeNumber);
  cmd.inspect->add_flag("--json", o.json, "Print JSON");
  cmd.inspect->add_option("--contract", o.decode_contract,
                          "Tokenizer contract: show the text of the tokens and documents");
  cmd.inspect->add_flag("--no-verify", o.no_verify, "Skip rehashing the shards on open");

  cmd.stats = cmd.data->add_subcommand(
      "stats", "Target vs measured token shares, epochs per source and tokens seen");
  cmd.stats->add_option("--manifest", o.manifest, "Data manifest (JSON)")->required();
  auto* nw = cmd.stats->add_option("--windows", o.windows, "Over the first N windows")
                 ->check(CLI::NonNegativeNumber);
  auto* ns = cmd.stats->add_option("--steps", o.steps, "Over the first N steps")
                 ->check(CLI::NonNegativeNumber);
  nw->excludes(ns);
  cmd.stats->add_flag("--json", o.json, "Print JSON");
  cmd.stats->add_flag("--no-verify", o.no_verify, "Skip rehashing the shards on open");

  cmd.shard = cmd.data->add_subcommand(
      "shard", "Write a token shard from JSONL lines {\"key\": ..., \"tokens\": [...], "
               "\"domain\": n}; prints the manifest entry");
  cmd.shard->add_option("--input", o.input, "JSONL of tokenized documents")->required();
  cmd.shard->add_option("--output", o.output, "Shard file to write (atomically)")->required();
  cmd.shard->add_option("--vocab-size", o.vocab_size, "Tokenizer vocabulary size")
      ->required()
      ->check(CLI::Range(1u, 1u << 31));
  cmd.shard->add_option("--contract", o.contract, "Tokenizer contract hash (64 hex)")->required();
  cmd.shard->add_option("--token-bytes", o.token_bytes, "2 or 4")->check(CLI::IsMember({2, 4}));

  cmd.tokenize = cmd.data->add_subcommand(
      "tokenize", "Documents (dolma JSONL, plain/.gz/.zst) to token shards under a tokenizer "
                  "contract; parallel, deterministic, resumable");
  cmd.tokenize->add_option("--contract", o.contract, "tokenizer.contract.json")->required();
  cmd.tokenize->add_option("--input", o.inputs, "JSONL files, read in order")->required();
  cmd.tokenize->add_option("--output-dir", o.output_dir, "Where shards go")->required();
  cmd.tokenize->add_option("--prefix", o.prefix, "Shard file prefix")->capture_default_str();
  cmd.tokenize->add_option("--shard-tokens", o.shard_tokens, "Close a shard at this many tokens")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd.tokenize->add_option("--domain", o.domain, "Domain id recorded for every document");
  cmd.tokenize->add_option("--threads", o.threads, "Encoding threads")->check(CLI::Range(1, 1024));
  cmd.tokenize->add_option("--max-shards", o.max_shards,
                           "Stop after writing this many shards (rerun to continue)");

  cmd.manifest = cmd.data->add_subcommand(
      "manifest", "Write a data manifest from tokenize outputs (checked by opening its stream)");
  cmd.manifest->add_option("--contract", o.contract, "tokenizer.contract.json")->required();
  cmd.manifest->add_option("--source", o.sources,
                           "NAME=SHARE=path/to/PREFIX.shards.json (repeatable)")
      ->required();
  cmd.manifest->add_option("--seq-len", o.seq_len, "Window length L")->capture_default_str();
  cmd.manifest->add_option("--seed", o.seed, "Stream seed")->capture_default_str();
  cmd.manifest->add_option("--validation", o.validation,
                           "Frozen validation set DOMAIN=path/to/PREFIX.shards.json (repeatable)");
  cmd.manifest->add_option("--test", o.test,
                           "Frozen test set DOMAIN=path/to/PREFIX.shards.json (repeatable)");
  cmd.manifest->add_option("--batch-schedule", o.batch_schedule,
                           "Windows per step: N, or phases FROM_STEP:N,FROM_STEP:N,...");
  cmd.manifest->add_option("--micro-batch", o.micro_batch,
                           "Windows per micro-batch on one logical rank")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  cmd.manifest->add_option("--chunk-tokens", o.chunk_tokens,
                           "Cut documents into independent pieces of at most this many tokens "
                           "(0: never)")
      ->capture_default_str();
  cmd.manifest->add_option("--positions", o.positions,
                           "Token positions: document (offset in the piece) or window")
      ->capture_default_str();
  cmd.manifest->add_option("--output", o.manifest_out, "Manifest to write")->required();

  cmd.verify = cmd.data->add_subcommand(
      "verify", "Rehash every shard of a manifest (train, validation, test) against it");
  cmd.verify->add_option("--manifest", o.manifest, "Data manifest (JSON)")->required();
}

int RunDataCommand(const DataCommand& cmd) {
  const DataOptions& o = cmd.opt;
  if (*cmd.shard) return RunShard(o);
  if (*cmd.verify) return RunVerify(o);
  if (*cmd.tokenize) return RunTokenize(o);
  if (*cmd.manifest) return RunManifest(o);
  CanonicalStream stream(data::LoadManifest(o.manifest), Options(o));
  if (*cmd.inspect) {
    if (o.window >= 0) {
      std::unique_ptr<tok::Tokenizer> decoder;
      if (!o.decode_contract.empty()) {
        tok::LoadedContract lc = tok::LoadContract(o.decode_contract);
        TRAIL_CHECK(std::equal(lc.hash.begin(), lc.hash.end(), stream.manifest().tokenizer.contract.begin()),
                    o.decode_contract, ": this contract's hash ", ToHex(lc.hash),
                    " is not the manifest's tokenizer contract");
        decoder = std::move(lc.tokenizer);
      }
      PrintWindow(stream, static_cast<uint64_t>(o.window), o.json, decoder.get());
      return 0;
    }
    TRAIL_CHECK(o.step >= 0, "data inspect needs --window or --step");
    TRAIL_CHECK(o.rank < o.ranks, "--rank ", o.rank, " is not below --ranks ", o.ranks);
    PrintStep(stream, o);
    return 0;
  }
  if (*cmd.stats) {
    TRAIL_CHECK(o.windows >= 0 || o.steps >= 0, "data stats needs --windows or --steps");
    return RunStats(stream, o);
  }
  return 0;
}

}  // namespace trail::cli
