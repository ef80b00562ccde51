#include "tokenizer/unicode.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "tokenizer/pattern_rewrite.h"
#include "tokenizer/pretokenizer.h"

namespace trail::tok {
namespace {

using G = GeneralCategory;

TEST(Unicode, PinnedVersionAndCategories) {
  EXPECT_EQ(UnicodeVersion(), "16.0.0");
  EXPECT_EQ(CategoryOf('A'), G::kLu);
  EXPECT_EQ(CategoryOf('a'), G::kLl);
  EXPECT_EQ(CategoryOf(0x01C5), G::kLt);  // Dž
  EXPECT_EQ(CategoryOf(0x02B0), G::kLm);  // modifier letter small h
  EXPECT_EQ(CategoryOf(0x4E00), G::kLo);
  EXPECT_EQ(CategoryOf(0x0301), G::kMn);
  EXPECT_EQ(CategoryOf('5'), G::kNd);
  EXPECT_EQ(CategoryOf(0x2160), G::kNl);  // Roman numeral one
  EXPECT_EQ(CategoryOf(0x00B2), G::kNo);
  EXPECT_EQ(CategoryOf(' '), G::kZs);
  EXPECT_EQ(CategoryOf(0x2028), G::kZl);
  EXPECT_EQ(CategoryOf(0xE000), G::kCo);
  EXPECT_EQ(CategoryOf(0x0378), G::kCn);
  EXPECT_EQ(CategoryOf(0x110000), G::kCn);
  // Assigned after Unicode 14 (PCRE2 10.42 has them unassigned): Egyptian Hieroglyphs Ext-A,
  // Garay capital and small A (16.0), Cyrillic capital TJE (16.0), Kawi sign (15.0), a CJK
  // Ext-H ideograph (15.0).
  EXPECT_EQ(CategoryOf(0x13460), G::kLo);
  EXPECT_EQ(CategoryOf(0x10D50), G::kLu);
  EXPECT_EQ(CategoryOf(0x10D70), G::kLl);
  EXPECT_EQ(CategoryOf(0x1C89), G::kLu);
  EXPECT_EQ(CategoryOf(0x11F00), G::kMn);
  EXPECT_EQ(CategoryOf(0x31350), G::kLo);
  EXPECT_EQ(CategoryName(G::kLo), "Lo");
}

TEST(Unicode, WhiteSpaceIsTheProperty) {
  const std::vector<char32_t> want = {9,      10,     11,     12,     13,     32,     0x85,
                                      0xA0,   0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004,
                                      0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200A, 0x2028,
                                      0x2029, 0x202F, 0x205F, 0x3000};
  std::vector<char32_t> got;
  for (char32_t c = 0; c <= 0x10FFFF; ++c) {
    if (IsWhiteSpace(c)) got.push_back(c);
  }
  EXPECT_EQ(got, want);  // U+180E MONGOLIAN VOWEL SEPARATOR is not (PCRE2's \s has it)
}

TEST(Unicode, PropertyRangesAgreeWithCategories) {
  for (const char* name : {"L", "Letter", "LC", "Lu", "M", "N", "Nd", "P", "S", "Z", "C", "Cn",
                           "Other_Letter", "Co"}) {
    std::vector<CodeRange> ranges;
    ASSERT_TRUE(PropertyRanges(name, ranges)) << name;
    std::vector<bool> in(0x110000, false);
    for (size_t i = 0; i < ranges.size(); ++i) {
      ASSERT_LE(ranges[i].first, ranges[i].last);
      if (i > 0) {
        ASSERT_GT(ranges[i].first, ranges[i - 1].last + 1) << name << ": not merged";
      }
      for (char32_t c = ranges[i].first; c <= ranges[i].last; ++c) in[c] = true;
    }
    const std::string n = name;
    for (char32_t c = 0; c <= 0x10FFFF; ++c) {
      const std::string_view cat = CategoryName(CategoryOf(c));
      const bool want = n == "Letter"         ? cat[0] == 'L'
                        : n == "Other_Letter" ? cat == "Lo"
                        : n == "LC"           ? cat == "Lu" || cat == "Ll" || cat == "Lt"
                        : n.size() == 1       ? cat[0] == n[0]
                                              : cat == n;
      ASSERT_EQ(in[c], want) << name << " U+" << std::hex << unsigned(c);
    }
  }
  std::vector<CodeRange> r;
  EXPECT_FALSE(PropertyRanges("Han", r));
  EXPECT_FALSE(PropertyRanges("Alphabetic", r));
  const std::vector<CodeRange> c = Complement({{0, 9}, {20, 0x10FFFF}});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].first, 10u);
  EXPECT_EQ(c[0].last, 19u);
}

