#include "corpus/read/extract.h"

#include <gumbo.h>

namespace trail::corpus {
namespace {

bool Boilerplate(GumboTag t) {
  switch (t) {
    case GUMBO_TAG_SCRIPT:
    case GUMBO_TAG_STYLE:
    case GUMBO_TAG_NOSCRIPT:
    case GUMBO_TAG_TEMPLATE:
    case GUMBO_TAG_HEAD:
    case GUMBO_TAG_NAV:
    case GUMBO_TAG_FOOTER:
    case GUMBO_TAG_ASIDE:
    case GUMBO_TAG_FORM:
    case GUMBO_TAG_BUTTON:
    case GUMBO_TAG_SELECT:
    case GUMBO_TAG_SVG:
      return true;
    default:
      return false;
  }
}

bool Block(GumboTag t) {
  switch (t) {
    case GUMBO_TAG_P:
    case GUMBO_TAG_DIV:
    case GUMBO_TAG_H1:
    case GUMBO_TAG_H2:
    case GUMBO_TAG_H3:
    case GUMBO_TAG_H4:
    case GUMBO_TAG_H5:
    case GUMBO_TAG_H6:
    case GUMBO_TAG_LI:
    case GUMBO_TAG_UL:
    case GUMBO_TAG_OL:
    case GUMBO_TAG_TR:
    case GUMBO_TAG_TABLE:
    case GUMBO_TAG_BR:
    case GUMBO_TAG_ARTICLE:
    case GUMBO_TAG_SECTION:
    case GUMBO_TAG_HEADER:
    case GUMBO_TAG_BLOCKQUOTE:
    case GUMBO_TAG_PRE:
    case GUMBO_TAG_DD:
    case GUMBO_TAG_DT:
    case GUMBO_TAG_BODY:
      return true;
    default:
      return false;
  }
}

void Append(std::string& out, const char* text) {
  for (const char* p = text; *p; ++p) {
    const unsigned char c = *p;
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
      if (!out.empty() && out.back() != ' ' && out.back() != '\n') out += ' ';
    } else {
      out += static_cast<char>(c);
    }
  }
}

void EndBlock(std::string& out) {
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (!out.empty() && out.back() != '\n') out += '\n';
}

void Walk(const GumboNode* n, std::string& out) {
  if (n->type == GUMBO_NODE_TEXT || n->type == GUMBO_NODE_CDATA) {
    Append(out, n->v.text.text);
    return;
  }
  if (n->type != GUMBO_NODE_ELEMENT && n->type != GUMBO_NODE_TEMPLATE) return;
  const GumboTag tag = n->v.element.tag;
  if (Boilerplate(tag)) return;
  const bool block = Block(tag);
  if (block) EndBlock(out);
  const GumboVector& kids = n->v.element.children;
  for (unsigned i = 0; i < kids.length; ++i) Walk(static_cast<const GumboNode*>(kids.data[i]), out);
  if (block) EndBlock(out);
}

}  // namespace

ExtractedHtml ExtractHtml(std::string_view html) {
  GumboOutput* g = gumbo_parse_with_options(&kGumboDefaultOptions, html.data(), html.size());
  ExtractedHtml r;
  const GumboNode* root = g->root;
  if (root->type == GUMBO_NODE_ELEMENT) {
    if (const GumboAttribute* a = gumbo_get_attribute(&root->v.element.attributes, "lang")) {
      r.lang = a->value;
    }
    const GumboVector& kids = root->v.element.children;
    for (unsigned i = 0; i < kids.length; ++i) {
      const GumboNode* k = static_cast<const GumboNode*>(kids.data[i]);
      if (k->type != GUMBO_NODE_ELEMENT || k->v.element.tag != GUMBO_TAG_HEAD) continue;
      const GumboVector& hk = k->v.element.children;
      for (unsigned j = 0; j < hk.length; ++j) {
        const GumboNode* t = static_cast<const GumboNode*>(hk.data[j]);
        if (t->type == GUMBO_NODE_ELEMENT && t->v.element.tag == GUMBO_TAG_TITLE) Walk(t, r.title);
      }
    }
  }
  Walk(root, r.text);
  while (!r.text.empty() && (r.text.back() == '\n' || r.text.back() == ' ')) r.text.pop_back();
  gumbo_destroy_output(&kGumboDefaultOptions, g);
  return r;
}

}  // namespace trail::corpus
