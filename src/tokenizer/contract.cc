#include "tokenizer/contract.h"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "core/error.h"
#include "core/file_util.h"
#include "core/json_read.h"
#include "tokenizer/loaders.h"
#include "tokenizer/unicode.h"

namespace trail::tok {
namespace {

using Json = nlohmann::ordered_json;

constexpr char kFormat[] = "trail.tokenizer-contract.v2";
constexpr char kFormatV1[] = "trail.tokenizer-contract.v1";

// The format line and the Unicode version are checked before anything else: a contract written
// under other character classes may split text differently, so every count built on it differs.
void CheckFormatAndUnicode(const Json& j, const std::string& path) {
  const std::string format = j.value("format", "");
  TRAIL_CHECK(format != kFormatV1, path,
              ": a trail.tokenizer-contract.v1, written when pre-tokenizer classes came from "
              "PCRE2's Unicode 14 tables; this trail pins them to Unicode ",
              UnicodeVersion(),
              ", which splits text holding newer characters differently. "
              "Write the contract again with `trail tokenizer contract` (the token shards built "
              "under the old contract must be re-tokenized).");
  TRAIL_CHECK(format == kFormat, path, ": not a ", kFormat, " (format '", format, "')");
  const auto it = j.find("unicode_version");
  TRAIL_CHECK(it != j.end() && it->is_string(), path, ": no \"unicode_version\"");
  const std::string version = it->get<std::string>();
  TRAIL_CHECK(version == UnicodeVersion(), path, ": written under Unicode ", version,
              " but this trail's character classes are Unicode ", UnicodeVersion(),
              "; the pre-tokenizer could split text differently. Use a trail built with Unicode ",
              version, " or write the contract again with `trail tokenizer contract`.");
}

std::string FileSha256(const std::string& path) { return ToHex(Sha256OfFile(path)); }

std::string KindOf(const std::string& path) {
  const std::filesystem::path p(path);
  if (p.extension() == ".tiktoken") return "tiktoken:" + p.stem().string();
  if (p.filename() == "encoder.json" || std::filesystem::is_directory(p)) return "gpt2";
  return "tokenizer.json";
}

int64_t IdOf(const Tokenizer& t, const std::string& special, const char* role) {
  if (special.empty()) return -1;
  const int64_t id = t.SpecialId(special);
  TRAIL_CHECK(id >= 0, "the tokenizer has no special token '", special, "' (for ", role, ")");
  return id;
}

}  // namespace

TokenizerContract MakeContract(const std::string& artifact_path, const std::string& contract_dir,
                               const std::string& bos, const std::string& eos,
                               const std::string& pad, const std::string& sample_path) {
  const auto t = LoadTokenizer(artifact_path);
  TokenizerContract c;
  c.artifact = std::filesystem::relative(
                   std::filesystem::absolute(artifact_path),
                   std::filesystem::absolute(contract_dir.empty() ? "." : contract_dir))
                   .string();
  c.artifact_sha256 = FileSha256(artifact_path);
  c.kind = KindOf(artifact_path);
  c.vocab_size = t->vocab_size();
  c.bos_id = IdOf(*t, bos, "bos");
  c.eos_id = IdOf(*t, eos, "eos");
  c.pad_id = IdOf(*t, pad, "pad");
  c.pattern = t->pattern();
  c.unicode_version = std::string(UnicodeVersion());
  c.normalization = NormalizationName(t->normalization());
  if (!sample_path.empty()) {
    const std::string text = ReadFileToString(sample_path);
    std::vector<uint32_t> ids;
    t->EncodeOrdinary(text, ids);
    c.sample = std::filesystem::path(sample_path).filename().string();
    c.sample_sha256 = ToHex(Sha256({reinterpret_cast<const uint8_t*>(text.data()), text.size()}));
    c.sample_bytes = text.size();
    c.sample_tokens = ids.size();
    c.bytes_per_token = ids.empty() ? 0 : double(text.size()) / double(ids.size());
  }
  return c;
}

std::string ContractToJson(const TokenizerContract& c) {
  Json j;
  j["format"] = kFormat;
  j["unicode_version"] = c.unicode_version;
  j["artifact"] = Json{{"path", c.artifact}, {"sha256", c.artifact_sha256}, {"kind", c.kind}};
  j["vocab_size"] = c.vocab_size;
  j["bos_id"] = c.bos_id;
  j["eos_id"] = c.eos_id;
  j["pad_id"] = c.pad_id;
  j["normalization"] = c.normalization;
  j["byte_fallback"] = c.byte_fallback;
  j["pretokenizer_pattern"] = c.pattern;
  j["bytes_per_token"] = Json{{"value", c.bytes_per_token},
                              {"sample", c.sample},
                              {"sample_sha256", c.sample_sha256},
                              {"sample_bytes", c.sample_bytes},
                              {"sample_tokens", c.sample_tokens}};
  return j.dump(2) + "\n";
}

LoadedContract LoadContract(const std::string& path) {
  TRAIL_CHECK(std::filesystem::exists(path), path, ": tokenizer contract not found");
  const std::string text = ReadFileToString(path);
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::exception& e) {
    TRAIL_FAIL(path, ": not valid JSON: ", e.what());
  }
  TRAIL_CHECK(j.is_object(), path, ": a contract is a JSON object");
  CheckFormatAndUnicode(j, path);
  const std::set<std::string> known = {
      "format",         "unicode_version", "artifact",      "vocab_size",    "bos_id",
      "eos_id",         "pad_id",          "normalization", "byte_fallback", "pretokenizer_pattern",
      "bytes_per_token"};
  for (auto it = j.begin(); it != j.end(); ++it) {
    TRAIL_CHECK(known.count(it.key()) == 1, path, ": unknown key '", it.key(), "'");
  }
  LoadedContract out;
  TokenizerContract& c = out.contract;
  try {
    c.unicode_version = j.at("unicode_version").get<std::string>();
    c.artifact = j.at("artifact").at("path").get<std::string>();
    c.artifact_sha256 = j.at("artifact").at("sha256").get<std::string>();
    c.kind = j.at("artifact").at("kind").get<std::string>();
    c.vocab_size = JsonInteger<uint32_t>(j.at("vocab_size"), path + ": vocab_size");
    c.bos_id = JsonInteger<int64_t>(j.at("bos_id"), path + ": bos_id");
    c.eos_id = JsonInteger<int64_t>(j.at("eos_id"), path + ": eos_id");
    c.pad_id = JsonInteger<int64_t>(j.at("pad_id"), path + ": pad_id");
    c.normalization = j.at("normalization").get<std::string>();
    c.byte_fallback = j.at("byte_fallback").get<bool>();
    c.pattern = j.at("pretokenizer_pattern").get<std::string>();
    const Json& m = j.at("bytes_per_token");
    c.bytes_per_token = m.at("value").get<double>();
    c.sample = m.at("sample").get<std::string>();
    c.sample_sha256 = m.at("sample_sha256").get<std::string>();
    c.sample_bytes = JsonInteger<uint64_t>(m.at("sample_bytes"), path + ": sample_bytes");
    c.sample_tokens = JsonInteger<uint64_t>(m.at("sample_tokens"), path + ": sample_tokens");
  } catch (const Json::exception& e) {
    TRAIL_FAIL(path, ": malformed contract: ", e.what());
  }
  const Normalization norm = ParseNormalization(c.normalization, path);
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  const std::string artifact =
      (std::filesystem::path(c.artifact).is_absolute() ? std::filesystem::path(c.artifact)
                                                       : dir / c.artifact)
          .string();
  TRAIL_CHECK(std::filesystem::exists(artifact), path, ": tokenizer artifact ", artifact,
              " not found");
  const std::string got = FileSha256(artifact);
  TRAIL_CHECK(got == c.artifact_sha256, path, ": tokenizer artifact ", artifact, " has SHA-256 ",
              got, " but the contract pins ", c.artifact_sha256);
  out.tokenizer = LoadTokenizer(artifact);
  const Tokenizer& t = *out.tokenizer;
  TRAIL_CHECK(
      t.vocab_size() == c.vocab_size && t.pattern() == c.pattern && t.normalization() == norm, path,
      ": the artifact's vocabulary size, pattern or normalization differs from the "
      "contract");
  for (int64_t id : {c.bos_id, c.eos_id, c.pad_id}) {
    TRAIL_CHECK(id < static_cast<int64_t>(c.vocab_size), path, ": special id ", id,
                " outside the vocabulary");
  }
  out.hash = Sha256({reinterpret_cast<const uint8_t*>(text.data()), text.size()});
  return out;
}

}  // namespace trail::tok
