// An imported base model (docs/import.md): the directory `trail import` writes from a Hugging
// Face checkpoint, which `trail train --init-from DIR` continues and `trail generate`, `eval`
// and `export` read like a run's checkpoint.
//   import.json              the record below (written last: a directory without it is not an
//                            import)
//   model.safetensors        the parameters, float32, in trail's names and layout (the file a
//                            checkpoint's parameters are stored in)
//   tokenizer.json           the base's tokenizer.json, byte for byte
//   tokenizer.contract.json  its tokenizer contract (docs/tokenizer.md)
//   recipe.toml              a recipe to start from: the model's [model] section, the [init]
//                            section naming this import, training sections to edit
// import.json, format "trail.import.v1", JSON with keys sorted, two-space indent, one final
// newline (nothing in it depends on the machine or the folder's path, so importing the same
// checkpoint anywhere gives the same bytes, and the same import_sha256):
//   {"format", "source": {"model_type", "architecture", "dtype",
//                         "files": [{"path", "bytes", "sha256"}, ...]  (every file read, by path)},
//    "model": the [model] section (ModelSectionToml) of the imported function, as a string,
//    "parameters": count, "params_sha256": the parameters' state hash,
//    "files": {"model.safetensors", "tokenizer.json", "tokenizer.contract.json": SHA-256 each}}
// A recipe continues the import when its [init] names import.json's SHA-256 and the state hash
// (train/recipe.h, InitConfig); its [model] must be the record's, max_seq_len aside (a context
// extension changes only how many positions the RoPE table covers).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "core/tensor.h"
#include "model/params.h"
#include "train/recipe.h"

namespace trail::train {

inline constexpr const char* kImportFormat = "trail.import.v1";
inline constexpr const char* kImportRecordFile = "import.json";
inline constexpr const char* kImportModelFile = "model.safetensors";
inline constexpr const char* kImportTokenizerFile = "tokenizer.json";
inline constexpr const char* kImportContractFile = "tokenizer.contract.json";
inline constexpr const char* kImportRecipeFile = "recipe.toml";

struct ImportedBase {
  std::string dir;
  nlohmann::json record;      // import.json
  std::string record_sha256;  // of import.json's bytes, hex
  model::ModelConfig model;   // the record's [model]
  std::string params_sha256;  // hex
};

// True when `dir` holds an import.json.
bool IsImportedBase(const std::string& dir);

// Reads import.json and checks its format and the SHA-256 of the three files it names; throws
// trail::Error naming the file at fault.
ImportedBase ReadImportedBase(const std::string& dir);

// The imported parameters as host tensors (trail's names, float32), checked against the
// record's state hash on `be`.
std::vector<Tensor> LoadImportedParams(const ImportedBase& base, repops::Backend& be);

// Checks that `recipe` continues `base`: [init] names its import.json and state hash, and the
// [model] sections agree but for max_seq_len. Throws trail::Error saying which differs.
void CheckRecipeContinues(const Recipe& recipe, const ImportedBase& base);

// What an attestation says about the base (run_attestation.h), from an import.json (an import's
// or a run's copy): {"import_sha256": its SHA-256, "files": {path: SHA-256 of each file of the
// Hugging Face checkpoint it was converted from}}.
nlohmann::json BaseStatement(const std::string& import_json_path);

}  // namespace trail::train
