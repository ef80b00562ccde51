#include "train/loaded_run.h"

#include <cmath>
#include <filesystem>
#include <utility>

#include "core/hash.h"
#include "data/manifest.h"
#include "data/packing.h"

namespace trail::train {
namespace {

Recipe WithRecompute(Recipe r, std::optional<model::Recompute> recompute) {
  if (recompute) r.loop.recompute = *recompute;  // execution only: r.sha256 still names the file
  return r;
}

}  // namespace

LoadedRun::LoadedRun(const std::string& recipe_path, const std::string& manifest_path_in,
                     const data::StreamOptions& shards, collectives::Communicator& comm,
                     std::unique_ptr<repops::Backend> backend,
                     std::optional<model::Recompute> recompute)
    : manifest_path(std::filesystem::absolute(manifest_path_in).string()),
      manifest_sha(ToHex(Sha256OfFile(manifest_path_in))),
      stream(data::LoadManifest(manifest_path_in), shards),
      recipe(WithRecompute(LoadRecipe(recipe_path, stream.manifest().tokenizer.vocab_size),
                           recompute)),
      engine(recipe, stream, comm, std::move(backend)) {
  for (const data::EvalSet& e : stream.manifest().validation) {
    evals.emplace_back(e.domain, std::make_unique<data::EvalStream>(stream.manifest(), "validation",
                                                                    e.domain, shards));
  }
}

std::map<std::string, double> LoadedRun::UnigramEntropy() {
  std::map<std::string, double> out;
  const data::StreamConfig& sc = stream.manifest().stream;
  data::PackedBatch pb;
  data::RawWindow raw;
  for (auto& [domain, es] : evals) {
    std::map<int32_t, int64_t> counts;
    int64_t total = 0;
    const int64_t n = std::min<int64_t>(recipe.loop.eval_windows, es->num_windows());
    for (int64_t i = 0; i < n; ++i) {
      pb.Resize(1, sc.seq_len);
      es->Window(static_cast<uint64_t>(i), raw);
      data::PackRow(raw, sc.semantics, pb, 0);
      for (int32_t l : pb.labels) {
        if (l != data::kIgnoreLabel) ++counts[l], ++total;
      }
    }
    double h = 0;
    for (const auto& [tok, c] : counts) {
      const double p = double(c) / double(total);
      h -= p * std::log(p);
    }
    out[domain] = h;
  }
  return out;
}

namespace {

// One evaluation micro-batch's sums, as gathered from the process that scored it.
struct BatchSums {
  int64_t valid = 0;
  float nll_sum = 0;
  float zero = 0;  // no padding bytes go over the wire
};

}  // namespace

std::map<std::string, double> LoadedRun::Evaluate(const model::ParameterSet& params) {
  std::map<std::string, double> out;
  const data::StreamConfig& sc = stream.manifest().stream;
  const int64_t rows = sc.micro_batch_windows;
  collectives::Communicator& comm = engine.comm();
  const int64_t P = comm.size(), q = comm.rank();
  data::PackedBatch pb;
  data::RawWindow raw;
  for (auto& [domain, es] : evals) {
    const int64_t n = std::min<int64_t>(recipe.loop.eval_windows, es->num_windows());
    const int64_t batches = (n + rows - 1) / rows;
    std::vector<BatchSums> mine;
    int64_t most = 0;  // the largest block: sharded parameters are gathered for as many batches
    for (int64_t p = 0; p < P; ++p) {
      most = std::max(most, batches * (p + 1) / P - batches * p / P);
    }
    for (int64_t k = batches * q / P; k < batches * (q + 1) / P; ++k) {
      const int64_t i = k * rows;
      pb.Resize(rows, sc.seq_len);
      for (int64_t r = 0; r < rows; ++r) {
        if (i + r < n) {
          es->Window(static_cast<uint64_t>(i + r), raw);
          data::PackRow(raw, sc.semantics, pb, r);
        } else {
          data::PackPaddingRow(pb, r, stream.pad_token());
        }
      }
      const repops::CrossEntropySums s = engine.Score(params, pb);
      mine.push_back({.valid = s.valid, .nll_sum = s.nll_sum});
    }
    for (int64_t k = static_cast<int64_t>(mine.size()); k < most; ++k) engine.IdleScore();
    double nll = 0;  // in batch order: the processes' blocks are contiguous and in order
    int64_t valid = 0;
    for (const BatchSums& s : collectives::AllGatherItems<BatchSums>(comm, mine)) {
      nll += s.nll_sum;
      valid += s.valid;
    }
    out[domain] = valid > 0 ? nll / double(valid) : 0.0;
  }
  return out;
}

}  // namespace trail::train
