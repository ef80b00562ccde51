#include "tokenizer/loaders.h"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "core/file_util.h"
#include "core/hash.h"
#include "core/utf8.h"
#include "tokenizer/patterns.h"

namespace trail::tok {
namespace {

using Json = nlohmann::ordered_json;
// Large vocabularies parse far faster into std::map-backed objects (ordered_json inserts in
// linear time per key).
using ReadJson = nlohmann::json;

const std::vector<TiktokenEncoding>& Registry() {
  static const std::vector<TiktokenEncoding> r = {
      {"r50k_base",
       kGpt2Pattern,
       "r50k_base.tiktoken",
       "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
       {{"<|endoftext|>", 50256}},
       50256},
      {"p50k_base",
       kGpt2Pattern,
       "p50k_base.tiktoken",
       "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
       {{"<|endoftext|>", 50256}},
       50280},
      {"p50k_edit",
       kGpt2Pattern,
       "p50k_base.tiktoken",
       "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
       {{"<|endoftext|>", 50256},
        {"<|fim_prefix|>", 50281},
        {"<|fim_middle|>", 50282},
        {"<|fim_suffix|>", 50283}},
       50280},
      {"cl100k_base",
       kCl100kPattern,
       "cl100k_base.tiktoken",
       "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
       {{"<|endoftext|>", 100257},
        {"<|fim_prefix|>", 100258},
        {"<|fim_middle|>", 100259},
        {"<|fim_suffix|>", 100260},
        {"<|endofprompt|>", 100276}},
       100256},
      {"o200k_base",
       kO200kPattern,
       "o200k_base.tiktoken",
       "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
       {{"<|endoftext|>", 199999}, {"<|endofprompt|>", 200018}},
       199998},
  };
  return r;
}

int Base64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

bool DecodeBase64(std::string_view in, std::string& out) {
  out.clear();
  if (in.empty() || in.size() % 4 != 0) return false;
  for (size_t i = 0; i < in.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = in[i + k];
      if (c == '=' && i + 4 == in.size() && k >= 2) {
        v[k] = 0;
        ++pad;
      } else {
        if (pad > 0) return false;
        v[k] = Base64Value(c);
        if (v[k] < 0) return false;
      }
    }
    const uint32_t w = (v[0] << 18) | (v[1] << 12) | (v[2] << 6) | v[3];
    out += static_cast<char>(w >> 16);
    if (pad < 2) out += static_cast<char>((w >> 8) & 0xFF);
    if (pad < 1) out += static_cast<char>(w & 0xFF);
  }
  return true;
}

// GPT-2's byte <-> printable code point table.
const std::vector<uint32_t>& ByteToCodePoint() {
  static const std::vector<uint32_t> table = [] {
    std::vector<uint32_t> t(256);
    uint32_t extra = 0;
    for (uint32_t b = 0; b < 256; ++b) {
      const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174);
      t[b] = printable ? b : 256 + extra++;
    }
    return t;
  }();
  return table;
}

std::string Sha256File(const std::string& path) {
  MappedFile f(path);
  return ToHex(Sha256({f.data(), f.size()}));
}

ReadJson ParseJsonFile(const std::string& path) {
  TRAIL_CHECK(std::filesystem::exists(path), path, ": not found");
  try {
    return ReadJson::parse(ReadFileToString(path));
  } catch (const ReadJson::exception& e) {
    TRAIL_FAIL(path, ": not valid JSON (truncated or corrupt?): ", e.what());
  }
}

}  // namespace

std::string BytesToByteLevel(std::string_view bytes) {
  std::string out;
  for (unsigned char b : bytes) AppendUtf8(ByteToCodePoint()[b], out);
  return out;
}

