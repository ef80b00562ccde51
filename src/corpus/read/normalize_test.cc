#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "corpus/read/fortune.h"
#include "corpus/read/normalize.h"

namespace trail::corpus {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(Normalize, EsperantoInThreeEncodingsBecomesOneTextAndDeduplicates) {
  const std::string dir = "/usr/share/games/fortunes/";
  const std::string utf8 = Slurp(dir + "eo/proverbaro");
  const std::string ascii = Slurp(dir + "eo-ascii/proverbaro");
  const std::string iso3 = Slurp(dir + "eo-iso3/proverbaro");
  ASSERT_FALSE(utf8.empty() || ascii.empty() || iso3.empty())
      << "fortunes-eo, fortunes-eo-ascii, fortunes-eo-iso3 missing: run scripts/install-deps.sh";
  NormalizeConfig plain, latin3, xsys;
  latin3.declared_encoding = "ISO-8859-3";
  xsys.esperanto_x_system = true;
  NormalizeStats s3;
  const std::string a = NormalizeText(utf8, plain);
  const std::string b = NormalizeText(iso3, latin3, &s3);
  const std::string c = NormalizeText(ascii, xsys);
  EXPECT_EQ(s3.encoding, "ISO-8859-3");
  EXPECT_EQ(s3.replaced, 0u);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a, c);
  // Exact dedup over the three sources' records: one survivor per proverb.
  std::map<std::string, std::string> survivor;  // content hash -> smallest key
  size_t records = 0;
  for (const auto& [name, text] : std::vector<std::pair<std::string, std::string>>{
           {"eo", a}, {"eo-ascii", c}, {"eo-iso3", b}}) {
    for (const FortuneRecord& r : FortuneRecords(text)) {
      const std::string key = name + ":" + std::to_string(r.index);
      auto [it, fresh] = survivor.emplace(ContentHash(r.text), key);
      if (!fresh && key < it->second) it->second = key;
      ++records;
    }
  }
  std::printf("Esperanto: %zu records from 3 encodings -> %zu distinct\n", records,
              survivor.size());
  EXPECT_EQ(records, 3 * 2626u);
  EXPECT_EQ(survivor.size(), 2626u);
  // The survivor is the smallest key in byte order: "eo-ascii:…" sorts before "eo:…".
  for (const auto& [h, key] : survivor) EXPECT_EQ(key.rfind("eo-ascii:", 0), 0u) << key;
}

TEST(Normalize, VimTutorsInLegacyEncodingsMatchTheirUtf8Versions) {
  const std::string dir = "/usr/share/vim/vim90/tutor/";
  // (legacy file, its UTF-8 sibling); the encodings are detected, not declared.
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"tutor.ru", "tutor.ru.utf-8"},       {"tutor.ja.euc", "tutor.ja.utf-8"},
      {"tutor.ja.sjis", "tutor.ja.utf-8"},  {"tutor.ko.euc", "tutor.ko.utf-8"},
      {"tutor.el.cp737", "tutor.el.utf-8"}, {"tutor.cs.cp1250", "tutor.cs.utf-8"},
      {"tutor.de", "tutor.de.utf-8"}};
  int same = 0, checked = 0;
  for (const auto& [legacy, utf8] : pairs) {
    const std::string x = Slurp(dir + legacy), y = Slurp(dir + utf8);
    if (x.empty() || y.empty()) continue;
    ++checked;
    NormalizeStats st;
    const std::string nx = NormalizeText(x, {}, &st), ny = NormalizeText(y, {});
    const bool eq = nx == ny;
    same += eq;
    std::printf("  %-16s detected %-12s %s\n", legacy.c_str(), st.encoding.c_str(),
                eq ? "== its UTF-8 version" : "differs");
  }
  EXPECT_EQ(checked, 7);
  EXPECT_GE(same, 6);
  // ICU cannot detect DOS Greek (cp737); declared, it converts exactly.
  NormalizeConfig greek;
  greek.declared_encoding = "ibm-737";
  EXPECT_EQ(NormalizeText(Slurp(dir + "tutor.el.cp737"), greek),
            NormalizeText(Slurp(dir + "tutor.el.utf-8"), {}));
}

TEST(Normalize, ControlsLineEndsAndNfc) {
  NormalizeStats st;
  EXPECT_EQ(NormalizeText("a\r\nb\rc\x01\x7f"
                          "d\tE\xcc\x81",
                          {}, &st),
            "a\nb\ncd\t\xc3\x89");
  EXPECT_EQ(st.controls_removed, 2u);
  EXPECT_EQ(ContentHash("x").size(), 32u);
}

// The control-character pass as written first (byte by byte), the reference for the one that
// copies runs of ordinary bytes whole.
std::string ControlsByteByByte(const std::string& utf8, uint64_t* removed) {
  std::string out;
  for (size_t i = 0; i < utf8.size(); ++i) {
    const unsigned char c = utf8[i];
    if (c == '\r') {
      out += '\n';
      if (i + 1 < utf8.size() && utf8[i + 1] == '\n') ++i;
    } else if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7F) {
      ++*removed;
    } else if (c == 0xC2 && i + 1 < utf8.size() &&
               static_cast<unsigned char>(utf8[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(utf8[i + 1]) <= 0x9F) {
      ++*removed;
      ++i;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

TEST(Normalize, ValidNfcTextTakesTheShortPathWithTheSameResult) {
  // Random valid UTF-8 dense in what the passes treat specially (CR, LF, tab, C0, DEL, C1 as
  // U+0080..U+009F, U+00A0.. after the same lead byte, a combining accent that NFC composes).
  const std::vector<std::string> pieces = {"a",
                                           "Z",
                                           " ",
                                           "\r",
                                           "\n",
                                           "\r\n",
                                           "\t",
                                           "\x01",
                                           "\x1f",
                                           "\x7f",
                                           "\xc2\x85",
                                           "\xc2\x9f",
                                           "\xc2\xa0",
                                           "\xc3\xa9",
                                           "e\xcc\x81",
                                           "\xe2\x80\xa6",
                                           "\xf0\x9f\x98\x80"};
  uint64_t seed = 7;
  for (int round = 0; round < 2000; ++round) {
    std::string text;
    for (int k = 0; k < 40; ++k) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      text += pieces[(seed >> 33) % pieces.size()];
    }
    NormalizeStats st;
    const std::string got = NormalizeText(text, {}, &st);
    // The reference: NFC composes each e + combining acute to é (nothing else here changes
    // under NFC; a text without one is already NFC and takes the short path), then the
    // byte-by-byte control pass.
    std::string nfc = text;
    for (size_t at; (at = nfc.find("e\xcc\x81")) != std::string::npos;)
      nfc.replace(at, 3, "\xc3\xa9");
    uint64_t removed = 0;
    EXPECT_EQ(got, ControlsByteByByte(nfc, &removed)) << round;
    EXPECT_EQ(st.controls_removed, removed) << round;
    EXPECT_EQ(st.encoding, "UTF-8");
    EXPECT_EQ(NormalizeText(got, {}, nullptr), got) << "normalizing is idempotent";
  }
}

}  // namespace
}  // namespace trail::corpus
