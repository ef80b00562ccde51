// Validators for numeric flags whose messages say what is wanted in plain words (CLI11's own
// print a range up to the largest double, 309 digits long).
#pragma once

#include <CLI/CLI.hpp>

#include <cstdlib>
#include <string>

namespace trail::cli {

namespace detail {
// Accepts a number v with v >= min (or v > min when strict).
inline CLI::Validator Bound(long double min, bool strict, const std::string& what) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        char* end = nullptr;
        const long double v = std::strtold(text.c_str(), &end);
        if (end == text.c_str() || *end != '\0') return "'" + text + "' is not a number";
        if (!(strict ? v > min : v >= min)) return "must be " + what + ", got " + text;
        return "";
      },
      what);
}
}  // namespace detail

// 0 or more (a step, a window, an index).
inline const CLI::Validator kNonNegative = detail::Bound(0, false, "0 or more");
// More than 0 (a count, a size).
inline const CLI::Validator kPositive = detail::Bound(0, true, "more than 0");

}  // namespace trail::cli