std::string ByteLevelToBytes(std::string_view text, const std::string& where) {
  static const std::vector<int> inverse = [] {
    std::vector<int> inv(512, -1);
    for (uint32_t b = 0; b < 256; ++b) inv[ByteToCodePoint()[b]] = static_cast<int>(b);
    return inv;
  }();
  std::string out;
  const size_t valid = ValidUtf8Prefix(text);
  TRAIL_CHECK(valid == text.size(), where, ": token is not valid UTF-8");
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = text[i];
    uint32_t cp;
    size_t len;
    if (c < 0x80) {
      cp = c;
      len = 1;
    } else if (c < 0xE0) {
      cp = ((c & 0x1F) << 6) | (text[i + 1] & 0x3F);
      len = 2;
    } else {
      cp = 0x10000;  // outside the table
      len = c < 0xF0 ? 3 : 4;
    }
    TRAIL_CHECK(cp < 512 && inverse[cp] >= 0, where, ": token '", text,
                "' has a character outside GPT-2's byte-level alphabet");
    out += static_cast<char>(inverse[cp]);
    i += len;
  }
  return out;
}

const TiktokenEncoding* FindTiktokenEncoding(const std::string& name) {
  for (const TiktokenEncoding& e : Registry()) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

std::unique_ptr<Tokenizer> LoadTiktoken(const std::string& name, const std::string& path,
                                        bool verify_pin) {
  const TiktokenEncoding* enc = FindTiktokenEncoding(name);
  TRAIL_CHECK(enc != nullptr, "unknown tiktoken encoding '", name,
              "' (r50k_base, p50k_base, p50k_edit, cl100k_base, o200k_base)");
  TRAIL_CHECK(std::filesystem::exists(path), path, ": rank file not found");
  if (verify_pin) {
    const std::string got = Sha256File(path);
    TRAIL_CHECK(got == enc->sha256, path, ": SHA-256 ", got, " does not match the pin ",
                enc->sha256, " of ", name, " (a different or corrupted rank file)");
  }
  const std::string text = ReadFileToString(path);
  std::vector<std::string> tokens;
  std::string bytes;
  size_t line_no = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = text.size();
    const std::string_view line(text.data() + pos, eol - pos);
    pos = eol + 1;
    ++line_no;
    if (line.empty()) continue;
    const size_t sp = line.find(' ');
    TRAIL_CHECK(sp != std::string_view::npos, path, ":", line_no, ": expected '<base64> <rank>'");
    TRAIL_CHECK(DecodeBase64(line.substr(0, sp), bytes) && !bytes.empty(), path, ":", line_no,
                ": bad base64 token");
    uint64_t rank = 0;
    const std::string_view r = line.substr(sp + 1);
    TRAIL_CHECK(
        !r.empty() && r.size() < 10 && r.find_first_not_of("0123456789") == std::string_view::npos,
        path, ":", line_no, ": bad rank '", r, "'");
    for (char c : r) rank = rank * 10 + (c - '0');
    // The published files number their ranks below the vocabulary's size (a special token may
    // sit in a gap): a larger rank is damage, refused before it can size the table.
    const uint64_t vocab = enc->ranks + enc->specials.size();
    TRAIL_CHECK(rank < vocab, path, ":", line_no, ": rank ", rank, " beyond ", name,
                "'s vocabulary of ", vocab);
    if (tokens.size() <= rank) tokens.resize(rank + 1);
    TRAIL_CHECK(tokens[rank].empty(), path, ":", line_no, ": rank ", rank, " given twice");
    tokens[rank] = bytes;
  }
  const size_t count = static_cast<size_t>(
      std::count_if(tokens.begin(), tokens.end(), [](const std::string& t) { return !t.empty(); }));
  TRAIL_CHECK(count == enc->ranks, path, ": ", name, " has ", enc->ranks, " ranks, the file gives ",
              count, " (truncated or another encoding's file?)");
  BpeModel model(std::move(tokens), /*ignore_merges=*/true);
  model.AddMergesFromRanks();
  model.Finalize();
  return std::make_unique<Tokenizer>(name, enc->pattern, std::move(model), enc->specials);
}

