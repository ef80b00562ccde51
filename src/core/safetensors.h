// The safetensors format (the ecosystem's tensor file): u64 LE header length, a JSON header
// {name: {dtype, shape, data_offsets}, "__metadata__": {string: string}}, then the raw
// little-endian tensor bytes. Reading checks everything a damaged or foreign file can get wrong.
#pragma once

#include <map>
#include <span>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace trail {

using SafetensorsMetadata = std::map<std::string, std::string>;

// Writes the tensors in the order given (names unique), atomically (temp file, fsync, rename).
void WriteSafetensors(const std::string& path, std::span<const Tensor* const> tensors,
                      const SafetensorsMetadata& metadata = {});

struct SafetensorsEntry;
// The bytes WriteSafetensors puts before the data of a file of these tensors (name, dtype and
// shape of each; offset and nbytes are ignored), in this order: the header's length, the JSON
// header, the padding to 8 bytes. The tensors' bytes follow back to back in the same order, so a
// file can be written in pieces by several writers (train/checkpoint.h). `path` names the file
// in errors.
std::string SafetensorsPrefix(std::span<const SafetensorsEntry> tensors,
                              const SafetensorsMetadata& metadata, const std::string& path);

struct SafetensorsFile {
  SafetensorsMetadata metadata;
  std::vector<Tensor> tensors;  // in file order
  const Tensor* Find(const std::string& name) const;
};

// One tensor's place in a safetensors file, checked against the file: `nbytes` bytes from byte
// `offset` of the file (not of its data section).
struct SafetensorsEntry {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  uint64_t offset = 0, nbytes = 0;
};
struct SafetensorsLayout {
  SafetensorsMetadata metadata;
  std::vector<SafetensorsEntry> tensors;  // in file order
  uint64_t file_size = 0;
};

// The header alone, with every check ReadSafetensors makes: what a reader that maps the file
// (and copies nothing) needs.
SafetensorsLayout ReadSafetensorsLayout(const std::string& path);

// Errors name the file and what is wrong: truncated, header not JSON, unknown dtype, offsets
// outside the data or overlapping, a size that disagrees with dtype × shape.
SafetensorsFile ReadSafetensors(const std::string& path);

}  // namespace trail
