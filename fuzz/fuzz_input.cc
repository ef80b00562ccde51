#include "fuzz/fuzz_input.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>

namespace trail::fuzz {
namespace {

struct Scratch {
  std::string path;
  Scratch() {
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/trail-fuzz-XXXXXX";
    if (mkdtemp(tmpl.data()) == nullptr) Violated("cannot create a scratch directory " + tmpl);
    path = tmpl;
  }
  ~Scratch() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

}  // namespace

const std::string& ScratchDir() {
  static Scratch scratch;
  return scratch.path;
}

void WriteBytes(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) Violated("cannot write " + path);
}

std::string WriteScratch(const std::string& name, std::string_view bytes) {
  const std::string path = ScratchDir() + "/" + name;
  WriteBytes(path, bytes);
  return path;
}

std::vector<std::string> SplitParts(std::string_view input, size_t parts) {
  static constexpr std::string_view kCut = "\n--8<--\n";
  std::vector<std::string> out;
  while (out.size() + 1 < parts) {
    const size_t at = input.find(kCut);
    if (at == std::string_view::npos) break;
    out.emplace_back(input.substr(0, at));
    input.remove_prefix(at + kCut.size());
  }
  out.emplace_back(input);
  out.resize(parts);
  return out;
}

bool Verbose() {
  static const bool verbose = std::getenv("TRAIL_FUZZ_VERBOSE") != nullptr;
  return verbose;
}

void Violated(const std::string& what) {
  std::fprintf(stderr, "fuzz invariant violated: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace trail::fuzz
