#include "ingest/token_import.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/error.h"

namespace trail::ingest {
namespace {
using Json = nlohmann::ordered_json;

struct TokenLine {
  std::string key;
  uint32_t domain = 0;
  std::vector<uint32_t> tokens;
};

void ParseTokenLine(const std::string& line, const std::string& where, TokenLine& out) {
  Json j;
  try {
    j = Json::parse(line);
  } catch (const Json::exception& e) {
    TRAIL_FAIL(where, ": not valid JSON: ", e.what());
  }
  TRAIL_CHECK(j.is_object(), where, ": each line must be a JSON object");
  for (auto it = j.begin(); it != j.end(); ++it) {
    TRAIL_CHECK(it.key() == "key" || it.key() == "tokens" || it.key() == "domain", where,
                ": unknown key '", it.key(), "' (expected key, tokens, domain)");
  }
  TRAIL_CHECK(j.contains("key") && j["key"].is_string(), where, ": 'key' must be a string");
  TRAIL_CHECK(j.contains("tokens") && j["tokens"].is_array(), where,
              ": 'tokens' must be an array of token ids");
  out.domain = 0;
  if (j.contains("domain")) {
    TRAIL_CHECK(j["domain"].is_number_unsigned(), where, ": 'domain' must be an unsigned integer");
    out.domain = j["domain"].get<uint32_t>();
  }
  out.tokens.clear();
  for (const Json& t : j["tokens"]) {
    TRAIL_CHECK(t.is_number_unsigned(), where, ": token ids must be non-negative integers");
    out.tokens.push_back(t.get<uint32_t>());
  }
  out.key = j["key"].get<std::string>();
}

}  // namespace

data::ShardSummary ImportTokenJsonl(const std::string& input, const std::string& output,
                                    const data::ShardWriterOptions& options) {
  std::ifstream in(input);
  TRAIL_CHECK(in.good(), input, ": cannot open");
  data::ShardWriter writer(output, options);
  std::string line;
  TokenLine doc;
  for (int64_t n = 1; std::getline(in, line); ++n) {
    const std::string where = input + ":" + std::to_string(n);
    ParseTokenLine(line, where, doc);
    try {
      writer.Add(doc.key, doc.domain, doc.tokens);
    } catch (const Error& e) {
      TRAIL_FAIL(where, ": ", e.what());
    }
  }
  TRAIL_CHECK(in.eof(), input, ": read error");
  return writer.Finish();
}

}  // namespace trail::ingest
