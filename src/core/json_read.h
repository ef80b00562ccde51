// Integers from untrusted JSON. nlohmann's get<int64_t>() converts a floating-point value with a
// C++ cast — undefined behaviour outside the target type's range (a trace with "shape": [1e116])
// — and get<uint64_t>() wraps a negative number around. These accept integers only, in range,
// and otherwise throw trail::Error naming `where`.
#pragma once

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace trail {

template <class T>
T JsonInteger(const nlohmann::json& v, const std::string& where) {
  static_assert(std::is_integral_v<T>);
  TRAIL_CHECK(v.is_number_integer(), where, " must be an integer, not ", v.dump());
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    TRAIL_CHECK(std::in_range<T>(u), where, " is out of range: ", u);
    return static_cast<T>(u);
  }
  const int64_t i = v.get<int64_t>();
  TRAIL_CHECK(std::in_range<T>(i), where, " is out of range: ", i);
  return static_cast<T>(i);
}

template <class T>
std::vector<T> JsonIntegers(const nlohmann::json& v, const std::string& where) {
  TRAIL_CHECK(v.is_array(), where, " must be an array of integers");
  std::vector<T> out;
  out.reserve(v.size());
  for (const nlohmann::json& e : v) out.push_back(JsonInteger<T>(e, where));
  return out;
}

}  // namespace trail
