#include "corpus/pipeline/doc_record.h"

#include <cstring>

#include "core/error.h"
#include "core/le_bytes.h"

namespace trail::corpus {
namespace {

void PutInt(std::string* out, uint64_t v) {
  uint8_t b[8];
  PutU64(b, v);
  out->append(reinterpret_cast<const char*>(b), 8);
}

void PutStr(std::string* out, std::string_view s) {
  PutInt(out, s.size());
  out->append(s);
}

class Cursor {
 public:
  explicit Cursor(std::string_view b) : b_(b) {}
  uint64_t Int() {
    TRAIL_CHECK(b_.size() >= 8, "document record: truncated");
    const uint64_t v = GetU64(reinterpret_cast<const uint8_t*>(b_.data()));
    b_.remove_prefix(8);
    return v;
  }
  std::string Str() {
    const uint64_t n = Int();
    TRAIL_CHECK(n <= b_.size(), "document record: truncated string");
    std::string s(b_.substr(0, n));
    b_.remove_prefix(n);
    return s;
  }
  bool done() const { return b_.empty(); }

 private:
  std::string_view b_;
};

}  // namespace

void EncodeDocRecord(const DocRecord& d, std::string* out) {
  PutStr(out, d.key);
  PutInt(out, d.source_index);
  PutInt(out, d.file_index);
  PutInt(out, d.offset);
  PutInt(out, d.raw_bytes);
  PutStr(out, d.raw_sha256);
  PutStr(out, d.raw_sample);
  PutStr(out, d.text);
  PutStr(out, d.content_hash);
  PutStr(out, d.drop.text());
  PutStr(out, d.drop_stage);
  PutStr(out, d.norm.encoding);
  PutInt(out, d.norm.detected);
  PutInt(out, d.norm.replaced);
  PutInt(out, d.norm.controls_removed);
  PutStr(out, d.lang.language);
  uint64_t score_bits;
  std::memcpy(&score_bits, &d.lang.score, 8);
  PutInt(out, score_bits);
  PutStr(out, d.rules_json);
  PutInt(out, d.bands.size());
  for (uint64_t b : d.bands) PutInt(out, b);
}

DocRecord DecodeDocRecord(std::string_view bytes) {
  Cursor c(bytes);
  DocRecord d;
  d.key = c.Str();
  d.source_index = static_cast<uint32_t>(c.Int());
  d.file_index = static_cast<uint32_t>(c.Int());
  d.offset = c.Int();
  d.raw_bytes = c.Int();
  d.raw_sha256 = c.Str();
  d.raw_sample = c.Str();
  d.text = c.Str();
  d.content_hash = c.Str();
  d.drop = Drop::Parse(c.Str());
  d.drop_stage = c.Str();
  d.norm.encoding = c.Str();
  d.norm.detected = c.Int() != 0;
  d.norm.replaced = c.Int();
  d.norm.controls_removed = c.Int();
  d.lang.language = c.Str();
  const uint64_t score_bits = c.Int();
  std::memcpy(&d.lang.score, &score_bits, 8);
  d.rules_json = c.Str();
  const uint64_t bands = c.Int();
  TRAIL_CHECK(bands <= 4096, "document record: ", bands, " band hashes");
  d.bands.resize(bands);
  for (uint64_t& b : d.bands) b = c.Int();
  TRAIL_CHECK(c.done(), "document record: trailing bytes");
  return d;
}

void EncodeQuarantined(const Quarantined& q, std::string* out) {
  PutStr(out, q.file);
  PutInt(out, q.offset);
  PutInt(out, q.line);
  PutInt(out, q.bytes);
  PutStr(out, q.reason);
  PutStr(out, q.detail);
  PutStr(out, q.sample);
  PutStr(out, q.sha256);
}

Quarantined DecodeQuarantined(std::string_view bytes) {
  Cursor c(bytes);
  Quarantined q;
  q.file = c.Str();
  q.offset = c.Int();
  q.line = c.Int();
  q.bytes = c.Int();
  q.reason = c.Str();
  q.detail = c.Str();
  q.sample = c.Str();
  q.sha256 = c.Str();
  TRAIL_CHECK(c.done(), "quarantine record: trailing bytes");
  return q;
}

}  // namespace trail::corpus
