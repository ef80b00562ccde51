// HTML -> main text with gumbo (WHATWG parsing). Text of block elements is separated by
// newlines; script, style, noscript, template, head, nav, footer, aside, form, button, select
// and svg subtrees are dropped as boilerplate; whitespace runs collapse to one space inside a
// block. The extractor version is recorded with every extracted document.
#pragma once

#include <string>
#include <string_view>

namespace trail::corpus {

inline constexpr char kExtractorVersion[] = "trail-html-1";

struct ExtractedHtml {
  std::string text;
  std::string lang;  // the <html lang="..."> attribute, if any
  std::string title;
};

ExtractedHtml ExtractHtml(std::string_view html);

}  // namespace trail::corpus
