#include "train/imported_base.h"

#include <filesystem>

#include "core/error.h"
#include "core/file_util.h"
#include "core/hash.h"
#include "core/safetensors.h"

namespace trail::train {
namespace fs = std::filesystem;

bool IsImportedBase(const std::string& dir) {
  return fs::is_regular_file(fs::path(dir) / kImportRecordFile);
}

ImportedBase ReadImportedBase(const std::string& dir) {
  const std::string path = (fs::path(dir) / kImportRecordFile).string();
  TRAIL_CHECK(fs::is_regular_file(path), dir,
              ": not an imported model (no import.json); `trail import` writes one");
  ImportedBase b;
  b.dir = dir;
  const std::string text = ReadFileToString(path);
  b.record_sha256 = ToHex(Sha256({reinterpret_cast<const uint8_t*>(text.data()), text.size()}));
  try {
    b.record = nlohmann::json::parse(text);
    TRAIL_CHECK(b.record.at("format") == kImportFormat, path, ": not a ", kImportFormat, " record");
    for (const char* f : {kImportModelFile, kImportTokenizerFile, kImportContractFile}) {
      const std::string file = (fs::path(dir) / f).string();
      TRAIL_CHECK(fs::is_regular_file(file), file, ": missing (import.json names it)");
      TRAIL_CHECK(ToHex(Sha256OfFile(file)) == b.record.at("files").at(f).get<std::string>(), file,
                  ": SHA-256 differs from the one import.json records (changed or damaged)");
    }
    b.params_sha256 = b.record.at("params_sha256").get<std::string>();
    const std::string model = b.record.at("model").get<std::string>();
    b.model = ParseRecipe(model, path + " (model)", 0).model;
  } catch (const nlohmann::json::exception& e) {
    TRAIL_FAIL(path, ": malformed: ", e.what());
  }
  return b;
}

std::vector<Tensor> LoadImportedParams(const ImportedBase& base, repops::Backend& be) {
  const std::string path = (fs::path(base.dir) / kImportModelFile).string();
  SafetensorsFile f = ReadSafetensors(path);
  model::ParameterSet p(base.model, be);
  p.FromHost(f.tensors, path);
  TRAIL_CHECK(ToHex(p.StateHash()) == base.params_sha256, path,
              ": the parameters' state hash differs from import.json's params_sha256");
  return std::move(f.tensors);
}

void CheckRecipeContinues(const Recipe& recipe, const ImportedBase& base) {
  TRAIL_CHECK(recipe.init.imported, recipe.path,
              ": --init-from needs a recipe whose [init] names the import (from = \"import\"); "
              "start from the recipe.toml in ",
              base.dir);
  TRAIL_CHECK(recipe.init.import_sha256 == base.record_sha256, recipe.path,
              ": [init] import_sha256 is not the SHA-256 of ", base.dir, "/import.json (",
              base.record_sha256, "): the recipe continues another import");
  TRAIL_CHECK(recipe.init.params_sha256 == base.params_sha256, recipe.path,
              ": [init] params_sha256 differs from the import's parameter state hash (",
              base.params_sha256, ")");
  model::ModelConfig want = base.model;
  want.max_seq_len = recipe.model.max_seq_len;
  const std::string a = ModelSectionToml(recipe.model), b = ModelSectionToml(want);
  if (a == b) return;
  // Name the first key that differs.
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  const size_t line = a.rfind('\n', i) + 1;
  TRAIL_FAIL(recipe.path, ": its [model] is not the imported model's: the recipe has ",
             a.substr(line, a.find('\n', line) - line), ", the import ",
             b.substr(line, b.find('\n', line) - line),
             " (only max_seq_len may change when continuing an import)");
}

nlohmann::json BaseStatement(const std::string& path) {
  const std::string text = ReadFileToString(path);
  nlohmann::json files = nlohmann::json::object();
  try {
    const nlohmann::json record = nlohmann::json::parse(text);
    for (const nlohmann::json& f : record.at("source").at("files")) {
      files[f.at("path").get<std::string>()] = f.at("sha256").get<std::string>();
    }
  } catch (const nlohmann::json::exception& e) {
    TRAIL_FAIL(path, ": malformed: ", e.what());
  }
  const Digest d = Sha256({reinterpret_cast<const uint8_t*>(text.data()), text.size()});
  return {{"import_sha256", ToHex(d)}, {"files", files}};
}

}  // namespace trail::train
