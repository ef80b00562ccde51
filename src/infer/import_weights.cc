#include "infer/import_weights.h"

#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "core/error.h"
#include "core/half.h"

namespace trail::infer {
namespace fs = std::filesystem;
namespace {

constexpr const char* kIndex = "model.safetensors.index.json";
constexpr const char* kSingle = "model.safetensors";

// A shard's name as the index gives it: a plain file of the folder (no directories, no "..").
void CheckPlainName(const std::string& name, const std::string& index) {
  TRAIL_CHECK(!name.empty() && name.find('/') == std::string::npos &&
                  name.find('\\') == std::string::npos && name != "." && name != "..",
              index, ": weight_map names \"", name, "\", which is not a file of this folder");
}

std::string ShapeText(const std::vector<int64_t>& s) {
  std::string t = "[";
  for (size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + "]";
}

}  // namespace

HfWeights::HfWeights(const std::string& dir) : dir_(dir) {
  const fs::path index = fs::path(dir) / kIndex;
  if (!fs::exists(index)) {
    TRAIL_CHECK(fs::exists(fs::path(dir) / kSingle), dir,
                ": no model.safetensors or model.safetensors.index.json",
                fs::exists(fs::path(dir) / "pytorch_model.bin")
                    ? " (only pytorch_model.bin: trail does not read PyTorch pickles; save the "
                      "model with safe_serialization=True)"
                    : "");
    AddFile(kSingle);
    return;
  }
  files_.push_back(kIndex);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(ReadFileToString(index.string()));
  } catch (const nlohmann::json::exception& e) {
    TRAIL_FAIL(index.string(), ": not valid JSON: ", e.what());
  }
  TRAIL_CHECK(j.is_object() && j.contains("weight_map") && j.at("weight_map").is_object(),
              index.string(), ": no weight_map object");
  std::set<std::string> shards;
  for (const auto& [name, file] : j.at("weight_map").items()) {
    TRAIL_CHECK(file.is_string(), index.string(), ": weight_map[\"", name,
                "\"] is not a file name");
    CheckPlainName(file.get<std::string>(), index.string());
    shards.insert(file.get<std::string>());
  }
  for (const std::string& s : shards) AddFile(s);
  for (const auto& [name, file] : j.at("weight_map").items()) {
    const auto it = where_.find(name);
    TRAIL_CHECK(it != where_.end() && map_names_[it->second.file] == file.get<std::string>(),
                index.string(), ": maps ", name, " to ", file.get<std::string>(),
                ", which does not hold it");
  }
  TRAIL_CHECK(where_.size() == j.at("weight_map").size(), index.string(),
              ": its shards hold tensors the weight_map does not list");
}

void HfWeights::AddFile(const std::string& name) {
  const std::string path = (fs::path(dir_) / name).string();
  TRAIL_CHECK(fs::is_regular_file(path), path, ": missing (the checkpoint names it)");
  const SafetensorsLayout layout = ReadSafetensorsLayout(path);
  const size_t file = maps_.size();
  maps_.push_back(std::make_unique<MappedFile>(path));
  TRAIL_CHECK(maps_.back()->size() == layout.file_size, path, ": changed while being read");
  map_names_.push_back(name);
  files_.push_back(name);
  for (const SafetensorsEntry& e : layout.tensors) {
    TRAIL_CHECK(where_.emplace(e.name, Place{file, e}).second, path, ": tensor ", e.name,
                " is also in ", map_names_[where_.at(e.name).file]);
    read_[e.name] = false;
  }
}

void HfWeights::Check(const std::string& name, const std::vector<int64_t>& shape) const {
  const auto it = where_.find(name);
  TRAIL_CHECK(it != where_.end(), dir_, ": the checkpoint has no tensor ", name,
              " (config.json says the model needs it)");
  const SafetensorsEntry& e = it->second.entry;
  const std::string where = StrCat(dir_, "/", map_names_[it->second.file], ": ", name);
  TRAIL_CHECK(e.shape == shape, where, " has shape ", ShapeText(e.shape),
              " but config.json makes it ", ShapeText(shape));
  TRAIL_CHECK(e.dtype == DType::kF32 || e.dtype == DType::kBF16 || e.dtype == DType::kF16, where,
              " is ", DTypeName(e.dtype), "; trail reads F32, BF16 and F16 weights");
}

std::vector<float> HfWeights::Read(const std::string& name, const std::vector<int64_t>& shape) {
  Check(name, shape);
  const auto it = where_.find(name);
  const SafetensorsEntry& e = it->second.entry;
  const uint8_t* bytes = maps_[it->second.file]->data() + e.offset;
  const size_t n = e.nbytes / DTypeSize(e.dtype);
  std::vector<float> out(n);
  if (e.dtype == DType::kF32) {
    std::memcpy(out.data(), bytes, e.nbytes);
  } else {
    for (size_t i = 0; i < n; ++i) {
      uint16_t h;
      std::memcpy(&h, bytes + 2 * i, 2);
      out[i] = e.dtype == DType::kBF16 ? Bf16ToFloat(h) : HalfToFloat(h);
    }
  }
  read_[name] = true;
  return out;
}

std::vector<std::string> HfWeights::Unread() const {
  std::vector<std::string> out;
  for (const auto& [name, done] : read_) {
    if (!done) out.push_back(name);
  }
  return out;
}

}  // namespace trail::infer
