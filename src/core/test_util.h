// Helpers shared by the tests of every layer.
#pragma once

#include <string>

#include "core/error.h"

namespace trail {

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

}  // namespace trail
