#include "infer/import_hf.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_util.h"
#include "core/hash.h"
#include "core/safetensors.h"
#include "infer/import_weights.h"
#include "repops/devices.h"
#include "tokenizer/contract.h"
#include "tokenizer/loaders.h"
#include "train/imported_base.h"

namespace trail::infer {
namespace fs = std::filesystem;
namespace {

// Every tensor of the model from the checkpoint, each in trail's layout; what is left over must
// be a rotary_emb.inv_freq buffer (recomputed, never trained), or lm_head.weight equal to the
// tied embedding.
void FillParameters(const HfModel& m, HfWeights& w, model::ParameterSet& p, ImportResult& r) {
  repops::Backend& be = p.backend();
  std::vector<float> embed;
  for (const HfSlot& s : HfLayout(m.config, p, m.arch)) {
    std::vector<float> x = w.Read(s.hf_name, s.shape);
    if (s.role == "embed") embed = x;
    if (s.transposed) x = Transposed(x, s.shape[0], s.shape[1]);  // HF [out, in] to [in, out]
    be.CopyFromHost(x.data(), s.tensor->view());
    ++r.tensors;
  }
  for (const std::string& name : w.Unread()) {
    if (name.ends_with("rotary_emb.inv_freq")) {
      r.ignored.push_back(name);
      continue;
    }
    TRAIL_CHECK(name == "lm_head.weight" && m.config.tied_embeddings &&
                    w.Read(name, {m.config.vocab_size, m.config.d_model}) == embed,
                "the checkpoint holds ", name, ", which a ", m.arch.hf_class,
                " of this config.json has no place for",
                name == "lm_head.weight" ? " (tie_word_embeddings is true, and it is not the "
                                           "embedding)"
                                         : "");
    r.ignored.push_back(name);
  }
}

// The text of special token `id` of the tokenizer ("" for -1); the id must be a special token.
std::string SpecialText(const tok::Tokenizer& t, int64_t id, const char* what,
                        const std::string& path) {
  if (id < 0) return "";
  for (const tok::SpecialToken& s : t.specials()) {
    if (static_cast<int64_t>(s.id) == id) return s.text;
  }
  TRAIL_FAIL(path, ": config.json's ", what, " ", id, " is not a special token of tokenizer.json");
}

// tokenizer.json copied, and its contract (bos/eos/pad from config.json).
void WriteTokenizer(const ImportOptions& o, const HfModel& m) {
  const std::string src = (fs::path(o.from) / train::kImportTokenizerFile).string();
  TRAIL_CHECK(fs::exists(src), o.from,
              ": no tokenizer.json (trail reads Hugging Face's fast-tokenizer file; a "
              "SentencePiece tokenizer.model alone is not supported)");
  const std::string dst = (fs::path(o.out) / train::kImportTokenizerFile).string();
  WriteFileAtomic(dst, ReadFileToString(src));
  const auto t = tok::LoadHfTokenizerJson(dst);
  // A padded vocabulary (Qwen3's, OLMo 2's: more embedding rows than token ids) is kept as is.
  TRAIL_CHECK(t->vocab_size() <= m.config.vocab_size, src, ": a tokenizer of ", t->vocab_size(),
              " ids, but config.json's vocab_size is ", m.config.vocab_size,
              ": the embedding must have a row for every token id");
  const tok::TokenizerContract c =
      tok::MakeContract(dst, o.out, SpecialText(*t, m.bos_id, "bos_token_id", src),
                        SpecialText(*t, m.eos_id, "eos_token_id", src),
                        SpecialText(*t, m.pad_id, "pad_token_id", src), "");
  WriteFileAtomic((fs::path(o.out) / train::kImportContractFile).string(), tok::ContractToJson(c));
}

// model.safetensors: the bytes WriteSafetensors writes for p's tensors, written from the host
// memory the CPU backend keeps them in (no second copy of the model).
void WriteParameters(const std::string& path, const model::ParameterSet& p) {
  std::vector<SafetensorsEntry> entries;
  for (const DeviceTensor& t : p.tensors()) entries.push_back({t.name(), DType::kF32, t.shape()});
  AtomicFile f(path);
  const std::string prefix = SafetensorsPrefix(entries, {}, path);
  f.Write(prefix.data(), prefix.size());
  for (const DeviceTensor& t : p.tensors()) {
    f.Write(t.data<float>(), static_cast<size_t>(t.numel()) * sizeof(float));
  }
  f.Commit();
}

// Written into --out first and removed after import.json: a folder holding it is an import that
// stopped on the way, which a new import may write over.
constexpr const char* kIncompleteMarker = ".trail-import-incomplete";

// --out must be new, empty, or an interrupted import: the import never writes over someone
// else's files (a run's recipe.toml, say).
void CheckOutIsOurs(const std::string& out) {
  if (!fs::exists(out)) return;
  TRAIL_CHECK(fs::is_directory(out), out, " exists and is not a directory; choose another --out");
  TRAIL_CHECK(fs::is_empty(out) || fs::exists(fs::path(out) / kIncompleteMarker), out,
              " is not empty; choose an empty or new --out (the import writes five files there)");
}

std::string Sha256Text(const std::string& s) {
  return ToHex(Sha256({reinterpret_cast<const uint8_t*>(s.data()), s.size()}));
}

nlohmann::json SourceFiles(const ImportOptions& o, const std::vector<std::string>& names) {
  nlohmann::json files = nlohmann::json::array();
  for (const std::string& n : names) {
    const std::string path = (fs::path(o.from) / n).string();
    files.push_back({{"path", n},
                     {"bytes", static_cast<int64_t>(fs::file_size(path))},
                     {"sha256", ToHex(Sha256OfFile(path))}});
  }
  return files;
}

std::string RecipeText(const ImportOptions& o, const ImportResult& r) {
  return StrCat(
      "# Continues the model `trail import` read from ",
      fs::absolute(o.from).lexically_normal().string(), "\n# (", r.model.architecture, ", ",
      r.parameters,
      " parameters). [model] is the imported model's: keep it (max_seq_len may\n"
      "# grow, for a longer context). [init] names the import by its hashes. The sections after\n"
      "# it are a starting point for continued pretraining: edit them.\n",
      train::ModelSectionToml(r.model.config), "\n[init]\nfrom = \"import\"\nimport_sha256 = \"",
      r.import_sha256, "\"\nparams_sha256 = \"", r.params_sha256,
      "\"\n\n[optimizer]\nlr = 3e-5\nweight_decay = 0.1\n\n[schedule]\ndecay = \"constant\"\n\n"
      "[train]\nsteps = 100\ncheckpoint_every = 50\n");
}

}  // namespace

ImportResult ImportHf(const ImportOptions& o) {
  TRAIL_CHECK(fs::is_directory(o.from), o.from,
              ": not a directory (a Hugging Face checkpoint "
              "folder: config.json, model.safetensors, tokenizer.json)");
  TRAIL_CHECK(!train::IsImportedBase(o.out), o.out,
              " already holds an import (import.json); remove it or choose another --out");
  CheckOutIsOurs(o.out);
  ImportResult r;
  r.model = ReadHfConfig((fs::path(o.from) / "config.json").string(), o.max_seq_len);
  HfWeights w(o.from);
  const auto be = repops::MakeBackend(Device{});
  {  // Every tensor present with its shape before any memory is sized from config.json.
    const model::ParameterSet layout(r.model.config, *be, "", model::Memory::kUnbound);
    for (const HfSlot& s : HfLayout(r.model.config, layout, r.model.arch))
      w.Check(s.hf_name, s.shape);
  }
  model::ParameterSet p(r.model.config, *be);
  FillParameters(r.model, w, p, r);
  r.parameters = p.numel();
  r.params_sha256 = ToHex(p.StateHash());
  fs::create_directories(o.out);
  const std::string marker = (fs::path(o.out) / kIncompleteMarker).string();
  WriteFileAtomic(marker, "");
  WriteTokenizer(o, r.model);
  WriteParameters((fs::path(o.out) / train::kImportModelFile).string(), p);
  r.source_files = {"config.json"};
  for (const std::string& f : w.files()) r.source_files.push_back(f);
  r.source_files.push_back(train::kImportTokenizerFile);
  nlohmann::json files = nlohmann::json::object();
  for (const char* f :
       {train::kImportModelFile, train::kImportTokenizerFile, train::kImportContractFile}) {
    files[f] = ToHex(Sha256OfFile((fs::path(o.out) / f).string()));
  }
  nlohmann::json rec = nlohmann::json::object();
  rec["format"] = train::kImportFormat;
  rec["source"] = {{"model_type", r.model.model_type},
                   {"architecture", r.model.architecture},
                   {"dtype", r.model.dtype},
                   {"files", SourceFiles(o, r.source_files)}};
  rec["model"] = train::ModelSectionToml(r.model.config);
  rec["parameters"] = r.parameters;
  rec["params_sha256"] = r.params_sha256;
  rec["files"] = files;
  const std::string text = rec.dump(2) + "\n";
  r.import_sha256 = Sha256Text(text);
  WriteFileAtomic((fs::path(o.out) / train::kImportRecipeFile).string(), RecipeText(o, r));
  WriteFileAtomic((fs::path(o.out) / train::kImportRecordFile).string(), text);  // the commit
  fs::remove(marker);
  return r;
}

}  // namespace trail::infer
