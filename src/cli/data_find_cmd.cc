#include "cli/data_find_cmd.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "audit/data_proof.h"
#include "audit/near_absence.h"
#include "audit/publication.h"
#include "cli/checks.h"
#include "cli/exit_codes.h"
#include "core/error.h"
#include "core/file_util.h"
#include "cli/corpus_glue.h"
#include "data/find.h"
#include "infer/trained_model.h"
#include "report/contamination.h"
#include "train/run_dir.h"

namespace trail::cli {
namespace {

namespace fs = std::filesystem;
using ull = unsigned long long;

// The manifest and the steps trained: the run's (run.json's manifest, its trajectory's
// records), or --manifest with --steps.
struct Target {
  std::string manifest;
  int64_t steps = 0;
};

Target ResolveTarget(const DataFindOptions& o) {
  Target t;
  if (o.run.empty()) {
    t.manifest = o.manifest;
    t.steps = std::max<int64_t>(o.steps, 0);
    return t;
  }
  const train::RunDirectory run(o.run);
  const train::RunInfo info = run.ReadInfo();
  t.manifest = o.manifest.empty() ? info.data_manifest : o.manifest;
  TRAIL_CHECK(!t.manifest.empty() && fs::exists(t.manifest), o.run,
              ": the data manifest run.json names (", info.data_manifest,
              ") is not here; pass --manifest with a copy of it");
  t.steps = static_cast<int64_t>(run.ReadTrajectory(info.genesis, false).size());
  return t;
}

std::string IndexPath(const DataFindOptions& o, const std::string& manifest) {
  if (!o.index.empty()) return o.index;
  return (fs::path(manifest).parent_path() / "find.idx").string();
}

std::string RangeText(data::TokenRange r) {
  return "[" + std::to_string(r.begin) + ", " + std::to_string(r.end) + ")";
}

void PrintRun(const data::SharedRun& r, size_t i) {
  const uint64_t n = r.doc_tokens.end - r.doc_tokens.begin;
  std::string what = r.whole_query ? "the whole query" : "part of the query";
  if (r.whole_document) what += ", the whole document";
  std::printf(
      "  %zu. %s shard %u doc %llu key %s: document tokens %s of %llu, query tokens "
      "[%llu, %llu) (%llu tokens: %s)\n",
      i, r.source.c_str(), r.ref.shard, (ull)r.ref.doc, r.key.c_str(),
      RangeText(r.doc_tokens).c_str(), (ull)r.doc_length, (ull)r.query_begin,
      (ull)(r.query_begin + n), (ull)n, what.c_str());
  if (r.readings.empty()) {
    std::printf("     not read by any step the run trained\n");
    return;
  }
  std::printf(
      "     steps that read it: %llu; document tokens read loss-bearing %llu, context only %llu\n",
      (ull)r.steps_read, (ull)r.targets, (ull)r.context);
  std::printf("     %8s %10s %6s %5s %-16s %6s %7s\n", "step", "window", "pass", "chunk",
              "doc tokens", "loss", "context");
  for (const data::Reading& x : r.readings) {
    std::printf("     %8lld %10llu %6llu %5u %-16s %6llu %7llu\n", (long long)x.step, (ull)x.window,
                (ull)x.pass, x.chunk, RangeText(x.tokens).c_str(), (ull)x.targets,
                (ull)(x.tokens.end - x.tokens.begin - x.targets));
  }
}

void PrintResult(const data::FindResult& r, const std::string& what) {
  std::printf(
      "%s: %llu tokens; shared runs of %llu tokens or more (every run of %llu or more "
      "is found)\n",
      what.c_str(), (ull)r.query_tokens, (ull)r.min_tokens, (ull)r.guaranteed_tokens);
  if (r.query_tokens > r.training_tokens) {
    std::printf(
        "it is longer than all %llu training tokens together, so it cannot occur whole; "
        "its shared runs follow\n",
        (ull)r.training_tokens);
  }
  std::printf("training documents equal to it: %zu\n", r.same_documents.size());
  if (r.runs.empty()) std::printf("no shared run: not in the training documents\n");
  for (size_t i = 0; i < r.runs.size(); ++i) PrintRun(r.runs[i], i + 1);
  if (r.truncated)
    std::printf("(some grams occur in too many documents; their hits were capped)\n");
}

// The queries: one text, one token list, or the "text" of each line of a JSONL file.
std::vector<std::pair<std::string, std::string>> Texts(const DataFindOptions& o) {
  if (!o.text.empty()) return {{o.text, ReadFileToString(o.text)}};
  std::vector<std::pair<std::string, std::string>> out;
  for (data::TextItem& t : data::ReadTextJsonl(o.jsonl))
    out.push_back({t.where, std::move(t.text)});
  return out;
}

std::vector<uint32_t> ParseTokens(const std::string& list) {
  std::vector<uint32_t> ids;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) {
    try {
      size_t used = 0;
      const unsigned long long v = std::stoull(item, &used);
      TRAIL_CHECK(used == item.size() && v < (1ull << 32), "");
      ids.push_back(static_cast<uint32_t>(v));
    } catch (const std::exception&) {
      TRAIL_FAIL("--tokens: '", item, "' is not a token id (a comma-separated list of ids)");
    }
  }
  return ids;
}

audit::RemoteOptions Remote(const DataFindOptions& o) {
  audit::RemoteOptions ro;
  ro.location = o.bundle, ro.cache_dir = o.cache, ro.quiet = true;
  for (const std::string& k : o.trust_publishers) {
    ro.trusted_publishers.push_back(audit::KeyFingerprint(k));
  }
  if (!o.trainer_key.empty()) ro.trainer_key = audit::KeyFingerprint(o.trainer_key);
  return ro;
}

// With --proof: the membership proof of the first (longest) run found, against --bundle.
void WriteProof(const DataFindOptions& o, data::CanonicalStream& stream,
                const std::string& manifest, const std::vector<data::SharedRun>& runs) {
  if (o.proof.empty()) return;
  TRAIL_CHECK(!runs.empty(), "nothing found, so no membership proof to write");
  const audit::MembershipProof p =
      audit::MakeMembershipProof(stream, Sha256OfFile(manifest), runs[0], o.bundle);
  WriteFileAtomic(o.proof, audit::MembershipProofToJson(p).dump(1) + "\n");
  std::fprintf(stderr,
               "proof of %s tokens [%llu, %llu) (%zu readings) against publication %s: %s\n",
               p.key.c_str(), (ull)p.tokens.begin, (ull)p.tokens.end, p.readings.size(),
               p.root.c_str(), o.proof.c_str());
}

void PrintCheck(const audit::ProofCheck& c, const std::string& claim, bool json) {
  if (json) {
    std::cout << audit::ProofCheckToJson(c).dump(2) << "\n";
    return;
  }
  for (const std::string& problem : c.problems) std::printf("FAIL: %s\n", problem.c_str());
  const std::string by = c.signer.empty() ? "" : " signed by " + c.signer + " (" + c.binding + ")";
  std::printf("%s: %s; publication %s%s; fetched %llu of %llu bytes\n",
              c.ok() ? "VERIFIED" : "REFUSED", claim.c_str(), c.root.c_str(), by.c_str(),
              (ull)c.fetched_bytes, (ull)c.bundle_bytes);
}

int RunVerifyNearAbsence(const DataFindOptions& o, const std::string& text) {
  const audit::NearAbsenceProof p = audit::ParseNearAbsenceProof(text, o.proof);
  const audit::ProofCheck c =
      audit::VerifyNearAbsenceProof(p, corpus_glue::TextBandKeys(p.text, p.params), Remote(o));
  char claim[256];
  std::snprintf(claim, sizeof claim,
                "no training document shares an LSH band with the text (%u bands of %u rows; a "
                "document of Jaccard %.2f escapes all with probability %.2g)",
                p.params.bands, p.params.rows, p.params.threshold, p.miss_probability);
  PrintCheck(c, claim, o.json);
  return c.ok() ? 0 : kExitFound;
}

int RunVerifyProof(const DataFindOptions& o) {
  constexpr uint64_t kMaxProofBytes = 64u << 20;
  TRAIL_CHECK(fs::exists(o.proof) && fs::file_size(o.proof) <= kMaxProofBytes, o.proof,
              ": no such proof, or larger than 64 MiB");
  const std::string text = ReadFileToString(o.proof);
  const std::string kind = audit::DataProofKind(text, o.proof);
  if (kind == "near-absence") return RunVerifyNearAbsence(o, text);
  const bool absence = kind == "absence";
  audit::MembershipProof p;
  audit::AbsenceProof a;
  if (absence) {
    a = audit::ParseAbsenceProof(text, o.proof);
  } else {
    p = audit::ParseMembershipProof(text, o.proof);
  }
  const audit::ProofCheck c = absence ? audit::VerifyAbsenceProof(a, Remote(o))
                                      : audit::VerifyMembershipProof(p, Remote(o));
  char claim[512];
  if (absence) {
    std::snprintf(claim, sizeof claim,
                  "no training document is exactly these %zu tokens (their hash falls at index "
                  "%llu of the %llu committed hashes)",
                  a.tokens.size(), (ull)a.index, (ull)a.count);
  } else {
    std::snprintf(claim, sizeof claim,
                  "%s tokens [%llu, %llu) of %s, read by %zu windows of the %lld published steps",
                  p.key.c_str(), (ull)p.tokens.begin, (ull)p.tokens.end, p.shard.c_str(),
                  p.readings.size(), (long long)p.steps);
  }
  PrintCheck(c, claim, o.json);
  return c.ok() ? 0 : kExitFound;
}

void PrintContamination(const report::ContaminationReport& r, const std::string& out) {
  std::printf(
      "evaluation items sharing a %u-token n-gram with the %llu training documents; "
      "trained: read by one of the %lld steps (%.1f s)\n",
      r.ngram, (ull)r.training_documents, (long long)r.steps, r.seconds);
  std::printf("  %-24s %8s %10s %12s %8s %8s\n", "task", "items", "too short", "contaminated",
              "whole", "trained");
  for (const report::TaskContamination& t : r.tasks) {
    std::printf("  %-24s %8llu %10llu %12llu %8llu %8llu\n", t.task.c_str(), (ull)t.items,
                (ull)t.short_items, (ull)t.contaminated, (ull)t.whole, (ull)t.trained);
  }
  for (const report::TaskContamination& t : r.tasks) {
    for (const report::ContaminatedItem& c : t.contaminated_items) {
      std::string steps;
      if (!c.listed.empty()) {
        for (size_t i = 0; i < c.listed[0].steps.size() && i < 8; ++i) {
          steps += (i ? "," : "") + std::to_string(c.listed[0].steps[i]);
        }
      }
      std::printf(
          "  %s %s: %llu tokens, longest shared run %llu%s, %llu hits; first in %s "
          "(steps %s)\n    \"%.70s\"\n",
          t.task.c_str(), c.id.c_str(), (ull)c.tokens, (ull)c.longest,
          c.whole ? " (the whole item)" : "", (ull)c.hits,
          c.listed.empty() ? "-" : c.listed[0].key.c_str(), steps.empty() ? "none" : steps.c_str(),
          c.text.c_str());
    }
  }
  std::printf("written to %s\n", out.c_str());
}

int RunContamination(const DataFindOptions& o) {
  report::ContaminationOptions co;
  co.run_dir = o.run, co.manifest = o.manifest, co.tokenizer = o.tokenizer;
  co.tasks = o.tasks, co.items = o.items, co.ngram = o.ngram;
  const report::ContaminationReport r = report::AuditContamination(co);
  const nlohmann::ordered_json j = report::ContaminationToJson(r);
  const std::string out = o.out.empty() ? o.run + "/contamination.json" : o.out;
  WriteFileAtomic(out, j.dump(1) + "\n");
  if (o.json) {
    std::cout << j.dump(2) << "\n";
  } else {
    PrintContamination(r, out);
  }
  return 0;
}

int RunIndex(const DataFindOptions& o) {
  data::CanonicalStream stream(data::LoadManifest(o.manifest), data::StreamOptions{!o.no_verify});
  const std::string out = IndexPath(o, o.manifest);
  const data::FindIndexSummary s =
      data::BuildFindIndex(stream, Sha256OfFile(o.manifest), out, {o.gram, o.window});
  std::printf("%s: %llu documents, %llu tokens, %llu grams, %llu bytes, %.2f s\n", out.c_str(),
              (ull)s.documents, (ull)s.tokens, (ull)s.grams, (ull)s.bytes, s.seconds);
  return 0;
}

// A query as ids: --tokens, or a text normalized and encoded with the run's tokenizer (then
// also the normalized text's content hash, the corpus factory's exact-dedup key).
struct Query {
  std::string where;
  std::vector<uint32_t> ids;
  std::string content_hash;  // "" for --tokens
};

std::vector<Query> Queries(const DataFindOptions& o, const Target& t) {
  if (!o.tokens.empty()) return {{"--tokens", ParseTokens(o.tokens), ""}};
  std::vector<Query> out;
  std::string contract_path;
  const tok::LoadedContract lc =
      infer::FindRunTokenizer(o.tokenizer, o.run, t.manifest, contract_path);
  for (const auto& [where, raw] : Texts(o)) {
    const std::string text = corpus_glue::NormalizeQueryText(raw, where);
    Query q{where, {}, corpus_glue::ContentHash(text)};
    lc.tokenizer->EncodeOrdinary(text, q.ids);
    out.push_back(std::move(q));
  }
  return out;
}

// With a manifest linked to its corpus build's lineage: what the build did with documents of
// exactly this normalized text, and for a dropped duplicate whether its survivor was trained on
// (nullopt: the manifest names no lineage, or the query is token ids).
std::optional<std::vector<data::BuildVerdict>> LineageOf(data::CanonicalStream& stream,
                                                         const std::string& manifest,
                                                         const Query& q, int64_t steps) {
  const std::string& db = stream.manifest().lineage_db;
  if (db.empty() || q.content_hash.empty()) return std::nullopt;
  const fs::path path =
      fs::path(db).is_absolute() ? fs::path(db) : fs::path(manifest).parent_path() / db;
  std::vector<data::BuildVerdict> out =
      corpus_glue::LineageByContent(path.string(), q.content_hash);
  data::AddSurvivorReadings(stream, out, steps);
  return out;
}

void PrintLineage(const std::optional<std::vector<data::BuildVerdict>>& verdicts) {
  if (!verdicts) return;
  if (verdicts->empty()) std::printf("corpus build: no document had exactly this text\n");
  for (const data::BuildVerdict& v : *verdicts) {
    std::string survivor_note;
    if (!v.survivor.empty()) {
      survivor_note = v.survivor_steps_read ? "; " + v.survivor + " was trained on at " +
                                                  std::to_string(*v.survivor_steps_read) + " steps"
                                            : "; " + v.survivor + " is not a training document";
    }
    std::printf("corpus build: %s (source %s) %s%s%s\n", v.key.c_str(), v.source.c_str(),
                v.kept ? ("KEPT, split " + v.split).c_str() : ("DROPPED: " + v.dropped).c_str(),
                v.survivor.empty() ? "" : (", survivor " + v.survivor).c_str(),
                survivor_note.c_str());
  }
}

// --absent --near: the near-absence proof of one text against the publication's band keys.
int RunNearAbsent(const DataFindOptions& o) {
  TRAIL_CHECK(o.tokens.empty() && o.key.empty() && o.jsonl.empty(),
              "--near proves something of a text: give one --text");
  const std::string text = corpus_glue::NormalizeQueryText(ReadFileToString(o.text), o.text);
  const audit::RemoteOptions ro = Remote(o);
  const std::vector<uint64_t> keys =
      corpus_glue::TextBandKeys(text, audit::PublishedBandParams(ro));
  const audit::NearAbsenceProof p = audit::MakeNearAbsenceProof(text, keys, ro);
  WriteFileAtomic(o.proof, audit::NearAbsenceProofToJson(p).dump(1) + "\n");
  std::printf(
      "%s: no training document shares any of the %u LSH bands with it (a document of "
      "Jaccard similarity %.2f would escape all with probability %.2g); near-absence "
      "proof against publication %s: %s\n",
      o.text.c_str(), p.params.bands, p.params.threshold, p.miss_probability, p.root.c_str(),
      o.proof.c_str());
  return 0;
}

// --absent: the absence proof of one text against the publication's committed set.
int RunAbsent(const DataFindOptions& o, const Target& t) {
  if (o.near) return RunNearAbsent(o);
  TRAIL_CHECK(!o.proof.empty() && o.key.empty(),
              "--absent writes a proof: it needs --proof and --bundle, and a text or tokens");
  const auto queries = Queries(o, t);
  TRAIL_CHECK(queries.size() == 1, "--absent goes with one query, not --jsonl");
  const audit::AbsenceProof p = audit::MakeAbsenceProof(queries[0].ids, Remote(o));
  WriteFileAtomic(o.proof, audit::AbsenceProofToJson(p).dump(1) + "\n");
  std::printf(
      "%s: no training document is exactly these %zu tokens: their hash falls at index %llu "
      "of the %llu committed hashes; absence proof against publication %s: %s\n",
      queries[0].where.c_str(), p.tokens.size(), (ull)p.index, (ull)p.count, p.root.c_str(),
      o.proof.c_str());
  return 0;
}

int RunFind(const DataFindOptions& o) {
  const Target t = ResolveTarget(o);
  if (o.absent) return RunAbsent(o, t);
  data::CanonicalStream stream(data::LoadManifest(t.manifest), data::StreamOptions{!o.no_verify});
  if (!o.key.empty()) {
    const data::SharedRun r = data::FindKey(stream, o.key, t.steps);
    if (o.json) {
      std::cout << data::SharedRunToJson(r).dump(2) << "\n";
    } else {
      PrintRun(r, 1);
    }
    WriteProof(o, stream, t.manifest, {r});
    return 0;
  }
  const std::string index_path = IndexPath(o, t.manifest);
  TRAIL_CHECK(fs::exists(index_path), index_path, ": no find index for ", t.manifest,
              "; build it with `trail data index --manifest ", t.manifest, "`");
  const data::FindIndex index(index_path, Sha256OfFile(t.manifest));
  const data::FindOptions fo{.min_tokens = o.min_tokens, .steps = t.steps};
  const auto queries = Queries(o, t);
  TRAIL_CHECK(o.proof.empty() || queries.size() == 1,
              "--proof goes with one query (--text, --tokens or --key), not --jsonl");
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  for (const Query& q : queries) {
    const data::FindResult r = data::FindTokens(stream, index, q.ids, fo);
    WriteProof(o, stream, t.manifest, r.runs);
    if (o.json) {
      all.push_back(data::FindResultToJson(stream, r));
      all.back()["query"] = q.where;
      nlohmann::ordered_json& lineage = all.back()["lineage"] = nlohmann::ordered_json::array();
      const auto verdicts = LineageOf(stream, t.manifest, q, t.steps);
      for (size_t i = 0; verdicts && i < verdicts->size(); ++i) {
        lineage.push_back(data::BuildVerdictToJson((*verdicts)[i]));
      }
    } else {
      PrintResult(r, q.where);
      PrintLineage(LineageOf(stream, t.manifest, q, t.steps));
    }
  }
  if (o.json) std::cout << (all.size() == 1 ? all[0] : all).dump(2) << "\n";
  return 0;
}

}  // namespace

