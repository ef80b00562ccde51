#include "cli/publish_cmd.h"

#include <CLI/CLI.hpp>

#include <cstdio>

#include "audit/publish.h"
#include "core/file_util.h"
#include "cli/corpus_glue.h"
#include "infer/trained_model.h"
#include "train/run_dir.h"
#include "cli/checks.h"
#include "cli/exit_codes.h"

namespace trail::cli {

void AddPublishCommand(CLI::App& app, PublishCommand& c) {
  c.publish = app.add_subcommand(
      "publish",
      "Make a finished run a signed bundle (run files, kept checkpoints, data manifest and "
      "shards, publication.json) that auditors fetch from a web server, a Hugging Face "
      "repository or a bucket");
  c.publish->add_option("--run", c.run, "The run directory");
  c.publish->add_option("--out", c.out, "The bundle folder to write (new or empty)");
  c.publish->add_option("--key", c.key, "The trainer's private key (from `trail audit keygen`)");
  c.publish
      ->add_option("--checkpoint-every", c.checkpoint_every,
                   "Keep the checkpoints at multiples of K steps, and the first and last "
                   "(default: all)")
      ->check(kNonNegative);
  c.publish->add_option("--chunk-bytes", c.chunk_bytes, "Bytes per hashed chunk")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{4096}, int64_t{1} << 30));
  c.publish->add_option("--contract", c.contract,
                        "The tokenizer contract to publish (default: the one beside the data "
                        "manifest)");
  c.publish->add_option("--corpus-config", c.corpus_config,
                        "The corpus build's configuration: also commit to the training documents' "
                        "near-dedup band keys (for near-absence proofs)");
  c.publish->add_flag("--quiet", c.quiet, "No progress line");
  c.verify = c.publish->add_subcommand(
      "verify", "Check every byte of a bundle against its signed file list (exit 0 when it holds)");
  c.verify->add_option("--bundle", c.bundle, "The bundle: a folder or an https://, file:// URL")
      ->required();
  c.verify->add_option("--retries", c.retries, "Retries of a failed transfer")
      ->capture_default_str()
      ->check(CLI::Range(0, 20));
  c.verify->add_option("--trust-publisher", c.trust_publishers,
                       "Accept a publication signed by this key (a fingerprint or a .pub file) "
                       "although it is not the key that signed the run's attestation");
  c.verify->add_option("--trainer", c.trainer_key,
                       "The trainer's key (a fingerprint or a .pub file); refuse a bundle whose "
                       "run attestation it did not sign");
  c.verify->add_flag("--json", c.json, "Print the result as JSON");
}

namespace {

// The exit status of a verified bundle (docs/audit.md, "Exit status").
int VerifyExit(const audit::BundleCheck& r) {
  if (!r.problems.empty()) return 1;
  if (!r.unavailable.empty()) return kExitFetch;
  if (!r.binding.problem.empty()) return kExitPublisher;
  return 0;
}

int RunVerify(const PublishCommand& c) {
  fetch::SourceOptions so;
  so.retries = static_cast<int>(c.retries);
  std::vector<std::string> trusted;
  for (const std::string& k : c.trust_publishers) trusted.push_back(audit::KeyFingerprint(k));
  const std::string trainer = c.trainer_key.empty() ? "" : audit::KeyFingerprint(c.trainer_key);
  const audit::BundleCheck r = audit::VerifyBundle(c.bundle, so, trusted, trainer);
  if (c.json) {
    const nlohmann::json j = {
        {"ok", r.ok()},
        {"root", r.publication.root},
        {"signer", r.publication.signer},
        {"trainer",
         r.binding.trainer.empty() ? nlohmann::json() : nlohmann::json(r.binding.trainer)},
        {"binding", r.binding.binding},
        {"files", r.publication.files.size()},
        {"bytes", r.bytes_read},
        {"problems", r.problems},
        {"unavailable", r.unavailable}};
    std::printf("%s\n", j.dump(2).c_str());
    return VerifyExit(r);
  }
  for (const std::string& p : r.problems) std::printf("FAIL %s\n", p.c_str());
  for (const std::string& p : r.unavailable) std::printf("UNAVAILABLE %s\n", p.c_str());
  if (!r.binding.problem.empty()) std::printf("REFUSED %s\n", r.binding.problem.c_str());
  const char* verdict = !r.problems.empty()          ? "FAILED"
                        : !r.unavailable.empty()     ? "INCOMPLETE (bytes could not be fetched)"
                        : !r.binding.problem.empty() ? "REFUSED (not signed by the run's trainer)"
                                                     : "verified";
  std::printf("%s: %zu files, %.1f MB, signed by %s (%s); root %s: %s\n", c.bundle.c_str(),
              r.publication.files.size(), r.bytes_read / 1e6, r.publication.signer.c_str(),
              r.binding.binding.c_str(), r.publication.root.c_str(), verdict);
  return VerifyExit(r);
}

}  // namespace

int RunPublishCommand(const PublishCommand& c) {
  if (*c.verify) return RunVerify(c);
  if (c.run.empty() || c.out.empty() || c.key.empty()) {
    throw CLI::ValidationError("publish", "--run, --out and --key are required");
  }
  audit::PublishOptions o;
  o.run_dir = c.run, o.out_dir = c.out, o.key_path = c.key, o.quiet = c.quiet;
  o.checkpoint_every = c.checkpoint_every, o.chunk_bytes = static_cast<uint64_t>(c.chunk_bytes);
  o.contract = c.contract;
  TempDir tmp;
  if (!c.corpus_config.empty()) {
    // The band keys need the corpus layer's MinHash, which the publish library does not reach.
    const std::string manifest = train::RunDirectory(c.run).ReadInfo().data_manifest;
    std::string contract_path;
    const tok::LoadedContract lc =
        infer::FindRunTokenizer(c.contract, c.run, manifest, contract_path);
    const data::CanonicalStream stream(data::LoadManifest(manifest), data::StreamOptions{false});
    WriteFileAtomic(tmp / "bands",
                    corpus_glue::TrainingBandSet(stream, *lc.tokenizer, c.corpus_config));
    o.extra_files.push_back({tmp / "bands", data::kBandSetPath});
  }
  const audit::PublishSummary s = audit::Publish(o);
  const audit::Publication& p = s.publication;
  std::printf(
      "wrote %s: %zu files, %.1f MB, %zu checkpoints, %lld steps, tokenizer %s; "
      "signed by %s\nroot %s\n",
      c.out.c_str(), p.files.size(), s.bytes / 1e6, p.checkpoints.size(),
      static_cast<long long>(p.run.steps),
      p.tokenizer.empty() ? "not found (pass --contract)" : p.tokenizer.c_str(), p.signer.c_str(),
      p.root.c_str());
  return 0;
}

}  // namespace trail::cli
