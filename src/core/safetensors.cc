#include "core/safetensors.h"

#include <algorithm>
#include <cstring>
#include <set>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_util.h"
#include "core/le_bytes.h"

namespace trail {
namespace {

using nlohmann::json;

// The format's own bound on the header (the reference implementation refuses larger ones).
constexpr uint64_t kMaxHeaderBytes = 100'000'000;
constexpr size_t kMaxRank = 16;
constexpr uint64_t kMaxDim = uint64_t{1} << 62;

// A JSON value that must be a non-negative integer (not a float, not negative).
uint64_t Unsigned(const json& v, const std::string& where, const char* what) {
  TRAIL_CHECK(v.is_number_unsigned(), where, ": ", what, " must be a non-negative integer, not ",
              v.dump());
  return v.get<uint64_t>();
}

// Parses the header, refusing a tensor name given twice (plain JSON parsing keeps the last).
json ParseHeader(const char* begin, const char* end, const std::string& path) {
  std::set<std::string> names;
  std::string repeated;
  auto note_keys = [&](int depth, json::parse_event_t event, json& parsed) {
    if (depth == 1 && event == json::parse_event_t::key && repeated.empty() &&
        !names.insert(parsed.get<std::string>()).second) {
      repeated = parsed.get<std::string>();
    }
    return true;
  };
  json header;
  try {
    header = json::parse(begin, end, note_keys);
  } catch (const json::exception& e) {
    TRAIL_FAIL(path, ": safetensors header is not valid JSON: ", e.what());
  }
  TRAIL_CHECK(header.is_object(), path, ": safetensors header is not a JSON object");
  TRAIL_CHECK(repeated.empty(), path, ": tensor name '", repeated, "' appears twice in the header");
  return header;
}

DType ParseDType(const std::string& s, const std::string& where) {
  for (DType t : {DType::kF32, DType::kI8, DType::kI32, DType::kU16, DType::kU32, DType::kF64,
                  DType::kBF16, DType::kF16}) {
    if (DTypeName(t) == s) return t;
  }
  TRAIL_FAIL(where, ": dtype '", s, "' is not supported");
  return DType::kF32;
}

}  // namespace

const Tensor* SafetensorsFile::Find(const std::string& name) const {
  for (const Tensor& t : tensors) {
    if (t.name() == name) return &t;
  }
  return nullptr;
}

std::string SafetensorsPrefix(std::span<const SafetensorsEntry> tensors,
                              const SafetensorsMetadata& metadata, const std::string& path) {
  json header = json::object();
  std::set<std::string> names;
  uint64_t offset = 0;
  for (const SafetensorsEntry& t : tensors) {
    TRAIL_CHECK(t.name != "__metadata__" && names.insert(t.name).second, path, ": tensor name '",
                t.name, "' is repeated or reserved");
    int64_t numel = 1;
    for (int64_t d : t.shape) numel *= d;
    const uint64_t nbytes = static_cast<uint64_t>(numel) * DTypeSize(t.dtype);
    header[t.name] = {{"dtype", std::string(DTypeName(t.dtype))},
                      {"shape", t.shape},
                      {"data_offsets", {offset, offset + nbytes}}};
    offset += nbytes;
  }
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::string text = header.dump();
  text.resize((text.size() + 7) / 8 * 8, ' ');  // the data starts 8-byte aligned
  std::string out(8, '\0');
  PutU64(reinterpret_cast<uint8_t*>(out.data()), text.size());
  return out + text;
}

void WriteSafetensors(const std::string& path, std::span<const Tensor* const> tensors,
                      const SafetensorsMetadata& metadata) {
  std::vector<SafetensorsEntry> entries;
  for (const Tensor* t : tensors) entries.push_back({t->name(), t->dtype(), t->shape()});
  const std::string prefix = SafetensorsPrefix(entries, metadata, path);
  AtomicFile f(path);
  f.Write(prefix.data(), prefix.size());
  for (const Tensor* t : tensors) f.Write(t->bytes(), t->nbytes());
  f.Commit();
}

namespace {

// Parses and checks the header of a safetensors file of `size` bytes at p (the data need not be
// resident: only the header's bytes are read).
SafetensorsLayout ParseLayout(const uint8_t* p, uint64_t size, const std::string& path) {
  TRAIL_CHECK(size >= 8, path, ": truncated safetensors file (", size, " bytes)");
  const uint64_t header_len = GetU64(p);
  TRAIL_CHECK(header_len <= size - 8, path, ": truncated safetensors file: header of ", header_len,
              " bytes, file of ", size);
  TRAIL_CHECK(header_len <= kMaxHeaderBytes, path, ": safetensors header of ", header_len,
              " bytes is beyond the format's limit of ", kMaxHeaderBytes);
  const json header = ParseHeader(reinterpret_cast<const char*>(p + 8),
                                  reinterpret_cast<const char*>(p + 8 + header_len), path);
  const uint64_t data_begin = 8 + header_len;
  const uint64_t data_size = size - data_begin;

  SafetensorsLayout out;
  out.file_size = size;
  struct Entry {
    uint64_t begin, end;
    std::string name;
    DType dtype;
    std::vector<int64_t> shape;
  };
  std::vector<Entry> entries;
  for (const auto& [name, v] : header.items()) {
    const std::string where = path + ": tensor '" + name + "'";
    if (name == "__metadata__") {
      TRAIL_CHECK(v.is_object(), path, ": __metadata__ must be an object of strings");
      for (const auto& [k, s] : v.items()) {
        TRAIL_CHECK(s.is_string(), path, ": __metadata__.", k, " is not a string");
        out.metadata[k] = s.get<std::string>();
      }
      continue;
    }
    TRAIL_CHECK(v.is_object() && v.size() == 3 && v.contains("dtype") && v.contains("shape") &&
                    v.contains("data_offsets"),
                where, " must have exactly dtype, shape and data_offsets [begin, end]");
    const json& offsets = v["data_offsets"];
    const json& shape = v["shape"];
    TRAIL_CHECK(offsets.is_array() && offsets.size() == 2, where,
                ": data_offsets must be [begin, end]");
    TRAIL_CHECK(shape.is_array() && shape.size() <= kMaxRank, where,
                ": shape must be an array of at most ", kMaxRank, " dimensions");
    TRAIL_CHECK(v["dtype"].is_string(), where, ": dtype must be a string");
    Entry e{Unsigned(offsets[0], where, "data_offsets"),
            Unsigned(offsets[1], where, "data_offsets"),
            name,
            ParseDType(v["dtype"].get<std::string>(), where),
            {}};
    for (const json& d : shape) {
      const uint64_t dim = Unsigned(d, where, "a dimension");
      TRAIL_CHECK(dim <= kMaxDim, where, ": dimension ", dim, " is absurdly large");
      e.shape.push_back(static_cast<int64_t>(dim));
    }
    entries.push_back(std::move(e));
  }
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.begin < b.begin; });
  uint64_t expect = 0;
  for (Entry& e : entries) {
    const std::string where = path + ": tensor '" + e.name + "'";
    // Checked before anything is allocated: the elements must fit the file's data.
    uint64_t numel = 1;
    for (int64_t d : e.shape) {
      TRAIL_CHECK(
          !__builtin_mul_overflow(numel, static_cast<uint64_t>(d), &numel) && numel <= data_size,
          where, " has a shape of more elements than the file holds");
    }
    TRAIL_CHECK(e.begin == expect && e.end >= e.begin, where, " data_offsets [", e.begin, ", ",
                e.end, ") overlap or leave a gap (expected to start at ", expect, ")");
    TRAIL_CHECK(e.end - e.begin == numel * DTypeSize(e.dtype), where, " holds ", e.end - e.begin,
                " bytes but dtype and shape need ", numel * DTypeSize(e.dtype));
    TRAIL_CHECK(e.end <= data_size, where, " ends at byte ", e.end, " but the file has only ",
                data_size, " data bytes (truncated?)");
    out.tensors.push_back(
        {std::move(e.name), e.dtype, std::move(e.shape), data_begin + e.begin, e.end - e.begin});
    expect = e.end;
  }
  TRAIL_CHECK(expect == data_size, path, ": ", data_size - expect,
              " trailing bytes after the last tensor");
  return out;
}

}  // namespace

SafetensorsLayout ReadSafetensorsLayout(const std::string& path) {
  const MappedFile file(path);
  return ParseLayout(file.data(), file.size(), path);
}

SafetensorsFile ReadSafetensors(const std::string& path) {
  const MappedFile file(path);
  SafetensorsLayout layout = ParseLayout(file.data(), file.size(), path);
  SafetensorsFile out;
  out.metadata = std::move(layout.metadata);
  for (SafetensorsEntry& e : layout.tensors) {
    Tensor t(std::move(e.name), e.dtype, std::move(e.shape));
    if (t.nbytes() > 0) std::memcpy(t.bytes(), file.data() + e.offset, t.nbytes());
    out.tensors.push_back(std::move(t));
  }
  return out;
}

}  // namespace trail
