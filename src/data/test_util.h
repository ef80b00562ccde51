// Helpers shared by the data tests.
#pragma once

#include <string>

#include "core/error.h"

namespace trail::data {

// The message of the trail::Error that f throws, or "" when it throws none.
template <class F>
std::string ErrorOf(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace trail::data
