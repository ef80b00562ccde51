#include "audit/publish.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "audit/published_run.h"
#include "core/error.h"
#include "core/file_util.h"
#include "core/hash.h"
#include "core/signing.h"
#include "data/document_set.h"
#include "data/manifest.h"
#include "data/stream.h"
#include "tokenizer/contract.h"
#include "train/checkpoint.h"
#include "train/run_dir.h"

namespace trail::audit {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Entry {
  std::string source, path;  // the file on disk, and its path in the bundle
};

// The checkpoints kept: multiples of K plus the first and the last (all when K is 0).
std::vector<int64_t> KeptCheckpoints(const std::vector<int64_t>& all, int64_t every) {
  std::vector<int64_t> kept;
  for (size_t i = 0; i < all.size(); ++i) {
    if (every <= 0 || all[i] % every == 0 || i == 0 || i + 1 == all.size()) kept.push_back(all[i]);
  }
  return kept;
}

void AddRunFiles(const std::string& run_dir, const std::vector<int64_t>& kept,
                 std::vector<Entry>& out) {
  for (const char* f : {"run.json", "recipe.toml", "manifest.json", "base.import.json",
                        "trajectory.jsonl", "metrics.jsonl", "attestation.json"}) {
    if (fs::exists(run_dir + "/" + f)) out.push_back({run_dir + "/" + f, std::string("run/") + f});
  }
  if (fs::is_directory(run_dir + "/traces")) {
    for (const auto& e : fs::directory_iterator(run_dir + "/traces")) {
      const std::string name = e.path().filename().string();
      if (e.is_regular_file() &&
          (e.path().extension() == ".trace" || name.ends_with(".trace.sig"))) {
        out.push_back({e.path().string(), "run/traces/" + e.path().filename().string()});
      }
    }
  }
  for (int64_t step : kept) {
    for (const char* f : train::kCheckpointFiles) {
      const std::string src = train::CheckpointDir(run_dir, step) + "/" + f;
      if (fs::exists(src)) out.push_back({src, BundleCheckpointPath(step, f)});
    }
  }
}

void AddDataFiles(const std::string& manifest_path, std::vector<Entry>& out) {
  out.push_back({manifest_path, "data/manifest.json"});
  const data::Manifest m = data::LoadManifest(manifest_path);
  for (const data::ShardRef* s : ManifestShards(m)) {
    const fs::path norm = fs::path(s->path).lexically_normal();
    TRAIL_CHECK(!norm.is_absolute() && !norm.empty() && *norm.begin() != "..", manifest_path,
                ": shard '", s->path, "' is not inside the manifest's folder; publish needs ",
                "shard paths relative to the manifest (rebuild it with them)");
    out.push_back({m.ShardPath(*s), BundleShardPath(*s)});
  }
}

// The tokenizer contract (given, else the .json file beside the manifest with the manifest's
// contract hash) and its artifact, at data/<name> and data/<artifact>; "" when none is found.
std::string AddTokenizerFiles(const std::string& manifest_path, const std::string& given,
                              std::vector<Entry>& out) {
  const data::Manifest m = data::LoadManifest(manifest_path);
  auto is_contract = [&](const fs::path& p) {
    const Digest d = Sha256OfFile(p.string());
    return std::equal(d.begin(), d.end(), m.tokenizer.contract.begin());
  };
  fs::path contract = given;
  if (contract.empty()) {
    std::error_code ec;
    std::vector<fs::path> candidates;
    for (const auto& e : fs::directory_iterator(fs::path(manifest_path).parent_path(), ec)) {
      if (e.is_regular_file() && e.path().extension() == ".json") candidates.push_back(e.path());
    }
    std::sort(candidates.begin(), candidates.end());
    for (const fs::path& c : candidates) {
      if (contract.empty() && is_contract(c)) contract = c;
    }
    if (contract.empty()) return "";
  }
  TRAIL_CHECK(fs::exists(contract) && is_contract(contract), contract.string(),
              ": not the tokenizer contract the data manifest records");
  const tok::LoadedContract lc = tok::LoadContract(contract.string());  // checks the artifact
  const fs::path artifact = fs::path(lc.contract.artifact).lexically_normal();
  TRAIL_CHECK(!artifact.is_absolute() && *artifact.begin() != "..", contract.string(),
              ": its artifact '", lc.contract.artifact, "' is not inside its folder");
  const std::string name = "data/" + contract.filename().string();
  out.push_back({contract.string(), name});
  out.push_back(
      {(contract.parent_path() / artifact).string(), "data/" + artifact.generic_string()});
  return name;
}

// Places `src` at `dst` (a hard link when the file system allows, else a copy) and hashes it.
fetch::RemoteFile PlaceAndHash(const Entry& e, const std::string& out_dir, uint64_t chunk_bytes) {
  const fs::path dst = fs::path(out_dir) / e.path;
  fs::create_directories(dst.parent_path());
  std::error_code ec;
  fs::create_hard_link(e.source, dst, ec);
  if (ec) fs::copy_file(e.source, dst, fs::copy_options::overwrite_existing);
  fetch::RemoteFile f;
  f.path = e.path, f.chunk_bytes = chunk_bytes;
  std::ifstream in(dst, std::ios::binary);
  TRAIL_CHECK(in.good(), dst.string(), ": cannot read");
  Sha256Hasher whole;
  std::string buf(chunk_bytes, '\0');
  while (in.read(buf.data(), static_cast<std::streamsize>(chunk_bytes)) || in.gcount() > 0) {
    const auto n = static_cast<size_t>(in.gcount());
    const auto* p = reinterpret_cast<const uint8_t*>(buf.data());
    whole.Update(p, n);
    f.chunks.push_back(ToHex(Sha256({p, n})));
    f.size += n;
  }
  f.sha256 = ToHex(whole.Finish());
  return f;
}

json StatementJson(const Publication& p) {
  json files = json::array();
  for (const fetch::RemoteFile& f : p.files) {
    files.push_back(
        {{"path", f.path}, {"size", f.size}, {"sha256", f.sha256}, {"chunks", f.chunks}});
  }
  return {
      {"format", kPublicationFormat},
      {"run",
       {{"genesis", p.run.genesis}, {"final_chain", p.run.final_chain}, {"steps", p.run.steps}}},
      {"manifest", p.manifest},
      {"tokenizer", p.tokenizer},
      {"checkpoints", p.checkpoints},
      {"chunk_bytes", p.chunk_bytes},
      {"files", files}};
}

}  // namespace

