// A trained model read from a run directory for inference — or from an imported base
// (train/imported_base.h: its parameters, checked against import.json, and its contract) —
// the run's recipe (checked against
// run.json's SHA-256), one checkpoint's parameters (checked against its meta.json: the file's
// SHA-256 and the parameter state hash) on a backend, and the run's tokenizer, found through
// the data manifest's contract hash.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/device.h"
#include "model/config.h"
#include "model/params.h"
#include "repops/backend.h"
#include "tokenizer/contract.h"

namespace trail::infer {

// The run's tokenizer contract: `given` (which must have the hash the data manifest records),
// or else the contract file beside the data manifest or in the run directory with that hash
// (without a manifest: a tokenizer.contract.json there). `path_out` gets its path; throws
// trail::Error saying where it looked and to pass --tokenizer.
tok::LoadedContract FindRunTokenizer(const std::string& given, const std::string& run_dir,
                                     const std::string& manifest_path, std::string& path_out);

struct TrainedModelOptions {
  std::string run_dir;  // a run, or a directory `trail import` wrote
  int64_t step = -1;    // the checkpoint of this step; -1: the newest
  // The tokenizer contract (tokenizer.contract.json). Empty: the one beside the data manifest
  // or in the run directory whose hash the manifest records.
  std::string tokenizer;
  Device device;  // where the model runs
};

class TrainedModel {
 public:
  // Throws trail::Error saying what is missing or wrong and what to do (a run without
  // checkpoints, a step not checkpointed, a tokenizer that is not the run's).
  explicit TrainedModel(const TrainedModelOptions& options);

  const model::ModelConfig& config() const { return config_; }
  const model::ParameterSet& params() const { return *params_; }
  repops::Backend& backend() const { return *backend_; }
  const tok::Tokenizer& tokenizer() const { return *contract_.tokenizer; }
  const tok::TokenizerContract& contract() const { return contract_.contract; }
  int64_t step() const { return step_; }
  const std::string& checkpoint_dir() const { return checkpoint_dir_; }
  const std::string& tokenizer_path() const { return tokenizer_path_; }
  const std::string& params_hash() const { return params_hash_; }  // the state hash, hex
  // The BOS every training document started with (the run's data manifest has prepend_bos),
  // which generate and eval put before a prompt as training did; -1 for none and for imports.
  int64_t document_bos() const { return document_bos_; }

 private:
  void OpenImport(const TrainedModelOptions& options);
  std::unique_ptr<repops::Backend> backend_;
  model::ModelConfig config_;
  std::unique_ptr<model::ParameterSet> params_;
  tok::LoadedContract contract_;
  int64_t step_ = 0;
  int64_t document_bos_ = -1;
  std::string checkpoint_dir_, tokenizer_path_, params_hash_;
};

}  // namespace trail::infer
