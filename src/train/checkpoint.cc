#include "train/checkpoint.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <cstdio>
#include <filesystem>

#include <fcntl.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_util.h"
#include "core/json_read.h"
#include "core/safetensors.h"
#include "train/checkpoint_files.h"

namespace trail::train {
namespace fs = std::filesystem;
namespace {

constexpr const char* kFormat = "trail.checkpoint.v1";

}  // namespace

const SafetensorsMetadata& CheckpointFileMetadata() {
  static const SafetensorsMetadata m = {{"format", "pt"}, {"trail", kFormat}};
  return m;
}

void SyncDir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

namespace {

// Host copies of the sets' tensors, in order (the only device-to-host copy a save makes).
std::vector<Tensor> HostCopies(std::initializer_list<const model::ParameterSet*> sets) {
  std::vector<Tensor> out;
  for (const model::ParameterSet* s : sets) {
    for (Tensor& t : s->ToHost()) out.push_back(std::move(t));
  }
  return out;
}

std::vector<const Tensor*> Ptrs(const std::vector<Tensor>& tensors) {
  std::vector<const Tensor*> out;
  for (const Tensor& t : tensors) out.push_back(&t);
  return out;
}

// Copies the file's tensors into the sets, requiring exactly their names, dtypes and shapes.
void Fill(const SafetensorsFile& f, const std::string& path,
          std::initializer_list<model::ParameterSet*> sets) {
  size_t expected = 0;
  for (model::ParameterSet* s : sets) {
    s->FromHost(f.tensors, path);
    expected += s->tensors().size();
  }
  TRAIL_CHECK(f.tensors.size() == expected, path, ": holds ", f.tensors.size(),
              " tensors, this model has ", expected);
}

// A checkpoint that several processes wrote records how: "layout" {writers, flat_elements,
// flat_ranges}, the ranges contiguous from 0 to flat_elements, one per writer. Returns
// flat_elements (-1 when there is no layout: one process wrote it).
int64_t CheckedLayout(const nlohmann::json& meta, const std::string& meta_path) {
  if (!meta.contains("layout")) return -1;
  const nlohmann::json& l = meta.at("layout");
  const int64_t writers = JsonInteger<int64_t>(l.at("writers"), meta_path + ": layout.writers");
  const int64_t n =
      JsonInteger<int64_t>(l.at("flat_elements"), meta_path + ": layout.flat_elements");
  const nlohmann::json& ranges = l.at("flat_ranges");
  TRAIL_CHECK(writers >= 1 && ranges.is_array() && ranges.size() == static_cast<size_t>(writers),
              meta_path, ": layout names ", writers, " writers and ", ranges.size(), " ranges");
  int64_t next = 0;
  for (const nlohmann::json& r : ranges) {
    const std::vector<int64_t> be = JsonIntegers<int64_t>(r, meta_path + ": layout.flat_ranges");
    TRAIL_CHECK(be.size() == 2 && be[0] == next && be[1] >= be[0], meta_path,
                ": layout.flat_ranges are not contiguous ranges from 0 (at ", r.dump(), ")");
    next = be[1];
  }
  TRAIL_CHECK(next == n, meta_path, ": layout.flat_ranges end at ", next, ", not at flat_elements ",
              n);
  return n;
}

}  // namespace

void WriteMetaAndCommit(const std::string& run_dir, const std::string& tmp, const TrainState& st,
                        const RunIdentity& id, const Digest& params_hash, const Digest& optim_hash,
                        const nlohmann::json* layout) {
  const std::string final_dir = CheckpointDir(run_dir, st.step);
  std::vector<uint32_t> norms;
  for (float f : st.norm_history) norms.push_back(std::bit_cast<uint32_t>(f));
  nlohmann::json meta = {
      {"format", kFormat},
      {"step", st.step},
      {"window_cursor", st.window_cursor},
      {"tokens_consumed", st.tokens},
      {"optimizer_updates", st.optimizer_updates},
      {"spike_norm_history_bits", norms},
      {"monitor_state", st.monitor_state},
      {"trajectory_chain", ToHex(st.chain)},
      {"recipe_sha256", id.recipe_sha256},
      {"manifest_sha256", id.manifest_sha256},
      {"params_hash", ToHex(params_hash)},
      {"optimizer_hash", ToHex(optim_hash)},
      {"files",
       {{kCheckpointModelFile, ToHex(Sha256OfFile(tmp + "/" + std::string(kCheckpointModelFile)))},
        {kCheckpointOptimFile,
         ToHex(Sha256OfFile(tmp + "/" + std::string(kCheckpointOptimFile)))}}},
      {"resume_tier", 3},
      {"resume_tier_meaning",
       "bitwise-identical continuation: weights, optimizer moments and step count, LR clock "
       "(tokens consumed), window cursor (the sampler's whole state), spike-protocol and "
       "monitor state; no RNG or loader state exists to lose"}};
  if (layout != nullptr) meta["layout"] = *layout;
  WriteFileAtomic(tmp + "/" + std::string(kCheckpointMetaFile), meta.dump(2) + "\n");
  SyncDir(tmp);
  if (fs::exists(final_dir)) fs::remove_all(final_dir);  // an invalid one at the same step
  fs::rename(tmp, final_dir);
  SyncDir(run_dir + "/checkpoints");
}

std::string CheckpointDir(const std::string& run_dir, int64_t step) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "step_%08lld", static_cast<long long>(step));
  return run_dir + "/checkpoints/" + buf;
}