PublishSummary Publish(const PublishOptions& o) {
  TRAIL_CHECK(o.chunk_bytes >= 4096 && o.chunk_bytes <= (1u << 30),
              "publish: the chunk size must be in [4096, 2^30] bytes");
  TRAIL_CHECK(!fs::exists(o.out_dir) || fs::is_empty(o.out_dir), o.out_dir,
              " exists and is not empty: publish into a new folder (one without ", kPublicationFile,
              " is an unfinished publish: remove it and publish again)");
  const SigningKey key = SigningKey::Load(o.key_path);
  TRAIL_CHECK(key.has_private(), o.key_path, " holds no private key: sign with the trainer's .key");
  const train::RunCheck check = train::RunDirectory(o.run_dir).Verify();
  TRAIL_CHECK(check.ok(), o.run_dir, " does not verify, so it cannot be published: ",
              check.problems.empty() ? "" : check.problems.front());
  const PublishedRun run = OpenPublishedRun(o.run_dir);
  TRAIL_CHECK(run.trajectory_problem.empty() && run.steps() > 0, o.run_dir,
              ": the trajectory must chain and hold a step: ", run.trajectory_problem);
  Publication p;
  p.run = {ToHex(run.info.genesis), run.final_chain(), run.steps()};
  p.manifest = "data/manifest.json";
  p.chunk_bytes = o.chunk_bytes;
  p.checkpoints = KeptCheckpoints(train::ListCheckpoints(o.run_dir), o.checkpoint_every);
  std::vector<Entry> entries;
  AddRunFiles(o.run_dir, p.checkpoints, entries);
  const std::string manifest = ManifestForReplay(run, "");
  AddDataFiles(manifest, entries);
  p.tokenizer = AddTokenizerFiles(manifest, o.contract, entries);
  // The committed set of training documents (absence proofs, audit/data_proof.h), written
  // beside the bundle and placed like the other files.
  fs::create_directories(o.out_dir);
  const std::string set_file = o.out_dir + "/.training-documents.tmp";
  {
    const data::CanonicalStream stream(data::LoadManifest(manifest), data::StreamOptions{false});
    WriteFileAtomic(set_file, data::DocumentSetBytes(data::TrainingDocumentHashes(stream)));
  }
  entries.push_back({set_file, data::kDocumentSetPath});
  for (const auto& [file, path] : o.extra_files) entries.push_back({file, path});
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.path < b.path || (a.path == b.path && a.source < b.source);
  });
  // A shard listed twice (say, for training and validation) is one file.
  entries.erase(std::unique(entries.begin(), entries.end(),
                            [](const Entry& a, const Entry& b) {
                              return a.path == b.path && a.source == b.source;
                            }),
                entries.end());
  PublishSummary out;
  const bool tty = !o.quiet && ::isatty(STDERR_FILENO);
  for (size_t i = 0; i < entries.size(); ++i) {
    TRAIL_CHECK(i == 0 || entries[i].path != entries[i - 1].path, "publish: two different files ",
                "would be ", entries[i].path, " (", entries[i - 1].source, " and ",
                entries[i].source, ")");
    p.files.push_back(PlaceAndHash(entries[i], o.out_dir, o.chunk_bytes));
    out.bytes += p.files.back().size;
    if (tty) {
      std::fprintf(stderr, "\rpublish: %zu of %zu files, %.1f MB", i + 1, entries.size(),
                   out.bytes / 1e6);
    }
  }
  if (tty) std::fprintf(stderr, "\n");
  fs::remove(set_file);
  const json statement = StatementJson(p);
  const json doc = {
      {"statement", statement},
      {"public_key", key.public_hex()},
      {"signature", key.Sign(std::string(kPublicationFormat) + "\n" + statement.dump())}};
  WriteFileAtomic(o.out_dir + "/" + kPublicationFile, doc.dump(1) + "\n");
  out.publication = ParsePublication(ReadFileToString(o.out_dir + "/" + kPublicationFile),
                                     o.out_dir + "/" + kPublicationFile);
  return out;
}

