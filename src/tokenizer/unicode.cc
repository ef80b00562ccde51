#include "tokenizer/unicode.h"

#include <algorithm>
#include <array>
#include <map>
#include <string>

#include "tokenizer/code_point_map.h"

namespace trail::tok {
namespace {

using enum GeneralCategory;

struct CategoryRange {
  char32_t first, last;
  GeneralCategory category;
};
struct CaseFoldPair {
  char32_t from, to;
};

#include "tokenizer/unicode_data.inc"

constexpr char32_t kMaxCodePoint = 0x10FFFF;
constexpr std::array<std::string_view, static_cast<size_t>(kCount)> kShortNames = {
    "Cn", "Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Pc", "Pd", "Ps",
    "Pe", "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co"};
// clang-format off
constexpr std::array<std::string_view, static_cast<size_t>(kCount)> kLongNames = {
    "Unassigned", "Uppercase_Letter", "Lowercase_Letter", "Titlecase_Letter", "Modifier_Letter",
    "Other_Letter", "Nonspacing_Mark", "Spacing_Mark", "Enclosing_Mark", "Decimal_Number",
    "Letter_Number", "Other_Number", "Connector_Punctuation", "Dash_Punctuation",
    "Open_Punctuation", "Close_Punctuation", "Initial_Punctuation", "Final_Punctuation",
    "Other_Punctuation", "Math_Symbol", "Currency_Symbol", "Modifier_Symbol", "Other_Symbol",
    "Space_Separator", "Line_Separator", "Paragraph_Separator", "Control", "Format", "Surrogate",
    "Private_Use"};
// clang-format on

// The category of every code point, from the ranges (code points in none are Cn).
CodePointMap<GeneralCategory> BuildCategories() {
  std::vector<GeneralCategory> all(kMaxCodePoint + 1, kCn);
  for (const CategoryRange& r : kCategoryRanges) {
    std::fill(all.begin() + r.first, all.begin() + r.last + 1, r.category);
  }
  return CodePointMap<GeneralCategory>([&](char32_t cp) { return all[cp]; });
}

const CodePointMap<GeneralCategory>& Categories() {
  static const CodePointMap<GeneralCategory> table = BuildCategories();
  return table;
}

// The group a name denotes, as the first letter of its categories' short names ('L' for "L" or
// "Letter"), '&' for the cased letters (LC), 0 for a name that is not a group.
char GroupOf(std::string_view name) {
  static const std::map<std::string_view, char> kGroups = {{"L", 'L'},
                                                           {"Letter", 'L'},
                                                           {"LC", '&'},
                                                           {"L&", '&'},
                                                           {"Cased_Letter", '&'},
                                                           {"M", 'M'},
                                                           {"Mark", 'M'},
                                                           {"Combining_Mark", 'M'},
                                                           {"N", 'N'},
                                                           {"Number", 'N'},
                                                           {"P", 'P'},
                                                           {"Punctuation", 'P'},
                                                           {"punct", 'P'},
                                                           {"S", 'S'},
                                                           {"Symbol", 'S'},
                                                           {"Z", 'Z'},
                                                           {"Separator", 'Z'},
                                                           {"C", 'C'},
                                                           {"Other", 'C'}};
  const auto it = kGroups.find(name);
  return it == kGroups.end() ? 0 : it->second;
}

bool InGroup(char group, GeneralCategory c) {
  if (group == '&') return c == kLu || c == kLl || c == kLt;
  return group != 0 && kShortNames[static_cast<size_t>(c)][0] == group;
}

void AppendRange(std::vector<CodeRange>& out, char32_t first, char32_t last) {
  if (!out.empty() && out.back().last + 1 == first) {
    out.back().last = last;
  } else {
    out.push_back({first, last});
  }
}

}  // namespace

std::string_view UnicodeVersion() { return kUnicodeDataVersion; }

std::string_view CategoryName(GeneralCategory c) { return kShortNames[static_cast<size_t>(c)]; }

GeneralCategory CategoryOf(char32_t cp) { return cp > kMaxCodePoint ? kCn : Categories()[cp]; }

bool IsWhiteSpace(char32_t cp) {
  for (const CodeRange& r : kWhiteSpaceRanges) {
    if (cp >= r.first && cp <= r.last) return true;
  }
  return false;
}

char32_t SimpleCaseFold(char32_t cp) {
  const auto* end = std::end(kSimpleCaseFolding);
  const auto* it = std::lower_bound(std::begin(kSimpleCaseFolding), end, cp,
                                    [](const CaseFoldPair& p, char32_t c) { return p.from < c; });
  return it != end && it->from == cp ? it->to : cp;
}

std::vector<char32_t> CaseFoldClass(char32_t cp) {
  const char32_t folded = SimpleCaseFold(cp);
  std::vector<char32_t> out = {folded};
  for (const CaseFoldPair& p : kSimpleCaseFolding) {
    if (p.to == folded) out.push_back(p.from);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool PropertyRanges(std::string_view name, std::vector<CodeRange>& out) {
  out.clear();
  if (name == "White_Space") {
    for (const CodeRange& r : kWhiteSpaceRanges) AppendRange(out, r.first, r.last);
    return true;
  }
  const char group = GroupOf(name);
  std::array<bool, static_cast<size_t>(kCount)> want{};
  bool any = false;
  for (size_t c = 0; c < want.size(); ++c) {
    const auto cat = static_cast<GeneralCategory>(c);
    want[c] = name == kShortNames[c] || name == kLongNames[c] || InGroup(group, cat);
    any = any || want[c];
  }
  if (!any) return false;
  // Walk the assigned ranges; the gaps between them are Cn.
  char32_t next = 0;
  for (const CategoryRange& r : kCategoryRanges) {
    if (r.first > next && want[static_cast<size_t>(kCn)]) AppendRange(out, next, r.first - 1);
    if (want[static_cast<size_t>(r.category)]) AppendRange(out, r.first, r.last);
    next = r.last + 1;
  }
  if (next <= kMaxCodePoint && want[static_cast<size_t>(kCn)])
    AppendRange(out, next, kMaxCodePoint);
  return true;
}

std::vector<CodeRange> Complement(const std::vector<CodeRange>& ranges) {
  std::vector<CodeRange> out;
  char32_t next = 0;
  for (const CodeRange& r : ranges) {
    if (r.first > next) out.push_back({next, r.first - 1});
    next = r.last + 1;
  }
  if (next <= kMaxCodePoint) out.push_back({next, kMaxCodePoint});
  return out;
}

}  // namespace trail::tok