TEST(Unicode, CaseFolding) {
  EXPECT_EQ(CaseFoldClass('s'), (std::vector<char32_t>{'S', 's', 0x17F}));
  EXPECT_EQ(CaseFoldClass(0x17F), (std::vector<char32_t>{'S', 's', 0x17F}));
  EXPECT_EQ(CaseFoldClass('k'), (std::vector<char32_t>{'K', 'k', 0x212A}));  // Kelvin sign
  EXPECT_EQ(CaseFoldClass('t'), (std::vector<char32_t>{'T', 't'}));
  EXPECT_EQ(CaseFoldClass('\''), (std::vector<char32_t>{'\''}));
  EXPECT_EQ(CaseFoldClass(0x10D50), (std::vector<char32_t>{0x10D50, 0x10D70}));  // Garay, 16.0
}

TEST(PatternRewrite, ClassesBecomeExplicitRanges) {
  EXPECT_EQ(PinUnicodeClasses(R"(\p{Zl})"), R"([\x{2028}])");
  EXPECT_EQ(PinUnicodeClasses(R"([^\p{Zl}\p{Zp}x])"), R"([^\x{2028}\x{2029}x])");
  EXPECT_EQ(
      PinUnicodeClasses(R"(\s)"),
      R"([\x{9}-\x{D}\x{20}\x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}-\x{2029}\x{202F}\x{205F}\x{3000}])");
  EXPECT_EQ(PinUnicodeClasses(R"(a\Q\p{L}\E)"), R"(a\Q\p{L}\E)");
  EXPECT_EQ(PinUnicodeClasses(R"((?i:'s|'t)x)"), R"((?:'[\x{53}\x{73}\x{17F}]|'[\x{54}\x{74}])x)");
  EXPECT_EQ(PinUnicodeClasses(R"(\pL)"), PinUnicodeClasses(R"(\p{L})"));
  EXPECT_EQ(PinUnicodeClasses(R"(\P{L})"), PinUnicodeClasses(R"(\p{^L})"));
  EXPECT_EQ(PinUnicodeClasses(R"(\P{L})"), PinUnicodeClasses(R"([\P{L}])"));
  EXPECT_EQ(PinUnicodeClasses(R"((?!\S)\d)"),
            "(?!" + PinUnicodeClasses(R"([\S])") + ")" + PinUnicodeClasses(R"(\p{Nd})"));
}

TEST(PatternRewrite, RefusesWhatCannotBePinned) {
  for (const char* p : {R"(\p{Han}+)", R"(\w+)", R"(\bx)", R"([[:alpha:]])", R"((?i)s)",
                        R"((?i:[a-z]))", R"((?-i:x))", R"(\X)", R"(\p{L)"}) {
    EXPECT_THROW(PinUnicodeClasses(p), Error) << p;
  }
  try {
    PinUnicodeClasses(R"(\p{Greek}+)");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("\\p{Greek}"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("16.0.0"), std::string::npos) << e.what();
  }
}

TEST(PatternRewrite, RegexSeesTheNewerCharacters) {
  // U+13460 (Unicode 16) is a letter; PCRE2's own tables would call it unassigned.
  const Pretokenizer p(R"(\p{L}+|\P{L}+)", PretokenizerEngine::kRegex);
  const std::string text =
      "a\xF0\x93\x91\xA0"
      "b 1";
  EXPECT_EQ(p.Pieces(text), (std::vector<std::string_view>{"a\xF0\x93\x91\xA0"
                                                           "b",
                                                           " 1"}));
}

}  // namespace
}  // namespace trail::tok