BundleCheck VerifyBundle(const std::string& location, const fetch::SourceOptions& so,
                         const std::vector<std::string>& trusted, const std::string& trainer_key) {
  const std::unique_ptr<fetch::Source> src = fetch::OpenSource(location, so);
  BundleCheck c;
  c.publication = ParsePublication(src->ReadSmall(kPublicationFile, kMaxPublicationBytes),
                                   src->Describe(kPublicationFile));
  std::string attestation;  // run/attestation.json, once its bytes verified
  for (const fetch::RemoteFile& f : c.publication.files) {
    const bool keep = f.path == "run/attestation.json";
    std::string kept;
    try {
      Sha256Hasher whole;
      for (uint64_t k = 0; k < f.num_chunks(); ++k) {
        const std::string bytes =
            src->Read(f.path, f.ChunkBegin(k), f.ChunkEnd(k) - f.ChunkBegin(k), f.size);
        c.bytes_read += bytes.size();
        whole.Update(bytes.data(), bytes.size());
        const std::string problem = f.CheckChunk(k, bytes);
        if (!problem.empty()) {
          throw fetch::FetchError(src->Describe(f.path) + ": " + problem,
                                  fetch::FetchError::Kind::kNotPublished);
        }
        if (keep) kept += bytes;
      }
      if (ToHex(whole.Finish()) != f.sha256) {
        c.problems.push_back(src->Describe(f.path) + ": SHA-256 is not the published one");
      } else if (keep) {
        attestation = std::move(kept);
      }
    } catch (const fetch::FetchError& e) {
      (e.kind() == fetch::FetchError::Kind::kNotPublished ? c.problems : c.unavailable)
          .push_back(e.what());
    }
  }
  c.binding = BindPublisher(c.publication, attestation, trusted, trainer_key);
  return c;
}

}  // namespace trail::audit
