// Element types a tensor can hold, with their canonical codes (part of every tensor hash).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace trail {

// kBF16 and kF16 are read from other tools' files only (core/half.h widens them to float32);
// trail's own state is float32.
enum class DType : uint8_t {
  kF32 = 1,
  kI8 = 2,
  kI32 = 3,
  kU16 = 4,
  kU32 = 5,
  kF64 = 6,
  kBF16 = 7,
  kF16 = 8
};

constexpr size_t DTypeSize(DType t) {
  switch (t) {
    case DType::kF32:
      return 4;
    case DType::kI8:
      return 1;
    case DType::kI32:
      return 4;
    case DType::kU16:
      return 2;
    case DType::kU32:
      return 4;
    case DType::kF64:
      return 8;
    case DType::kBF16:
    case DType::kF16:
      return 2;
  }
  return 0;
}

// Names as safetensors spells them.
constexpr std::string_view DTypeName(DType t) {
  switch (t) {
    case DType::kF32:
      return "F32";
    case DType::kI8:
      return "I8";
    case DType::kI32:
      return "I32";
    case DType::kU16:
      return "U16";
    case DType::kU32:
      return "U32";
    case DType::kF64:
      return "F64";
    case DType::kBF16:
      return "BF16";
    case DType::kF16:
      return "F16";
  }
  return "?";
}

template <class T>
struct DTypeOf;
template <>
struct DTypeOf<float> {
  static constexpr DType value = DType::kF32;
};
template <>
struct DTypeOf<int8_t> {
  static constexpr DType value = DType::kI8;
};
template <>
struct DTypeOf<int32_t> {
  static constexpr DType value = DType::kI32;
};
template <>
struct DTypeOf<uint16_t> {
  static constexpr DType value = DType::kU16;
};
template <>
struct DTypeOf<uint32_t> {
  static constexpr DType value = DType::kU32;
};
template <>
struct DTypeOf<double> {
  static constexpr DType value = DType::kF64;
};

}  // namespace trail
