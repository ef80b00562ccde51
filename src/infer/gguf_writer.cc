#include "infer/gguf_writer.h"

#include <bit>
#include <cstring>

#include "core/error.h"
#include "core/file_util.h"
#include "core/le_bytes.h"

namespace trail::infer {
namespace {

enum ValueType : uint32_t { kU32 = 4, kI32 = 5, kF32 = 6, kBool = 7, kString = 8, kArray = 9 };

void PutString(std::string& s, const std::string& v) {
  AppendU64(s, v.size());
  s += v;
}

}  // namespace

uint16_t FloatToHalf(float x) {
  const uint32_t f = std::bit_cast<uint32_t>(x);
  const uint16_t sign = static_cast<uint16_t>((f >> 16) & 0x8000u);
  const uint32_t abs = f & 0x7FFFFFFFu;
  if (abs >= 0x7F800000u) {  // infinity or NaN (kept a quiet NaN)
    return sign | (abs > 0x7F800000u ? 0x7E00u : 0x7C00u);
  }
  if (abs >= 0x477FF000u) return sign | 0x7C00u;  // rounds past the largest half: infinity
  if (abs < 0x38800000u) {               // below the smallest normal half: a subnormal (or zero)
    if (abs < 0x33000000u) return sign;  // below half the smallest subnormal: rounds to zero
    const uint32_t exp = abs >> 23, mant = (abs & 0x7FFFFFu) | 0x800000u;
    const uint32_t shift = 126 - exp;  // the value is mant · 2^(exp-150); half units are 2^-24
    const uint32_t q = mant >> shift, rest = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
    const uint32_t r = q + (rest > half || (rest == half && (q & 1u)));
    return sign | static_cast<uint16_t>(r);
  }
  // Normal: rebias the exponent and round the mantissa's low 13 bits to nearest even (a carry
  // into the exponent is the right result).
  const uint32_t base = abs - 0x38000000u;
  const uint32_t q = base >> 13, rest = base & 0x1FFFu;
  return sign | static_cast<uint16_t>(q + (rest > 0x1000u || (rest == 0x1000u && (q & 1u))));
}

GgufWriter::GgufWriter(uint32_t alignment) : alignment_(alignment) {
  TRAIL_CHECK(alignment > 0 && alignment % 8 == 0, "gguf: alignment ", alignment,
              " is not a positive multiple of 8");
  AddU32("general.alignment", alignment);
}

void GgufWriter::AddU32(const std::string& key, uint32_t v) {
  PutString(kv_, key), AppendU32(kv_, kU32), AppendU32(kv_, v), ++kv_count_;
}
void GgufWriter::AddI32(const std::string& key, int32_t v) {
  PutString(kv_, key), AppendU32(kv_, kI32), AppendU32(kv_, static_cast<uint32_t>(v)), ++kv_count_;
}
void GgufWriter::AddF32(const std::string& key, float v) {
  PutString(kv_, key), AppendU32(kv_, kF32), AppendU32(kv_, std::bit_cast<uint32_t>(v)),
      ++kv_count_;
}
void GgufWriter::AddBool(const std::string& key, bool v) {
  PutString(kv_, key), AppendU32(kv_, kBool), kv_.push_back(v ? 1 : 0), ++kv_count_;
}
void GgufWriter::AddString(const std::string& key, const std::string& v) {
  PutString(kv_, key), AppendU32(kv_, kString), PutString(kv_, v), ++kv_count_;
}
void GgufWriter::AddStringArray(const std::string& key, const std::vector<std::string>& v) {
  PutString(kv_, key), AppendU32(kv_, kArray), AppendU32(kv_, kString), AppendU64(kv_, v.size());
  for (const std::string& s : v) PutString(kv_, s);
  ++kv_count_;
}
void GgufWriter::AddI32Array(const std::string& key, const std::vector<int32_t>& v) {
  PutString(kv_, key), AppendU32(kv_, kArray), AppendU32(kv_, kI32), AppendU64(kv_, v.size());
  for (int32_t x : v) AppendU32(kv_, static_cast<uint32_t>(x));
  ++kv_count_;
}

void GgufWriter::AddTensor(const std::string& name, const std::vector<int64_t>& ne, GgufType type,
                           const std::vector<float>& data) {
  int64_t n = 1;
  for (int64_t e : ne) n *= e;
  TRAIL_CHECK(n == static_cast<int64_t>(data.size()), "gguf: tensor ", name, " has ", data.size(),
              " values for its shape");
  TensorInfo t{name, ne, type, {}};
  if (type == GgufType::kF32) {
    t.bytes.assign(reinterpret_cast<const char*>(data.data()), data.size() * 4);
  } else {
    t.bytes.resize(data.size() * 2);
    for (size_t i = 0; i < data.size(); ++i) {
      const uint16_t h = FloatToHalf(data[i]);
      std::memcpy(t.bytes.data() + 2 * i, &h, 2);
    }
  }
  tensors_.push_back(std::move(t));
}

void GgufWriter::Write(const std::string& path) const {
  auto pad = [&](uint64_t n) { return (alignment_ - n % alignment_) % alignment_; };
  std::string head = "GGUF";
  AppendU32(head, 3);
  AppendU64(head, tensors_.size());
  AppendU64(head, kv_count_);
  head += kv_;
  uint64_t offset = 0;
  for (const TensorInfo& t : tensors_) {
    PutString(head, t.name);
    AppendU32(head, static_cast<uint32_t>(t.ne.size()));
    for (int64_t e : t.ne) AppendU64(head, static_cast<uint64_t>(e));
    AppendU32(head, static_cast<uint32_t>(t.type));
    AppendU64(head, offset);
    offset += t.bytes.size() + pad(t.bytes.size());
  }
  head.append(pad(head.size()), '\0');
  AtomicFile file(path);
  file.Write(head.data(), head.size());
  const std::string zeros(alignment_, '\0');
  for (const TensorInfo& t : tensors_) {
    file.Write(t.bytes.data(), t.bytes.size());
    file.Write(zeros.data(), pad(t.bytes.size()));
  }
  file.Commit();
}

}  // namespace trail::infer
