#include "audit/publication.h"

#include <gtest/gtest.h>

#include "core/signing.h"
#include "core/test_util.h"

namespace trail::audit {
namespace {

using nlohmann::json;

const std::string kHash(64, 'a');

json File(const std::string& path, uint64_t size, size_t chunks) {
  return {{"path", path},
          {"size", size},
          {"sha256", kHash},
          {"chunks", std::vector<std::string>(chunks, kHash)}};
}

json Statement() {
  return {{"format", kPublicationFormat},
          {"run", {{"genesis", kHash}, {"final_chain", kHash}, {"steps", 3}}},
          {"manifest", "data/manifest.json"},
          {"tokenizer", ""},
          {"checkpoints", {0, 2}},
          {"chunk_bytes", 4096},
          {"files", {File("data/manifest.json", 10, 1), File("run/run.json", 9000, 3)}}};
}

std::string Signed(const json& statement, const SigningKey& key) {
  return json{{"statement", statement},
              {"public_key", key.public_hex()},
              {"signature", key.Sign(std::string(kPublicationFormat) + "\n" + statement.dump())}}
      .dump();
}

TEST(Publication, ParsesASignedFileList) {
  const SigningKey key = SigningKey::Generate();
  const Publication p = ParsePublication(Signed(Statement(), key), "p.json");
  EXPECT_EQ(p.signer, key.fingerprint());
  EXPECT_EQ(p.root.size(), 64u);
  EXPECT_EQ(p.total_bytes(), 9010u);
  ASSERT_NE(p.Find("run/run.json"), nullptr);
  EXPECT_EQ(p.Find("run/run.json")->ChunkEnd(2), 9000u);
  EXPECT_EQ(p.Find("run/missing"), nullptr);
  EXPECT_EQ(p.checkpoints, (std::vector<int64_t>{0, 2}));
}

TEST(Publication, RefusesAlteredListsAndBadEntries) {
  const SigningKey key = SigningKey::Generate();
  json doc = json::parse(Signed(Statement(), key));
  doc["statement"]["files"][1]["size"] = 9001;  // altered after signing
  EXPECT_NE(ErrorOf([&] { ParsePublication(doc.dump(), "p.json"); }).find("does not verify"),
            std::string::npos);
  auto refused = [&](const std::function<void(json&)>& edit, const std::string& why) {
    json s = Statement();
    edit(s);
    const std::string e = ErrorOf([&] { ParsePublication(Signed(s, key), "p.json"); });
    EXPECT_NE(e.find(why), std::string::npos) << why << " / " << e;
  };
  refused([](json& s) { s["files"][1]["path"] = "../run.json"; }, "not a relative path");
  refused([](json& s) { s["files"][1]["path"] = "/etc/passwd"; }, "not a relative path");
  refused([](json& s) { s["files"][1]["chunks"].erase(0); }, "3 chunk hashes expected");
  refused([](json& s) { std::swap(s["files"][0], s["files"][1]); }, "sorted by path");
  refused([](json& s) { s["chunk_bytes"] = 1; }, "chunk_bytes");
  refused([](json& s) { s["files"][0]["size"] = -1; }, "size");
  refused([](json& s) { s["manifest"] = "data/other.json"; }, "is not among the files");
  refused([](json& s) { s["tokenizer"] = "data/t.json"; }, "is not among the files");
  refused([](json& s) { s["format"] = "trail.publication.v0"; }, "not a trail publication");
  EXPECT_NE(ErrorOf([&] { ParsePublication("{", "p.json"); }).find("malformed"), std::string::npos);
}

}  // namespace
}  // namespace trail::audit
