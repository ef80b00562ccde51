#include "tokenizer/pattern_rewrite.h"

#include <cctype>
#include <cstdio>
#include <vector>

#include "core/error.h"
#include "core/utf8.h"
#include "tokenizer/unicode.h"

namespace trail::tok {
namespace {

std::string Hex(char32_t c) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "\\x{%X}", static_cast<unsigned>(c));
  return buf;
}

// The body of a character class holding exactly `ranges`.
std::string ClassBody(const std::vector<CodeRange>& ranges) {
  std::string out;
  for (const CodeRange& r : ranges) {
    out += Hex(r.first);
    if (r.last != r.first) out += "-" + Hex(r.last);
  }
  return out;
}

class Rewriter {
 public:
  explicit Rewriter(const std::string& p) : p_(p) {}

  std::string Run() {
    TRAIL_CHECK(IsValidUtf8(p_), "the pre-tokenizer pattern is not valid UTF-8");
    while (i_ < p_.size()) Step();
    return out_;
  }

 private:
  [[noreturn]] void Refuse(const std::string& what) const {
    TRAIL_FAIL("the pre-tokenizer pattern uses ", what, " (at byte ", i_,
               "), which trail cannot pin ", "to Unicode ", UnicodeVersion(),
               ": write it with \\p{general category}, \\s or ", "literals (pattern: ", p_, ")");
  }

  bool CaseInsensitive() const {
    for (bool g : groups_) {
      if (g) return true;
    }
    return false;
  }

  void Step() {
    const char c = p_[i_];
    if (c == '\\') return Escape();
    if (c == '[' && !in_class_) return OpenClass();
    if (in_class_) {
      if (c == '[' && i_ + 1 < p_.size() &&
          (p_[i_ + 1] == ':' || p_[i_ + 1] == '=' || p_[i_ + 1] == '.')) {
        Refuse("a POSIX class");
      }
      if (c == ']') in_class_ = false;
      out_ += c;
      ++i_;
      return;
    }
    if (c == '(') return OpenGroup();
    if (c == ')') {
      if (!groups_.empty()) groups_.pop_back();
      out_ += c;
      ++i_;
      return;
    }
    size_t len = 0;
    const char32_t cp = DecodeValidUtf8(p_.data() + i_, len);
    if (CaseInsensitive()) {
      const std::vector<char32_t> fold = CaseFoldClass(cp);
      if (fold.size() > 1) {
        out_ += "[";
        for (char32_t f : fold) out_ += Hex(f);
        out_ += "]";
        i_ += len;
        return;
      }
    }
    out_.append(p_, i_, len);
    i_ += len;
  }

  void OpenClass() {
    if (CaseInsensitive()) Refuse("a character class inside a case-insensitive group");
    in_class_ = true;
    out_ += '[';
    ++i_;
    if (i_ < p_.size() && p_[i_] == '^') out_ += p_[i_++];
    if (i_ < p_.size() && p_[i_] == ']') out_ += p_[i_++];  // a literal ] first in a class
  }

  void OpenGroup() {
    if (p_.compare(i_, 4, "(?i:") == 0) {
      groups_.push_back(true);
      out_ += "(?:";
      i_ += 4;
      return;
    }
    if (p_.compare(i_, 2, "(?") == 0 && i_ + 2 < p_.size()) {
      // Option settings like (?i) or (?-i:...) change case sensitivity outside what is pinned.
      for (size_t k = i_ + 2; k < p_.size() && p_[k] != ':' && p_[k] != ')'; ++k) {
        if (p_[k] == 'i') Refuse("a case-insensitive option other than (?i:...)");
        if (!std::isalpha(static_cast<unsigned char>(p_[k])) && p_[k] != '-' && p_[k] != '^') break;
      }
    }
    groups_.push_back(false);
    out_ += '(';
    ++i_;
  }

  void Escape() {
    TRAIL_CHECK(i_ + 1 < p_.size(), "the pre-tokenizer pattern ends with a lone backslash");
    const char n = p_[i_ + 1];
    switch (n) {
      case 's':
        return Emit(WhiteSpace(), false, 2);
      case 'S':
        return Emit(WhiteSpace(), true, 2);
      case 'd':
        return Emit(Property("Nd"), false, 2);
      case 'D':
        return Emit(Property("Nd"), true, 2);
      case 'p':
      case 'P':
        return PropertyEscape(n == 'P');
      case 'w':
      case 'W':
      case 'b':
      case 'B':
      case 'X':
        Refuse(std::string("\\") + n);
      case 'Q':
        return Quoted();
      default:
        if (CaseInsensitive() && std::isalnum(static_cast<unsigned char>(n))) {
          Refuse(std::string("the escape \\") + n + " inside a case-insensitive group");
        }
        out_.append(p_, i_, 2);
        i_ += 2;
    }
  }

  std::vector<CodeRange> WhiteSpace() const { return Property("White_Space"); }

  std::vector<CodeRange> Property(const std::string& name) const {
    std::vector<CodeRange> r;
    if (!PropertyRanges(name, r)) Refuse("the property \\p{" + name + "}");
    return r;
  }

  void PropertyEscape(bool negated) {
    size_t end = i_ + 2;
    std::string name;
    if (end < p_.size() && p_[end] == '{') {
      const size_t close = p_.find('}', end);
      TRAIL_CHECK(close != std::string::npos, "the pre-tokenizer pattern has an unclosed \\p{");
      name = p_.substr(end + 1, close - end - 1);
      end = close + 1;
    } else {
      TRAIL_CHECK(end < p_.size(), "the pre-tokenizer pattern ends inside \\p");
      name = p_.substr(end, 1);
      end += 1;
    }
    if (!name.empty() && name[0] == '^') {
      negated = !negated;
      name.erase(0, 1);
    }
    Emit(Property(name), negated, end - i_);
  }

  // Ranges (or their complement) as a class of their own, or inside the class being read.
  void Emit(const std::vector<CodeRange>& ranges, bool negated, size_t consumed) {
    const std::string body = ClassBody(negated ? Complement(ranges) : ranges);
    out_ += in_class_ ? body : "[" + body + "]";
    i_ += consumed;
  }

  void Quoted() {
    const size_t end = p_.find("\\E", i_ + 2);
    const size_t stop = end == std::string::npos ? p_.size() : end + 2;
    if (CaseInsensitive()) Refuse("\\Q...\\E inside a case-insensitive group");
    out_.append(p_, i_, stop - i_);
    i_ = stop;
  }

  const std::string& p_;
  size_t i_ = 0;
  std::string out_;
  bool in_class_ = false;
  std::vector<bool> groups_;  // per open group: case-insensitive
};

}  // namespace

std::string PinUnicodeClasses(const std::string& pattern) { return Rewriter(pattern).Run(); }

}  // namespace trail::tok
