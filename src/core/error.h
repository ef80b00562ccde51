// Errors in trail are exceptions of one type, trail::Error, carrying a clear message.
// Kernels check their preconditions with TRAIL_CHECK; callers at the CLI boundary catch and
// report. (One style for the whole project: see docs/repops.md, "Errors".)
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace trail {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

namespace detail {
template <class... Args>
[[noreturn]] void ThrowError(const char* file, int line, const char* cond, const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  os << " [" << cond << " failed at " << file << ":" << line << "]";
  throw Error(os.str());
}
}  // namespace detail

}  // namespace trail

// TRAIL_CHECK(cond, "message parts", value, ...): throws trail::Error when cond is false.
#define TRAIL_CHECK(cond, ...)                                                     \
  do {                                                                             \
    if (!(cond)) ::trail::detail::ThrowError(__FILE__, __LINE__, #cond, __VA_ARGS__); \
  } while (0)
