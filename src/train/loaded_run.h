// Everything a run needs in memory to execute steps: its recipe, the canonical stream over its
// data manifest, the step engine and the validation sets. Built the same way by training and by
// replay, so both execute the very same steps.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "data/eval_stream.h"
#include "data/stream.h"
#include "model/params.h"
#include "train/checkpoint.h"
#include "train/recipe.h"
#include "train/step.h"

namespace trail::train {

struct LoadedRun {
  // `shards`: how the data's shards are opened (rehashed, or not; data/stream.h), for the
  // training stream and the validation sets alike. The engine runs this process's part of each
  // step in the job `comm` on `backend` (repops/devices.h's MakeBackend). `recompute`
  // overrides the recipe's [train] recompute (an auditor short of memory replays with
  // "layers": the same bits); by default the recipe's.
  LoadedRun(const std::string& recipe_path, const std::string& manifest_path,
            const data::StreamOptions& shards, collectives::Communicator& comm,
            std::unique_ptr<repops::Backend> backend,
            std::optional<model::Recompute> recompute = std::nullopt);

  RunIdentity id() const { return {recipe.sha256, manifest_sha}; }

  // Entropy (nats) of the target tokens of each validation domain's evaluated windows: the loss
  // of the best unigram model of that very text, the baseline a language model must beat.
  std::map<std::string, double> UnigramEntropy();
  // Mean loss per target over the first eval_windows windows of each validation domain, on
  // every process of the engine's job together (each process of the job calls it with the same
  // parameters; every one gets the result). A domain's windows form micro-batches of the
  // stream's micro_batch_windows (the last padded); process q of P scores the contiguous block
  // of batches [nb·q/P, nb·(q+1)/P) and every batch's (NLL sum, valid count) is gathered in
  // batch order, then summed in double in that order: the bits of one process scoring all.
  std::map<std::string, double> Evaluate(const model::ParameterSet& params);

  std::string manifest_path, manifest_sha;  // absolute path; SHA-256 of its bytes (hex)
  data::CanonicalStream stream;
  Recipe recipe;
  StepEngine engine;
  std::vector<std::pair<std::string, std::unique_ptr<data::EvalStream>>> evals;
};

}  // namespace trail::train