namespace {

// The loaders proper; the public functions below turn a JSON value of the wrong type (which
// nlohmann reports with its own exception) into an error that names the file.
std::unique_ptr<Tokenizer> Gpt2FromFiles(const std::string& encoder_json,
                                         const std::string& vocab_bpe) {
  const ReadJson enc = ParseJsonFile(encoder_json);
  TRAIL_CHECK(enc.is_object() && !enc.empty(), encoder_json, ": expected an object token -> id");
  std::vector<std::string> tokens;
  std::vector<SpecialToken> specials;
  for (auto it = enc.begin(); it != enc.end(); ++it) {
    TRAIL_CHECK(it.value().is_number_unsigned(), encoder_json, ": id of '", it.key(),
                "' is not a non-negative integer");
    // Ids are below the number of entries (the published file numbers them 0..n-1), which
    // bounds the table by the file's size.
    TRAIL_CHECK(it.value().get<uint64_t>() < enc.size(), encoder_json, ": id of '", it.key(),
                "' is beyond the ", enc.size(), " entries");
    const uint32_t id = it.value().get<uint32_t>();
    if (tokens.size() <= id) tokens.resize(id + 1);
    if (it.key() == "<|endoftext|>") {
      specials.push_back({it.key(), id});
      continue;
    }
    TRAIL_CHECK(tokens[id].empty(), encoder_json, ": id ", id, " given twice");
    tokens[id] = ByteLevelToBytes(it.key(), encoder_json);
  }
  // Special ids live outside the BPE model's byte tokens.
  std::unordered_map<std::string, uint32_t> level_ids;
  for (auto it = enc.begin(); it != enc.end(); ++it)
    level_ids[it.key()] = it.value().get<uint32_t>();
  BpeModel model(std::move(tokens), /*ignore_merges=*/false);
  std::ifstream in(vocab_bpe);
  TRAIL_CHECK(in.good(), vocab_bpe, ": cannot open");
  std::string line;
  uint32_t rank = 0;
  for (size_t line_no = 1; std::getline(in, line); ++line_no) {
    if (line_no == 1 && line.rfind("#version", 0) == 0) continue;
    if (line.empty()) continue;
    const size_t sp = line.find(' ');
    TRAIL_CHECK(sp != std::string::npos && line.find(' ', sp + 1) == std::string::npos, vocab_bpe,
                ":", line_no, ": expected two tokens separated by one space");
    const std::string a = line.substr(0, sp), b = line.substr(sp + 1);
    auto ia = level_ids.find(a), ib = level_ids.find(b), im = level_ids.find(a + b);
    TRAIL_CHECK(ia != level_ids.end() && ib != level_ids.end() && im != level_ids.end(), vocab_bpe,
                ":", line_no, ": merge '", line, "' uses a token missing from ", encoder_json);
    model.AddMerge(ia->second, ib->second, rank++, im->second);
  }
  TRAIL_CHECK(rank > 0, vocab_bpe, ": no merges (truncated?)");
  model.Finalize();
  return std::make_unique<Tokenizer>("gpt2", kGpt2Pattern, std::move(model), specials);
}

// obj[key] for reading: a null value when obj is not an object or lacks the key (nlohmann's
// const operator[] asserts on a missing key).
const ReadJson& Field(const ReadJson& obj, const char* key) {
  static const ReadJson kNull;
  if (!obj.is_object()) return kNull;
  const auto it = obj.find(key);
  return it == obj.end() ? kNull : *it;
}

std::unique_ptr<Tokenizer> HfFromFile(const std::string& path) {
  const ReadJson j = ParseJsonFile(path);
  TRAIL_CHECK(j.is_object() && j.contains("model"), path, ": not a tokenizer.json (no model)");
  const ReadJson& m = Field(j, "model");
  TRAIL_CHECK(m.value("type", "") == "BPE", path, ": model type '", m.value("type", ""),
              "' is not supported (byte-level BPE only)");
  TRAIL_CHECK(!m.value("byte_fallback", false), path, ": byte_fallback BPE is not supported");
  Normalization normalization = Normalization::kNone;
  if (!Field(j, "normalizer").is_null()) {
    TRAIL_CHECK(Field(j, "normalizer").value("type", "") == "NFC", path, ": normalizer ",
                Field(j, "normalizer").dump(), " is not supported (none or NFC)");
    normalization = Normalization::kNfc;
  }
  // Pre-tokenizer: Sequence[Split(Regex, Isolated), ByteLevel(use_regex=false)] or
  // ByteLevel(use_regex=true) (GPT-2's pattern).
  std::string pattern;
  const ReadJson& pre = Field(j, "pre_tokenizer");
  auto byte_level = [&](const ReadJson& p, bool want_regex) {
    TRAIL_CHECK(p.value("type", "") == "ByteLevel" && !p.value("add_prefix_space", false) &&
                    p.value("use_regex", true) == want_regex,
                path, ": unsupported pre_tokenizer ", p.dump());
  };
  if (pre.value("type", "") == "Sequence") {
    const ReadJson& seq = Field(pre, "pretokenizers");
    TRAIL_CHECK(seq.is_array() && seq.size() == 2, path, ": unsupported pre_tokenizer sequence");
    const ReadJson& split = seq[0];
    TRAIL_CHECK(split.value("type", "") == "Split" && split.value("behavior", "") == "Isolated" &&
                    !split.value("invert", false) && Field(split, "pattern").contains("Regex"),
                path, ": unsupported Split pre_tokenizer ", split.dump());
    pattern = Field(Field(split, "pattern"), "Regex").get<std::string>();
    byte_level(seq[1], false);
  } else {
    byte_level(pre, true);
    pattern = kGpt2Pattern;
  }
  const ReadJson& vocab = Field(m, "vocab");
  TRAIL_CHECK(vocab.is_object() && !vocab.empty(), path, ": model.vocab missing or empty");
  std::vector<std::string> tokens;
  std::unordered_map<std::string, uint32_t> level_ids;
  const uint64_t max_ids = vocab.size() + Field(j, "added_tokens").size();
  for (auto it = vocab.begin(); it != vocab.end(); ++it) {
    TRAIL_CHECK(it.value().is_number_unsigned(), path, ": vocab id of '", it.key(), "' is bad");
    // Ids below the vocab's and added tokens' count bound the table by the file's size.
    TRAIL_CHECK(it.value().get<uint64_t>() < max_ids, path, ": vocab id of '", it.key(),
                "' is beyond the ", max_ids, " entries and added tokens");
    const uint32_t id = it.value().get<uint32_t>();
    if (tokens.size() <= id) tokens.resize(id + 1);
    TRAIL_CHECK(tokens[id].empty(), path, ": vocab id ", id, " given twice");
    tokens[id] = ByteLevelToBytes(it.key(), path);
    level_ids[it.key()] = id;
  }
  BpeModel model(std::move(tokens), m.value("ignore_merges", false));
  const ReadJson& merges = Field(m, "merges");
  TRAIL_CHECK(merges.is_array(), path, ": model.merges missing");
  for (size_t r = 0; r < merges.size(); ++r) {
    std::string a, b;
    if (merges[r].is_string()) {
      const std::string s = merges[r].get<std::string>();
      const size_t sp = s.find(' ');
      TRAIL_CHECK(sp != std::string::npos, path, ": merge ", r, " '", s, "' has no space");
      a = s.substr(0, sp);
      b = s.substr(sp + 1);
    } else {
      TRAIL_CHECK(merges[r].is_array() && merges[r].size() == 2, path, ": bad merge ", r);
      a = merges[r][0].get<std::string>();
      b = merges[r][1].get<std::string>();
    }
    auto ia = level_ids.find(a), ib = level_ids.find(b), im = level_ids.find(a + b);
    TRAIL_CHECK(ia != level_ids.end() && ib != level_ids.end() && im != level_ids.end(), path,
                ": merge ", r, " ('", a, "' + '", b, "') uses a token missing from the vocab");
    model.AddMerge(ia->second, ib->second, static_cast<uint32_t>(r), im->second);
  }
  model.Finalize();
  std::vector<SpecialToken> specials;
  if (j.contains("added_tokens")) {
    for (const ReadJson& a : Field(j, "added_tokens")) {
      specials.push_back({a.at("content").get<std::string>(), a.at("id").get<uint32_t>()});
    }
  }
  const std::string name = std::filesystem::path(path).parent_path().filename().string();
  return std::make_unique<Tokenizer>(name.empty() ? "tokenizer.json" : name, pattern,
                                     std::move(model), specials, normalization);
}

}  // namespace