void SaveCheckpoint(const std::string& run_dir, const TrainState& st, const RunIdentity& id) {
  const std::string final_dir = CheckpointDir(run_dir, st.step);
  const std::string tmp = final_dir + ".tmp";
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  WriteSafetensors(tmp + "/" + std::string(kCheckpointModelFile), Ptrs(HostCopies({&st.params})),
                   CheckpointFileMetadata());
  WriteSafetensors(tmp + "/" + std::string(kCheckpointOptimFile),
                   Ptrs(HostCopies({&st.adam_m(), &st.adam_v()})), CheckpointFileMetadata());
  WriteMetaAndCommit(run_dir, tmp, st, id, st.params.StateHash(), st.OptimizerHash(), nullptr);
}

std::vector<int64_t> ListCheckpoints(const std::string& run_dir) {
  std::vector<int64_t> out;
  const std::string dir = run_dir + "/checkpoints";
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    long long step = -1;
    char tail = 0;
    if (std::sscanf(name.c_str(), "step_%lld%c", &step, &tail) == 1 && step >= 0 &&
        fs::exists(e.path() / kCheckpointMetaFile)) {
      out.push_back(step);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

RunIdentity CheckpointIdentity(const std::string& dir) {
  const std::string meta_path = dir + "/" + std::string(kCheckpointMetaFile);
  try {
    const nlohmann::json meta = nlohmann::json::parse(ReadFileToString(meta_path));
    return {meta.at("recipe_sha256").get<std::string>(),
            meta.at("manifest_sha256").get<std::string>()};
  } catch (const nlohmann::json::exception& e) {
    TRAIL_FAIL(meta_path, ": malformed: ", e.what());
  }
  return {};
}

CheckpointMeta VerifyCheckpointFiles(const std::string& dir) {
  const std::string meta_path = dir + "/" + std::string(kCheckpointMetaFile);
  CheckpointMeta out;
  try {
    const nlohmann::json meta = nlohmann::json::parse(ReadFileToString(meta_path));
    TRAIL_CHECK(meta.at("format") == kFormat, meta_path, ": not a ", kFormat, " checkpoint");
    for (const char* f : {kCheckpointModelFile, kCheckpointOptimFile}) {
      const std::string path = dir + "/" + f;
      TRAIL_CHECK(fs::exists(path), path, ": missing");
      const std::string got = ToHex(Sha256OfFile(path));
      TRAIL_CHECK(got == meta.at("files").at(f).get<std::string>(), path,
                  ": SHA-256 differs from meta.json (corrupted): ", got);
    }
    CheckedLayout(meta, meta_path);
    out.step = JsonInteger<int64_t>(meta.at("step"), meta_path + ": step");
    out.id = {meta.at("recipe_sha256").get<std::string>(),
              meta.at("manifest_sha256").get<std::string>()};
    out.trajectory_chain = meta.at("trajectory_chain").get<std::string>();
  } catch (const nlohmann::json::exception& e) {
    TRAIL_FAIL(meta_path, ": malformed: ", e.what());
  }
  return out;
}

namespace {

// meta.json of the checkpoint in dir, checked to belong to the run `id`, with its files verified
// (format, layout, both files against their recorded SHA-256) and its layout's parameter count
// checked against the model's.
nlohmann::json VerifiedMeta(const std::string& dir, const RunIdentity& id, int64_t parameters) {
  nlohmann::json meta;
  const std::string meta_path = dir + "/" + std::string(kCheckpointMetaFile);
  try {
    meta = nlohmann::json::parse(ReadFileToString(meta_path));
  } catch (const nlohmann::json::exception& e) {
    TRAIL_FAIL(meta_path, ": not valid JSON: ", e.what());
  }
  try {
    TRAIL_CHECK(meta.at("recipe_sha256") == id.recipe_sha256, dir,
                ": checkpoint of another recipe (recipe sha256 ",
                meta.at("recipe_sha256").get<std::string>(), ", this run's ", id.recipe_sha256,
                ")");
    TRAIL_CHECK(meta.at("manifest_sha256") == id.manifest_sha256, dir,
                ": checkpoint of other data (manifest sha256 ",
                meta.at("manifest_sha256").get<std::string>(), ", this run's ", id.manifest_sha256,
                ")");
    VerifyCheckpointFiles(dir);
    const int64_t flat = CheckedLayout(meta, meta_path);
    TRAIL_CHECK(flat < 0 || flat == parameters, meta_path, ": layout of ", flat,
                " parameters, this model has ", parameters);
  } catch (const nlohmann::json::exception& e) {
    TRAIL_FAIL(meta_path, ": malformed: ", e.what());
  }
  return meta;
}

// st's scalars from meta.json.
void SetScalars(const nlohmann::json& meta, const std::string& meta_path, TrainState& st) {
  st.step = JsonInteger<int64_t>(meta.at("step"), meta_path + ": step");
  st.window_cursor = JsonInteger<uint64_t>(meta.at("window_cursor"), meta_path + ": window_cursor");
  st.tokens = JsonInteger<int64_t>(meta.at("tokens_consumed"), meta_path + ": tokens_consumed");
  st.optimizer_updates =
      JsonInteger<int64_t>(meta.at("optimizer_updates"), meta_path + ": optimizer_updates");
  st.norm_history.clear();
  for (uint32_t b : JsonIntegers<uint32_t>(meta.at("spike_norm_history_bits"),
                                           meta_path + ": spike_norm_history_bits")) {
    st.norm_history.push_back(std::bit_cast<float>(b));
  }
  st.monitor_state = meta.at("monitor_state").get<std::string>();
  st.chain = DigestFromHex(meta.at("trajectory_chain").get<std::string>(),
                           meta_path + ": trajectory_chain");
}

// count floats from byte `offset` of the mapped file (inside it: BackToBackData checked).
void CopyFloatsAt(const MappedFile& f, uint64_t offset, int64_t count, float* out) {
  const uint64_t bytes = 4 * static_cast<uint64_t>(count);
  TRAIL_CHECK(offset + bytes <= f.size(), f.path(), ": ", bytes, " bytes at offset ", offset,
              " run past the file's end");
  if (bytes > 0) std::memcpy(out, f.data() + offset, bytes);
}

// The byte offset of the first tensor's data in the file at path, after checking that its
// tensors are `want` (names, dtypes, shapes), back to back in that order.
uint64_t BackToBackData(const std::string& path, const std::vector<TensorMeta>& want) {
  const SafetensorsLayout layout = ReadSafetensorsLayout(path);
  TRAIL_CHECK(layout.tensors.size() == want.size() && !want.empty(), path, ": ",
              layout.tensors.size(), " tensors, this model's state has ", want.size());
  const uint64_t base = layout.tensors[0].offset;
  uint64_t at = base;
  for (size_t i = 0; i < want.size(); ++i) {
    const SafetensorsEntry& e = layout.tensors[i];
    TRAIL_CHECK(e.name == want[i].name && e.dtype == want[i].dtype && e.shape == want[i].shape,
                path, ": tensor ", i, " is '", e.name, "', this model's is '", want[i].name,
                "' (or its dtype or shape differs)");
    TRAIL_CHECK(e.offset == at, path, ": tensor '", e.name,
                "' is not right after the one before it (not a trail checkpoint's layout)");
    at += e.nbytes;
  }
  return base;
}

}  // namespace

void LoadCheckpoint(const std::string& dir, const RunIdentity& id, TrainState& st) {
  const std::string meta_path = dir + "/" + std::string(kCheckpointMetaFile);
  const nlohmann::json meta = VerifiedMeta(dir, id, st.params.numel());
  try {
    Fill(ReadSafetensors(dir + "/" + std::string(kCheckpointModelFile)),
         dir + "/" + std::string(kCheckpointModelFile), {&st.params});
    Fill(ReadSafetensors(dir + "/" + std::string(kCheckpointOptimFile)),
         dir + "/" + std::string(kCheckpointOptimFile), {&st.adam_m(), &st.adam_v()});
    TRAIL_CHECK(ToHex(st.params.StateHash()) == meta.at("params_hash").get<std::string>(), dir,
                ": parameter state hash differs from meta.json");
    TRAIL_CHECK(ToHex(st.OptimizerHash()) == meta.at("optimizer_hash").get<std::string>(), dir,
                ": optimizer state hash differs from meta.json");
    SetScalars(meta, meta_path, st);
  } catch (const nlohmann::json::exception& e) {
    TRAIL_FAIL(meta_path, ": malformed: ", e.what());
  }
}

int64_t VerifyCheckpoint(const std::string& dir, const RunIdentity& id, int64_t parameters) {
  const nlohmann::json meta = VerifiedMeta(dir, id, parameters);
  try {
    return JsonInteger<int64_t>(meta.at("step"), dir + "/meta.json: step");
  } catch (const nlohmann::json::exception& e) {
    TRAIL_FAIL(dir, "/meta.json: malformed: ", e.what());
  }
  return 0;
}

CheckpointRanges LoadCheckpointRanges(const std::string& dir, const RunIdentity& id, TrainState& st,
                                      std::span<const TensorMeta> params, int64_t begin,
                                      int64_t count) {
  const std::string meta_path = dir + "/" + std::string(kCheckpointMetaFile);
  int64_t n = 0;
  std::vector<TensorMeta> moments;
  for (const char* prefix : {"adam_m.", "adam_v."}) {
    for (const TensorMeta& t : params) moments.push_back({prefix + t.name, t.dtype, t.shape});
  }
  for (const TensorMeta& t : params) {
    int64_t e = 1;
    for (int64_t d : t.shape) e *= d;
    n += e;
  }
  TRAIL_CHECK(begin >= 0 && count >= 0 && begin + count <= n, "checkpoint range [", begin, ", ",
              begin + count, ") outside the model's ", n, " parameters");
  const nlohmann::json meta = VerifiedMeta(dir, id, n);
  CheckpointRanges out;
  try {
    const std::string model = dir + "/" + std::string(kCheckpointModelFile),
                      optim = dir + "/" + std::string(kCheckpointOptimFile);
    const uint64_t pbase =
        BackToBackData(model, std::vector<TensorMeta>(params.begin(), params.end()));
    const uint64_t mbase = BackToBackData(optim, moments);
    out.params.resize(count), out.m.resize(count), out.v.resize(count);
    const MappedFile model_file(model), optim_file(optim);
    CopyFloatsAt(model_file, pbase + 4 * begin, count, out.params.data());
    CopyFloatsAt(optim_file, mbase + 4 * begin, count, out.m.data());
    CopyFloatsAt(optim_file, mbase + 4 * (n + begin), count, out.v.data());
    out.params_hash =
        DigestFromHex(meta.at("params_hash").get<std::string>(), meta_path + ": params_hash");
    out.optim_hash =
        DigestFromHex(meta.at("optimizer_hash").get<std::string>(), meta_path + ": optimizer_hash");
    SetScalars(meta, meta_path, st);
  } catch (const nlohmann::json::exception& e) {
    TRAIL_FAIL(meta_path, ": malformed: ", e.what());
  }
  return out;
}

int64_t LoadCheckpointParams(const std::string& dir, const RunIdentity& id,
                             model::ParameterSet& params) {
  const std::string meta_path = dir + "/" + std::string(kCheckpointMetaFile),
                    path = dir + "/" + std::string(kCheckpointModelFile);
  TRAIL_CHECK(fs::exists(meta_path), dir, ": no checkpoint here (meta.json is missing)");
  nlohmann::json meta;
  try {
    meta = nlohmann::json::parse(ReadFileToString(meta_path));
  } catch (const nlohmann::json::exception& e) {
    TRAIL_FAIL(meta_path, ": not valid JSON: ", e.what());
  }
  try {
    TRAIL_CHECK(meta.at("format") == kFormat, meta_path, ": not a ", kFormat, " checkpoint");
    TRAIL_CHECK(meta.at("recipe_sha256") == id.recipe_sha256 &&
                    meta.at("manifest_sha256") == id.manifest_sha256,
                dir, ": a checkpoint of another run (its recipe or data manifest differs)");
    TRAIL_CHECK(fs::exists(path), path, ": missing");
    const std::string got = ToHex(Sha256OfFile(path));
    TRAIL_CHECK(got == meta.at("files").at(kCheckpointModelFile).get<std::string>(), path,
                ": SHA-256 differs from meta.json (corrupted): ", got);
    Fill(ReadSafetensors(path), path, {&params});
    TRAIL_CHECK(ToHex(params.StateHash()) == meta.at("params_hash").get<std::string>(), dir,
                ": parameter state hash differs from meta.json");
    return JsonInteger<int64_t>(meta.at("step"), meta_path + ": step");
  } catch (const nlohmann::json::exception& e) {
    TRAIL_FAIL(meta_path, ": malformed: ", e.what());
  }
  return 0;
}

void ApplyRetention(const std::string& run_dir, int64_t keep, bool keep_step0) {
  const std::vector<int64_t> steps = ListCheckpoints(run_dir);
  for (size_t i = 0; i + static_cast<size_t>(keep) < steps.size(); ++i) {
    if (keep_step0 && steps[i] == 0) continue;
    fs::remove_all(CheckpointDir(run_dir, steps[i]));
  }
}

}  // namespace trail::train
