#include "core/golden.h"

#include <sstream>

#include "core/error.h"

namespace trail {

extern const char kGoldenRepopsText[];      // generated from goldens/repops.txt
extern const char kGoldenStreamText[];      // generated from goldens/stream.txt
extern const char kGoldenTrainingText[];    // generated from goldens/training.txt
extern const char kGoldenGenerationText[];  // generated from goldens/generation.txt

namespace {

bool IsLowerHex(const std::string& s) {
  return s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

const char* Header(std::string_view set) {
  if (set == "repops")
    return "# RepOps golden cases (docs/goldens.md): case name, SHA-256 of its output buffers.";
  if (set == "stream") return "# The canonical data stream's golden digests (docs/goldens.md §2).";
  if (set == "generation")
    return "# Golden generations (docs/goldens.md): case name, SHA-256 of logits, tokens and "
           "log-probs.";
  return "# Golden training runs (docs/goldens.md): case name, final chained trajectory hash.";
}

}  // namespace

GoldenTable ParseGoldenTable(const std::string& text, const std::string& file) {
  GoldenTable out;
  std::istringstream in(text);
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    std::string name, digest, extra;
    ls >> name >> digest;
    TRAIL_CHECK(!name.empty() && digest.size() == 64 && IsLowerHex(digest) && !(ls >> extra), file,
                ", line ", lineno, ": expected '<case> <64 hex digits>', got '", line, "'");
    TRAIL_CHECK(out.emplace(name, digest).second, file, ", line ", lineno, ": duplicate case '",
                name, "'");
  }
  return out;
}

const GoldenTable& CommittedGoldens(std::string_view set) {
  static const GoldenTable repops = ParseGoldenTable(kGoldenRepopsText, "goldens/repops.txt");
  static const GoldenTable stream = ParseGoldenTable(kGoldenStreamText, "goldens/stream.txt");
  static const GoldenTable training = ParseGoldenTable(kGoldenTrainingText, "goldens/training.txt");
  if (set == "repops") return repops;
  static const GoldenTable generation =
      ParseGoldenTable(kGoldenGenerationText, "goldens/generation.txt");
  if (set == "stream") return stream;
  if (set == "generation") return generation;
  TRAIL_CHECK(set == "training", "no golden set '", set,
              "' (repops, stream, training, generation)");
  return training;
}

std::string GoldenFileText(std::string_view set, const GoldenTable& table) {
  std::string out = std::string(Header(set)) + "\n";
  for (const auto& [name, digest] : table) out += name + " " + digest + "\n";
  return out;
}

}  // namespace trail
