#include "audit/publication.h"

#include <gtest/gtest.h>

#include "audit/step_reads.h"
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

TEST(Publication, ASignatureThatDoesNotVerifyIsAPublisherError) {
  const SigningKey key = SigningKey::Generate();
  json doc = json::parse(Signed(Statement(), key));
  doc["statement"]["checkpoints"] = {0};
  EXPECT_THROW(ParsePublication(doc.dump(), "p.json"), PublisherError);
}

// The run's attestation.json as far as BindPublisher reads it: its public key.
std::string Attestation(const SigningKey* key) {
  return json{{"statement", json::object()},
              {"public_key", key ? json(key->public_hex()) : json()},
              {"signature", nullptr}}
      .dump();
}

TEST(Publication, BindsThePublisherToTheTrainer) {
  const SigningKey trainer = SigningKey::Generate(), mirror = SigningKey::Generate();
  const Publication own = ParsePublication(Signed(Statement(), trainer), "p.json");
  const Publication other = ParsePublication(Signed(Statement(), mirror), "p.json");
  EXPECT_EQ(own.root, other.root) << "the root is the statement's, whoever signed it";
  EXPECT_EQ(BindPublisher(own, Attestation(&trainer), {}).binding, "trainer");
  const PublisherBinding refused = BindPublisher(other, Attestation(&trainer), {});
  EXPECT_EQ(refused.binding, "refused");
  EXPECT_NE(refused.problem.find("not by the run's trainer (key " + trainer.fingerprint()),
            std::string::npos)
      << refused.problem;
  const PublisherBinding trusted =
      BindPublisher(other, Attestation(&trainer), {mirror.fingerprint()});
  EXPECT_EQ(trusted.binding, "trusted");
  EXPECT_TRUE(trusted.problem.empty());
  EXPECT_EQ(trusted.trainer, trainer.fingerprint());
  EXPECT_EQ(BindPublisher(other, Attestation(nullptr), {}).binding, "unsigned run");
  EXPECT_EQ(BindPublisher(other, "", {}).binding, "unsigned run");
  EXPECT_THROW(BindPublisher(own, "{", {}), Error);
  // With the trainer's key known: a run signed by another key is refused, whoever published it.
  EXPECT_EQ(BindPublisher(own, Attestation(&trainer), {}, trainer.fingerprint()).binding,
            "trainer");
  const PublisherBinding claimed =
      BindPublisher(other, Attestation(&mirror), {}, trainer.fingerprint());
  EXPECT_EQ(claimed.binding, "refused");
  EXPECT_NE(claimed.problem.find("signed by key " + mirror.fingerprint() + ", not by the trainer"),
            std::string::npos)
      << claimed.problem;
  EXPECT_EQ(BindPublisher(other, "", {}, trainer.fingerprint()).binding, "refused");
  EXPECT_EQ(KeyFingerprint(mirror.fingerprint()), mirror.fingerprint());
  EXPECT_THROW(KeyFingerprint("no-such-key.pub"), Error);
}

// The fetch's choice of starting points and the replay's fallbacks follow one rule.
TEST(StartingPoints, OneRuleForTheFetchAndTheReplay) {
  const std::vector<StartPoint> starts = StartPoints({0, 10, 20});
  ASSERT_EQ(starts.size(), 4u);  // the recipe's step 0, then each checkpoint
  EXPECT_EQ(NewestStart(starts, 25, starts.size(), {}), 3);
  EXPECT_EQ(NewestStart(starts, 25, starts.size(), {3}), 2) << "checkpoint 20 rejected";
  EXPECT_EQ(NewestStart(starts, 25, 2, {}), 1) << "only below index 2";
  EXPECT_EQ(NewestStart(starts, 5, starts.size(), {1}), 0) << "checkpoint 0 rejected: the recipe";
  EXPECT_EQ(NewestStart(starts, 5, starts.size(), {0, 1}), -1);
  EXPECT_EQ(StartingCheckpoints({5, 19, 20, 25}, {0, 10, 20}),
            (std::vector<int64_t>{0, 10, 20, 20}));
  EXPECT_EQ(StartingCheckpoints({5, 15}, {10}), (std::vector<int64_t>{-1, 10}));
}

}  // namespace
}  // namespace trail::audit
