// The tensors of a Hugging Face checkpoint folder (import_hf.h): model.safetensors, or the shards
// model.safetensors.index.json maps. Each file is memory-mapped; a tensor is read once, widened
// to float32 (F32, BF16, F16), and remembered as read, so what is left over can be named.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/file_util.h"
#include "core/safetensors.h"

namespace trail::infer {

class HfWeights {
 public:
  // Throws trail::Error for a missing or malformed file, an index naming a file outside `dir`
  // or a tensor its file lacks, a tensor in two files, or only a PyTorch pickle checkpoint.
  explicit HfWeights(const std::string& dir);

  // The files read, relative to the folder (the index first, when there is one).
  const std::vector<std::string>& files() const { return files_; }
  bool Has(const std::string& name) const { return where_.count(name) == 1; }
  // The tensor as float32; its shape must be `shape`. Throws trail::Error naming the file and
  // tensor for a missing tensor, another shape or a dtype other than F32, BF16, F16.
  std::vector<float> Read(const std::string& name, const std::vector<int64_t>& shape);
  // Read's checks without reading: what an import makes sure of before it allocates anything.
  void Check(const std::string& name, const std::vector<int64_t>& shape) const;
  // The tensors not read yet, sorted.
  std::vector<std::string> Unread() const;

 private:
  struct Place {
    size_t file;
    SafetensorsEntry entry;
  };
  void AddFile(const std::string& name);
  std::string dir_;
  std::vector<std::string> files_;  // relative names
  std::vector<std::unique_ptr<MappedFile>>
      maps_;  // safetensors files, in files_ order after the index
  std::vector<std::string> map_names_;
  std::map<std::string, Place> where_;
  std::map<std::string, bool> read_;
};

}  // namespace trail::infer
