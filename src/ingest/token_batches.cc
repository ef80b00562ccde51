#include "ingest/token_batches.h"

#include <exception>

#include "core/error.h"
#include "core/le_bytes.h"

namespace trail::ingest {
namespace {
constexpr size_t kBatchDocs = 2048;
constexpr size_t kBatchBytes = 32 << 20;

void PutInt(std::string* out, uint64_t v) {
  uint8_t b[8];
  PutU64(b, v);
  out->append(reinterpret_cast<const char*>(b), 8);
}

uint64_t TakeInt(std::string_view& b) {
  TRAIL_CHECK(b.size() >= 8, "token run: a record ends early");
  const uint64_t v = GetU64(reinterpret_cast<const uint8_t*>(b.data()));
  b.remove_prefix(8);
  return v;
}
}  // namespace

BatchEncoder::BatchEncoder(const tok::Tokenizer& tokenizer, int threads)
    : tokenizer_(tokenizer), pool_(static_cast<size_t>(std::max(1, threads))) {}

bool BatchEncoder::Next(DocumentReader& reader, uint64_t input, TokenBatch& batch) {
  records_.clear();
  lines_.clear();
  size_t bytes = 0;
  std::string rec;
  uint64_t line_no = 0;
  bool more = true;
  while (records_.size() < kBatchDocs && bytes < kBatchBytes &&
         (more = reader.NextRecord(rec, line_no))) {
    bytes += rec.size();
    records_.push_back(std::move(rec));
    lines_.push_back(line_no);
  }
  batch.assign(records_.size(), TokenDoc{});
  std::vector<std::exception_ptr> errors(records_.size());
  pool_.ParallelFor(records_.size(), [&](size_t i) {
    try {
      Document doc;
      ParseDocument(records_[i], reader.path(), lines_[i], doc);
      TokenDoc& d = batch[i];
      d.input = input;
      d.line = doc.line;
      d.text_bytes = doc.text.size();
      d.id = std::move(doc.id);
      tokenizer_.EncodeOrdinary(doc.text, d.ids);
    } catch (...) {
      errors[i] = std::current_exception();
    }
  });
  for (const auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  return more;
}

void EncodeTokenDoc(const TokenDoc& d, std::string* out) {
  PutInt(out, d.input);
  PutInt(out, d.line);
  PutInt(out, d.text_bytes);
  PutInt(out, d.id.size());
  out->append(d.id);
  PutInt(out, d.ids.size());
  const size_t at = out->size();
  out->resize(at + 4 * d.ids.size());
  auto* ids = reinterpret_cast<uint8_t*>(out->data() + at);
  for (size_t i = 0; i < d.ids.size(); ++i) PutU32(ids + 4 * i, d.ids[i]);
}

TokenDoc DecodeTokenDoc(std::string_view b) {
  TokenDoc d;
  d.input = TakeInt(b);
  d.line = TakeInt(b);
  d.text_bytes = TakeInt(b);
  const uint64_t id_len = TakeInt(b);
  TRAIL_CHECK(id_len <= b.size(), "token run: an id runs past its record");
  d.id.assign(b.substr(0, id_len));
  b.remove_prefix(id_len);
  const uint64_t n = TakeInt(b);
  TRAIL_CHECK(n == b.size() / 4 && b.size() % 4 == 0,
              "token run: the token count does not match its record");
  d.ids.resize(n);
  const auto* ids = reinterpret_cast<const uint8_t*>(b.data());
  for (uint64_t i = 0; i < n; ++i) d.ids[i] = GetU32(ids + 4 * i);
  return d;
}

}  // namespace trail::ingest
