// Helpers shared by the fuzz targets (fuzz/*_fuzz.cc). Each target defines
// LLVMFuzzerTestOneInput(data, size), is linked with libFuzzer in a fuzzing build (clang,
// TRAIL_FUZZ=ON) and with replay_main.cc otherwise, which runs committed inputs in `make test`.
//
// The oracle every target shares: a reader refuses bad input by throwing trail::Error (a message
// for the user) and nothing else. Any other exception escapes and aborts — a finding, because
// the user would see a bare library message or a crash; so does a sanitizer report, an
// allocation beyond libFuzzer's -malloc_limit_mb, or a time-out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace trail::fuzz {

// The input as bytes.
inline std::string_view AsText(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// A scratch directory of this process, created once and reused for every input (readers take
// paths). Under $TMPDIR, removed at exit.
const std::string& ScratchDir();

// Writes the bytes to `path` (replacing it; no fsync: the scratch files are throwaway).
void WriteBytes(const std::string& path, std::string_view bytes);

// Writes the bytes to ScratchDir()/name (replacing it) and returns the path.
std::string WriteScratch(const std::string& name, std::string_view bytes);

// Inputs made of several files are split at lines holding exactly "--8<--" (the seeds use it);
// missing parts are empty.
std::vector<std::string> SplitParts(std::string_view input, size_t parts);

// Whether $TRAIL_FUZZ_VERBOSE is set: refusals are then printed (to see what a seed reaches).
bool Verbose();

// Runs fn; a trail::Error is the accepted way to refuse the input.
template <class F>
bool Refused(F&& fn) {
  try {
    fn();
    return false;
  } catch (const trail::Error& e) {
    if (Verbose()) std::fprintf(stderr, "refused: %s\n", e.what());
    return true;
  }
}

// A broken invariant: prints what and aborts (the fuzzer saves the input).
[[noreturn]] void Violated(const std::string& what);

}  // namespace trail::fuzz