bool DataFindCommand::parsed() const {
  return (index && *index) || (find && *find) || (verify_proof && *verify_proof) ||
         (contamination && *contamination);
}

void AddDataFindCommands(CLI::App& data, DataFindCommand& cmd) {
  DataFindOptions& o = cmd.opt;
  cmd.index = data.add_subcommand(
      "index", "Build the find index of a manifest's training documents (for `trail data find`)");
  cmd.index->add_option("--manifest", o.manifest, "Data manifest (JSON)")->required();
  cmd.index->add_option("--out", o.index, "Index file (default: find.idx beside the manifest)");
  cmd.index->add_option("--gram", o.gram, "Tokens per gram")->check(CLI::Range(1, 1024));
  cmd.index->add_option("--window", o.window, "Winnowing window, in grams")
      ->check(CLI::Range(1, 1 << 16));
  cmd.index->add_flag("--no-verify", o.no_verify, "Skip rehashing the shards on open");

  cmd.find = data.add_subcommand(
      "find", "Where a text occurs in the training documents and at which steps it was trained on");
  auto* run = cmd.find->add_option("--run", o.run, "Run directory (its manifest and steps)");
  cmd.find->add_option("--manifest", o.manifest, "Data manifest (without --run, or a copy)");
  cmd.find->add_option("--steps", o.steps, "Steps trained (with --manifest alone; default 0)")
      ->check(kNonNegative)
      ->excludes(run);
  auto* text = cmd.find->add_option("--text", o.text, "A UTF-8 text file to look for");
  auto* tokens = cmd.find->add_option("--tokens", o.tokens, "Token ids, comma-separated");
  auto* key = cmd.find->add_option("--key", o.key, "A document's lineage key");
  auto* jsonl = cmd.find->add_option("--jsonl", o.jsonl, "JSONL, one {\"text\": …} per line");
  text->excludes(tokens, key, jsonl);
  tokens->excludes(key, jsonl);
  key->excludes(jsonl);
  cmd.find->add_option("--index", o.index, "Find index (default: find.idx beside the manifest)");
  cmd.find->add_option("--tokenizer", o.tokenizer, "Tokenizer contract (default: the run's)");
  cmd.find->add_option("--min-tokens", o.min_tokens, "Shortest shared run reported")
      ->check(CLI::Range(1, 1 << 30));
  cmd.find->add_flag("--json", o.json, "Print JSON (trail.data-find.v1)");
  cmd.find->add_flag("--no-verify", o.no_verify, "Skip rehashing the shards on open");
  auto* proof = cmd.find->add_option(
      "--proof", o.proof, "Write a membership proof of the longest run found (needs --bundle)");
  cmd.find->add_flag("--absent", o.absent,
                     "With --proof: prove that no training document is exactly the text");
  cmd.find->add_flag("--near", o.near,
                     "With --absent: prove that no training document is a near duplicate of it "
                     "(the publication's band keys)");
  cmd.find->add_option("--cache", o.cache, "With --absent: the cache of fetched bytes");
  auto* bundle =
      cmd.find->add_option("--bundle", o.bundle, "The run's publication (a directory or URL)");
  proof->needs(bundle);
  bundle->needs(proof);

  cmd.verify_proof = data.add_subcommand(
      "verify-proof", "Check a proof about the training data against the run's publication");
  cmd.verify_proof->add_option("--proof", o.proof, "The proof (trail.data-proof.v1)")->required();
  cmd.verify_proof->add_option("--bundle", o.bundle, "The publication (a directory or URL)")
      ->required();
  cmd.verify_proof->add_option("--cache", o.cache,
                               "The cache of fetched bytes (default: $XDG_CACHE_HOME/trail or "
                               "~/.cache/trail)");
  cmd.verify_proof->add_option("--trust-publisher", o.trust_publishers,
                               "Accept a publication signed by this key although it is not the "
                               "trainer's");
  cmd.verify_proof->add_option("--trainer", o.trainer_key,
                               "The trainer's key: refuse a run whose attestation it did not sign");
  cmd.verify_proof->add_flag("--json", o.json, "Print JSON");

  cmd.contamination = data.add_subcommand(
      "contamination",
      "Which evaluation items share n-grams with a run's training data, and when "
      "it read them");
  cmd.contamination->add_option("--run", o.run, "Run directory")->required();
  cmd.contamination->add_option("--manifest", o.manifest, "A copy of the run's data manifest");
  cmd.contamination->add_option("--tokenizer", o.tokenizer,
                                "Tokenizer contract (default: the run's)");
  cmd.contamination->add_option("--tasks", o.tasks, "OLMES task folders, or folders holding them");
  cmd.contamination->add_option("--items", o.items, "JSONL files of {\"text\", \"id\"} items");
  cmd.contamination->add_option("--ngram", o.ngram, "Tokens per n-gram")
      ->check(CLI::Range(1, 1024));
  cmd.contamination->add_option("--out", o.out, "Report file (default: RUN/contamination.json)");
  cmd.contamination->add_flag("--json", o.json, "Print the report as JSON");
}

int RunDataFindCommand(const DataFindCommand& cmd) {
  const DataFindOptions& o = cmd.opt;
  if (*cmd.index) return RunIndex(o);
  if (*cmd.verify_proof) return RunVerifyProof(o);
  if (*cmd.contamination) return RunContamination(o);
  TRAIL_CHECK(!o.run.empty() || !o.manifest.empty(), "data find needs --run or --manifest");
  TRAIL_CHECK(!o.text.empty() || !o.tokens.empty() || !o.key.empty() || !o.jsonl.empty(),
              "data find needs what to look for: --text, --tokens, --key or --jsonl");
  return RunFind(o);
}

}  // namespace trail::cli
