// Errors in trail are exceptions of one type, trail::Error. Its message (what()) is for the
// user: what is wrong and what to do. Where the error was raised — the failed check and its
// source location — is kept apart in where(), which the CLI prints only under --debug or
// TRAIL_DEBUG=1. Kernels check their preconditions with TRAIL_CHECK; callers at the CLI
// boundary catch and report. (One style for the whole project: see docs/repops.md, "Errors".)
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace trail {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, std::string where = "")
      : std::runtime_error(message), where_(std::move(where)) {}
  // "cond failed at file:line" of the check that raised it ("" when thrown directly).
  const std::string& where() const { return where_; }

 private:
  std::string where_;
};

// The message parts concatenated as TRAIL_CHECK writes them (for messages that are reported
// rather than thrown).
template <class... Args>
std::string StrCat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

namespace detail {
template <class... Args>
[[noreturn]] void ThrowError(const char* file, int line, const char* cond, const Args&... args) {
  std::ostringstream os, where;
  (os << ... << args);
  where << cond << " failed at " << file << ":" << line;
  throw Error(os.str(), where.str());
}
}  // namespace detail

}  // namespace trail

// TRAIL_CHECK(cond, "message parts", value, ...): throws trail::Error when cond is false.
#define TRAIL_CHECK(cond, ...)                                                        \
  do {                                                                                \
    if (!(cond)) ::trail::detail::ThrowError(__FILE__, __LINE__, #cond, __VA_ARGS__); \
  } while (0)

// TRAIL_FAIL("message parts", ...): throws trail::Error unconditionally (e.g. to add context to
// an error caught from a lower layer).
#define TRAIL_FAIL(...) ::trail::detail::ThrowError(__FILE__, __LINE__, "TRAIL_FAIL", __VA_ARGS__)
