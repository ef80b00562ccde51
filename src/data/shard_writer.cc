#include "data/shard_writer.h"

#include <cstring>
#include <unordered_set>

#include "core/error.h"
#include "core/hash.h"
#include "core/le_bytes.h"

namespace trail::data {
namespace {

constexpr size_t kFlushBytes = 1 << 20;

uint64_t AlignUp(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

}  // namespace

ShardWriter::ShardWriter(std::string path, const ShardWriterOptions& opt)
    : path_(std::move(path)), opt_(opt), file_(path_) {
  TRAIL_CHECK(opt_.token_bytes == 2 || opt_.token_bytes == 4, path_,
              ": token_bytes must be 2 or 4, got ", opt_.token_bytes);
  TRAIL_CHECK(opt_.vocab_size > 0, path_, ": vocab_size must be set");
  TRAIL_CHECK(opt_.token_bytes == 4 || opt_.vocab_size <= 65536, path_, ": vocab_size ",
              opt_.vocab_size, " does not fit 2-byte tokens");
  const uint8_t zeros[kShardHeaderBytes] = {};
  file_.Write(zeros, sizeof(zeros));  // the header is written last, in place
  token_buf_.reserve(kFlushBytes + 4096);
}

ShardWriter::~ShardWriter() = default;

void ShardWriter::Add(const std::string& key, uint32_t domain, std::span<const uint32_t> tokens) {
  TRAIL_CHECK(!finished_, path_, ": Add after Finish");
  TRAIL_CHECK(!key.empty(), path_, ": document ", docs_.size(), " has an empty key");
  TRAIL_CHECK(!tokens.empty(), path_, ": document '", key, "' has no tokens");
  TRAIL_CHECK(tokens.size() <= UINT32_MAX, path_, ": document '", key, "' is too long");
  TRAIL_CHECK(key.size() <= UINT32_MAX, path_, ": key too long");
  DocRecord rec;
  rec.token_start = num_tokens_;
  rec.length = static_cast<uint32_t>(tokens.size());
  rec.key_offset = keys_.size();
  rec.key_length = static_cast<uint32_t>(key.size());
  rec.domain = domain;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const uint32_t t = tokens[i];
    TRAIL_CHECK(t < opt_.vocab_size, path_, ": document '", key, "' token ", i, " is ", t,
                ", outside the vocabulary of ", opt_.vocab_size);
    uint8_t b[4];
    PutU32(b, t);
    token_buf_.insert(token_buf_.end(), b, b + opt_.token_bytes);
  }
  if (token_buf_.size() >= kFlushBytes) FlushTokens();
  docs_.push_back(rec);
  keys_ += key;
  num_tokens_ += tokens.size();
}

void ShardWriter::FlushTokens() {
  file_.Write(token_buf_.data(), token_buf_.size());
  token_buf_.clear();
}

ShardSummary ShardWriter::Finish() {
  TRAIL_CHECK(!finished_, path_, ": Finish called twice");
  finished_ = true;
  // Keys must be unique: they are how a training token is traced back to its source.
  {
    std::unordered_set<std::string_view> seen;
    for (const DocRecord& d : docs_) {
      const std::string_view k(keys_.data() + d.key_offset, d.key_length);
      TRAIL_CHECK(seen.insert(k).second, path_, ": duplicate document key '", k, "'");
    }
  }
  FlushTokens();

  ShardHeader h;
  h.token_bytes = opt_.token_bytes;
  h.num_docs = docs_.size();
  h.num_tokens = num_tokens_;
  h.tokens_offset = kShardHeaderBytes;
  h.index_offset = AlignUp(h.tokens_offset + num_tokens_ * opt_.token_bytes, 8);
  h.keys_offset = h.index_offset + docs_.size() * kDocRecordBytes;
  h.keys_bytes = keys_.size();
  h.contract = opt_.contract;
  h.vocab_size = opt_.vocab_size;

  const std::vector<uint8_t> pad(h.index_offset - file_.size(), 0);
  file_.Write(pad.data(), pad.size());
  std::vector<uint8_t> index(docs_.size() * kDocRecordBytes, 0);
  for (size_t i = 0; i < docs_.size(); ++i) {
    uint8_t* r = index.data() + i * kDocRecordBytes;
    PutU64(r + 0, docs_[i].token_start);
    PutU64(r + 8, docs_[i].key_offset);
    PutU32(r + 16, docs_[i].length);
    PutU32(r + 20, docs_[i].key_length);
    PutU32(r + 24, docs_[i].domain);
  }
  file_.Write(index.data(), index.size());
  file_.Write(keys_.data(), keys_.size());

  uint8_t hdr[kShardHeaderBytes] = {};
  std::memcpy(hdr, kShardMagic, 8);
  PutU32(hdr + 8, kShardVersion);
  PutU32(hdr + 12, h.token_bytes);
  PutU64(hdr + 16, h.num_docs);
  PutU64(hdr + 24, h.num_tokens);
  PutU64(hdr + 32, h.tokens_offset);
  PutU64(hdr + 40, h.index_offset);
  PutU64(hdr + 48, h.keys_offset);
  PutU64(hdr + 56, h.keys_bytes);
  std::memcpy(hdr + 64, h.contract.data(), 32);
  PutU32(hdr + 96, h.vocab_size);
  file_.WriteAt(0, hdr, sizeof(hdr));

  // The trailing hash covers every byte before it; read back what was written.
  Digest digest;
  {
    Sha256Hasher hasher;
    MappedFile written(file_.temp_path());
    TRAIL_CHECK(written.size() == file_.size(), path_, ": short write");
    hasher.Update(written.data(), written.size());
    digest = hasher.Finish();
  }
  uint8_t trailer[kShardTrailerBytes];
  std::memcpy(trailer, kShardTrailerMagic, 8);
  std::memcpy(trailer + 8, digest.data(), 32);
  file_.Write(trailer, sizeof(trailer));
  file_.Commit();

  ShardSummary s;
  s.path = path_;
  s.sha256 = ToHex(digest);
  s.num_docs = docs_.size();
  s.num_tokens = num_tokens_;
  return s;
}

}  // namespace trail::data
