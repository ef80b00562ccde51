#include "audit/publication.h"

#include <algorithm>
#include <filesystem>

#include "core/error.h"
#include "core/hash.h"
#include "core/json_read.h"
#include "core/signing.h"
#include "train/checkpoint.h"

namespace trail::audit {
namespace {

using nlohmann::json;

bool IsHex(const std::string& s, size_t n) {
  return s.size() == n && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// A relative, '/'-separated path without empty, "." or ".." parts.
bool SafeRelativePath(const std::string& p) {
  if (p.empty() || p.size() > 4096 || p.front() == '/' || p.back() == '/') return false;
  size_t start = 0;
  while (start <= p.size()) {
    const size_t end = std::min(p.find('/', start), p.size());
    const std::string part = p.substr(start, end - start);
    if (part.empty() || part == "." || part == ".." || part.find('\0') != std::string::npos ||
        part.find('\\') != std::string::npos) {
      return false;
    }
    start = end + 1;
  }
  return true;
}

fetch::RemoteFile ParseFile(const json& f, uint64_t chunk_bytes, const std::string& where) {
  fetch::RemoteFile r;
  r.path = f.at("path").get<std::string>();
  const std::string at = where + ": file '" + r.path + "'";
  TRAIL_CHECK(SafeRelativePath(r.path), at, ": not a relative path inside the bundle");
  r.size = JsonInteger<uint64_t>(f.at("size"), at + ": size");
  TRAIL_CHECK(r.size <= kMaxPublishedFileBytes, at, ": size ", r.size, " is out of bounds");
  r.sha256 = f.at("sha256").get<std::string>();
  TRAIL_CHECK(IsHex(r.sha256, 64), at, ": sha256 must be 64 lowercase hex digits");
  r.chunk_bytes = chunk_bytes;
  const json& chunks = f.at("chunks");
  const uint64_t want = (r.size + chunk_bytes - 1) / chunk_bytes;
  TRAIL_CHECK(chunks.is_array() && chunks.size() == want, at, ": ", want,
              " chunk hashes expected for ", r.size, " bytes");
  r.chunks.reserve(want);
  for (const json& c : chunks) {
    TRAIL_CHECK(c.is_string() && IsHex(c.get<std::string>(), 64), at, ": a chunk hash is not hex");
    r.chunks.push_back(c.get<std::string>());
  }
  return r;
}

Publication ParseStatement(const json& s, const std::string& where) {
  Publication p;
  TRAIL_CHECK(s.at("format") == kPublicationFormat, where, ": not a trail publication (format ",
              s.at("format").dump(), ")");
  const json& run = s.at("run");
  p.run = {run.at("genesis").get<std::string>(), run.at("final_chain").get<std::string>(),
           JsonInteger<int64_t>(run.at("steps"), where + ": run.steps")};
  TRAIL_CHECK(IsHex(p.run.genesis, 64) && IsHex(p.run.final_chain, 64), where,
              ": run.genesis and run.final_chain must be 64 hex digits");
  p.manifest = s.at("manifest").get<std::string>();
  p.chunk_bytes = JsonInteger<uint64_t>(s.at("chunk_bytes"), where + ": chunk_bytes");
  TRAIL_CHECK(p.chunk_bytes >= 4096 && p.chunk_bytes <= (1u << 30), where, ": chunk_bytes ",
              p.chunk_bytes, " is outside [4096, 2^30]");
  for (const json& c : s.at("checkpoints")) {
    p.checkpoints.push_back(JsonInteger<int64_t>(c, where + ": checkpoints"));
  }
  TRAIL_CHECK(std::is_sorted(p.checkpoints.begin(), p.checkpoints.end()), where,
              ": checkpoints must be ascending");
  const json& files = s.at("files");
  TRAIL_CHECK(files.is_array() && files.size() <= kMaxPublishedFiles, where,
              ": files must be an array of at most ", kMaxPublishedFiles);
  for (const json& f : files) p.files.push_back(ParseFile(f, p.chunk_bytes, where));
  for (size_t i = 1; i < p.files.size(); ++i) {
    TRAIL_CHECK(p.files[i - 1].path < p.files[i].path, where, ": files must be sorted by path ",
                "and distinct ('", p.files[i].path, "')");
  }
  TRAIL_CHECK(p.Find(p.manifest) != nullptr, where, ": the manifest '", p.manifest,
              "' is not among the files");
  p.tokenizer = s.at("tokenizer").get<std::string>();
  TRAIL_CHECK(p.tokenizer.empty() || p.Find(p.tokenizer) != nullptr, where,
              ": the tokenizer contract '", p.tokenizer, "' is not among the files");
  return p;
}

}  // namespace

const fetch::RemoteFile* Publication::Find(const std::string& path) const {
  auto it =
      std::lower_bound(files.begin(), files.end(), path,
                       [](const fetch::RemoteFile& f, const std::string& p) { return f.path < p; });
  return it != files.end() && it->path == path ? &*it : nullptr;
}

const fetch::RemoteFile& Publication::Get(const std::string& path) const {
  const fetch::RemoteFile* f = Find(path);
  TRAIL_CHECK(f != nullptr, "the publication lists no file '", path, "'");
  return *f;
}

uint64_t Publication::total_bytes() const {
  uint64_t n = 0;
  for (const fetch::RemoteFile& f : files) n += f.size;
  return n;
}

Publication ParsePublication(const std::string& text, const std::string& where) {
  TRAIL_CHECK(text.size() <= kMaxPublicationBytes, where, ": ", text.size(),
              " bytes is beyond the limit of ", kMaxPublicationBytes);
  Publication p;
  try {
    const json doc = json::parse(text);
    const json& statement = doc.at("statement");
    p = ParseStatement(statement, where);
    const std::string message = std::string(kPublicationFormat) + "\n" + statement.dump();
    const SigningKey key =
        SigningKey::FromPublicHex(doc.at("public_key").get<std::string>(), where + ": public_key");
    if (!key.Verify(message, doc.at("signature").get<std::string>())) {
      throw PublisherError(where + ": the signature does not verify: the file list is not the " +
                           "one the key signed");
    }
    p.signer = key.fingerprint();
    p.root = ToHex(Sha256({reinterpret_cast<const uint8_t*>(message.data()), message.size()}));
  } catch (const json::exception& e) {
    TRAIL_FAIL(where, ": malformed publication: ", e.what());
  }
  return p;
}

PublisherBinding BindPublisher(const Publication& p, const std::string& attestation,
                               const std::vector<std::string>& trusted,
                               const std::string& trainer_key) {
  PublisherBinding b;
  b.signer = p.signer;
  if (!attestation.empty()) {
    try {
      const json key = json::parse(attestation).at("public_key");
      if (!key.is_null()) {
        b.trainer =
            SigningKey::FromPublicHex(key.get<std::string>(), "run/attestation.json").fingerprint();
      }
    } catch (const json::exception& e) {
      TRAIL_FAIL("run/attestation.json: malformed attestation: ", e.what());
    }
  }
  const bool is_trusted = std::find(trusted.begin(), trusted.end(), b.signer) != trusted.end();
  if (!trainer_key.empty() && b.trainer != trainer_key) {
    b.binding = "refused";
    b.problem = StrCat("run/attestation.json is ",
                       b.trainer.empty() ? "unsigned" : "signed by key " + b.trainer,
                       ", not by the trainer's key ", trainer_key,
                       " (--trainer): this is not the trainer's run as published");
  } else if (b.trainer.empty()) {
    b.binding = "unsigned run";
  } else if (b.trainer == b.signer) {
    b.binding = "trainer";
  } else if (is_trusted) {
    b.binding = "trusted";
  } else {
    b.binding = "refused";
    b.problem = StrCat("publication.json is signed by key ", b.signer,
                       ", not by the run's trainer (key ", b.trainer,
                       ", which signed run/attestation.json): another publisher's file list "
                       "cannot stand for the trainer's. Audit the trainer's own publication, or "
                       "pass --trust-publisher ",
                       b.signer.substr(0, 16), "... to accept this publisher");
  }
  return b;
}

std::string KeyFingerprint(const std::string& key_or_path) {
  if (IsHex(key_or_path, 64)) return key_or_path;
  TRAIL_CHECK(std::filesystem::exists(key_or_path), "--trust-publisher ", key_or_path,
              ": neither a key fingerprint (64 hex digits) nor a key file");
  return SigningKey::Load(key_or_path).fingerprint();
}

std::string BundleShardPath(const data::ShardRef& s) {
  return "data/" + std::filesystem::path(s.path).lexically_normal().generic_string();
}

std::string BundleCheckpointPath(int64_t step, const std::string& file) {
  return train::CheckpointDir("run", step) + "/" + file;
}

}  // namespace trail::audit
