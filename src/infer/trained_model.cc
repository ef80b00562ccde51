#include "infer/trained_model.h"

#include <algorithm>
#include <filesystem>
#include <vector>

#include "core/error.h"
#include "core/file_util.h"
#include "core/hash.h"
#include "core/safetensors.h"
#include "data/manifest.h"
#include "repops/devices.h"
#include "train/checkpoint.h"
#include "train/imported_base.h"
#include "train/recipe.h"
#include "train/run_dir.h"

namespace trail::infer {
namespace fs = std::filesystem;
namespace {

// The checkpoint directory of `step` (-1: the newest).
std::string FindCheckpoint(const std::string& run_dir, int64_t step) {
  const std::vector<int64_t> steps = train::ListCheckpoints(run_dir);
  TRAIL_CHECK(!steps.empty(), run_dir,
              ": the run has no checkpoint yet; a model is read from checkpoints/ (train with "
              "checkpoint_every, or wait for the first)");
  if (step < 0) return train::CheckpointDir(run_dir, steps.back());
  if (std::find(steps.begin(), steps.end(), step) == steps.end()) {
    std::string have;
    for (int64_t s : steps) have += (have.empty() ? "" : ", ") + std::to_string(s);
    TRAIL_FAIL(run_dir, ": no checkpoint of step ", step, "; its checkpoints: ", have);
  }
  return train::CheckpointDir(run_dir, step);
}

// The vocabulary size: the embedding table's rows in the checkpoint (the recipe may leave it
// to the data's tokenizer).
int64_t CheckpointVocab(const std::string& checkpoint_dir) {
  const std::string path = checkpoint_dir + "/" + train::kCheckpointModelFile;
  const SafetensorsFile f = ReadSafetensors(path);
  const Tensor* embed = f.Find("embed");
  TRAIL_CHECK(embed != nullptr && embed->shape().size() == 2, path,
              ": holds no [vocab, d] tensor named embed");
  return embed->shape()[0];
}

// Every token id has a row of the embedding; rows past the tokenizer's ids are padding.
void CheckTokenizerFits(const tok::LoadedContract& k, const model::ModelConfig& c,
                        const std::string& path) {
  TRAIL_CHECK(k.contract.vocab_size <= c.vocab_size, path, ": a tokenizer of ",
              k.contract.vocab_size, " ids; the model's embedding has ", c.vocab_size,
              " rows (it may pad beyond the ids, never fall short)");
}

// The JSON files of `dir` (not recursing), sorted.
std::vector<std::string> JsonFiles(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.is_regular_file(ec) && e.path().extension() == ".json") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

tok::LoadedContract FindRunTokenizer(const std::string& given, const std::string& run_dir,
                                     const std::string& manifest_path, std::string& path_out) {
  const bool have_manifest = !manifest_path.empty() && fs::exists(manifest_path);
  data::ContractHash want{};
  if (have_manifest) want = data::LoadManifest(manifest_path).tokenizer.contract;
  auto matches = [&](const std::string& path) {
    const Digest d = Sha256OfFile(path);
    return std::equal(d.begin(), d.end(), want.begin());
  };
  if (!given.empty()) {
    TRAIL_CHECK(fs::exists(given), given, ": no such tokenizer contract");
    TRAIL_CHECK(!have_manifest || matches(given), given,
                ": not the tokenizer of this run (its SHA-256 differs from the contract hash "
                "the data manifest ",
                manifest_path, " records)");
    path_out = given;
    return tok::LoadContract(given);
  }
  std::vector<std::string> dirs = {run_dir};
  if (have_manifest) dirs.insert(dirs.begin(), fs::path(manifest_path).parent_path().string());
  for (const std::string& dir : dirs) {
    for (const std::string& path : JsonFiles(dir.empty() ? "." : dir)) {
      const bool named = fs::path(path).filename() == "tokenizer.contract.json";
      if (have_manifest ? matches(path) : named) {
        path_out = path;
        return tok::LoadContract(path);
      }
    }
  }
  TRAIL_FAIL("cannot find the run's tokenizer contract (looked beside the data manifest and in ",
             run_dir, "); pass --tokenizer with its tokenizer.contract.json");
}

// An imported base (train/imported_base.h) read like a run's checkpoint of step 0.
void TrainedModel::OpenImport(const TrainedModelOptions& o) {
  const train::ImportedBase base = train::ReadImportedBase(o.run_dir);
  config_ = base.model;
  backend_ = repops::MakeBackend(o.device);
  params_ = std::make_unique<model::ParameterSet>(config_, *backend_);
  params_->FromHost(train::LoadImportedParams(base, *backend_), base.dir);
  params_hash_ = base.params_sha256;
  checkpoint_dir_ = o.run_dir;
  tokenizer_path_ = o.tokenizer.empty()
                        ? (fs::path(o.run_dir) / train::kImportContractFile).string()
                        : o.tokenizer;
  contract_ = tok::LoadContract(tokenizer_path_);
  CheckTokenizerFits(contract_, config_, tokenizer_path_);
}

TrainedModel::TrainedModel(const TrainedModelOptions& o) {
  if (train::IsImportedBase(o.run_dir)) {
    TRAIL_CHECK(o.step <= 0, o.run_dir, ": an imported model has one state, step 0");
    OpenImport(o);
    return;
  }
  const train::RunDirectory run(o.run_dir);
  const train::RunInfo info = run.ReadInfo();
  const std::string recipe_sha = info.json.value("recipe_sha256", "");
  checkpoint_dir_ = FindCheckpoint(o.run_dir, o.step);
  const train::Recipe recipe =
      train::LoadRecipe(run.recipe_path(), CheckpointVocab(checkpoint_dir_));
  TRAIL_CHECK(recipe.sha256 == recipe_sha, run.recipe_path(),
              ": SHA-256 differs from the one run.json records");
  config_ = recipe.model;
  backend_ = repops::MakeBackend(o.device);
  params_ = std::make_unique<model::ParameterSet>(config_, *backend_);
  step_ = train::LoadCheckpointParams(
      checkpoint_dir_, {recipe_sha, info.json.value("manifest_sha256", "")}, *params_);
  params_hash_ = ToHex(params_->StateHash());  // LoadCheckpointParams checked it against meta
  contract_ = FindRunTokenizer(o.tokenizer, o.run_dir, info.data_manifest, tokenizer_path_);
  CheckTokenizerFits(contract_, config_, tokenizer_path_);
  // The run's own copy of its manifest (train/trainer.cc), else the one run.json names.
  const std::string manifest =
      fs::exists(run.manifest_path()) ? run.manifest_path() : info.data_manifest;
  if (!manifest.empty() && fs::exists(manifest)) {
    const data::Manifest m = data::LoadManifest(manifest);
    if (m.stream.prepend_bos) document_bos_ = m.tokenizer.bos_id;
  }
}

}  // namespace trail::infer