std::unique_ptr<Tokenizer> LoadGpt2(const std::string& encoder_json, const std::string& vocab_bpe) {
  try {
    return Gpt2FromFiles(encoder_json, vocab_bpe);
  } catch (const ReadJson::exception& e) {
    TRAIL_FAIL(encoder_json, ": malformed: ", e.what());
  }
}

std::unique_ptr<Tokenizer> LoadHfTokenizerJson(const std::string& path) {
  try {
    return HfFromFile(path);
  } catch (const ReadJson::exception& e) {
    TRAIL_FAIL(path, ": malformed: ", e.what());
  }
}

std::unique_ptr<Tokenizer> LoadTokenizer(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  if (p.extension() == ".tiktoken") {
    const std::string name = p.stem().string();
    TRAIL_CHECK(FindTiktokenEncoding(name) != nullptr, path,
                ": a .tiktoken file must be named after its encoding (e.g. cl100k_base.tiktoken)");
    return LoadTiktoken(name, path);
  }
  if (fs::is_directory(p) && fs::exists(p / "encoder.json")) {
    return LoadGpt2((p / "encoder.json").string(), (p / "vocab.bpe").string());
  }
  if (fs::is_directory(p) && fs::exists(p / "tokenizer.json")) {
    return LoadHfTokenizerJson((p / "tokenizer.json").string());
  }
  if (p.filename() == "encoder.json") {
    return LoadGpt2(path, (p.parent_path() / "vocab.bpe").string());
  }
  return LoadHfTokenizerJson(path);
}

std::string ToHfTokenizerJson(const Tokenizer& t) {
  const BpeModel& m = t.model();
  Json vocab = Json::object();
  for (uint32_t id = 0; id < m.size(); ++id) {
    if (!m.bytes(id).empty()) vocab[BytesToByteLevel(m.bytes(id))] = id;
  }
  Json merges = Json::array();
  for (const BpeModel::Merge& mg : m.Merges()) {
    merges.push_back(
        Json::array({BytesToByteLevel(m.bytes(mg.left)), BytesToByteLevel(m.bytes(mg.right))}));
  }
  Json added = Json::array();
  for (const SpecialToken& s : t.specials()) {
    added.push_back(Json{{"id", s.id},
                         {"content", s.text},
                         {"single_word", false},
                         {"lstrip", false},
                         {"rstrip", false},
                         {"normalized", false},
                         {"special", true}});
  }
  Json j;
  j["version"] = "1.0";
  j["truncation"] = nullptr;
  j["padding"] = nullptr;
  j["added_tokens"] = added;
  j["normalizer"] =
      t.normalization() == Normalization::kNfc ? Json{{"type", "NFC"}} : Json(nullptr);
  j["pre_tokenizer"] =
      Json{{"type", "Sequence"},
           {"pretokenizers", Json::array({Json{{"type", "Split"},
                                               {"pattern", Json{{"Regex", t.pattern()}}},
                                               {"behavior", "Isolated"},
                                               {"invert", false}},
                                          Json{{"type", "ByteLevel"},
                                               {"add_prefix_space", false},
                                               {"trim_offsets", true},
                                               {"use_regex", false}}})}};
  j["post_processor"] = nullptr;
  j["decoder"] = Json{{"type", "ByteLevel"},
                      {"add_prefix_space", true},
                      {"trim_offsets", true},
                      {"use_regex", true}};
  j["model"] = Json{{"type", "BPE"},
                    {"dropout", nullptr},
                    {"unk_token", nullptr},
                    {"continuing_subword_prefix", nullptr},
                    {"end_of_word_suffix", nullptr},
                    {"fuse_unk", false},
                    {"byte_fallback", false},
                    {"ignore_merges", m.ignore_merges()},
                    {"vocab", vocab},
                    {"merges", merges}};
  return j.dump(2) + "\n";
}

}  // namespace trail::tok
