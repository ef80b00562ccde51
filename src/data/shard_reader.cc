#include "data/shard_reader.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "core/hash.h"
#include "core/le_bytes.h"

namespace trail::data {

ShardHeader ParseShardHeader(const uint8_t* p, uint64_t size, const std::string& path) {
  TRAIL_CHECK(size >= kShardHeaderBytes + kShardTrailerBytes, path, ": not a token shard (", size,
              " bytes is shorter than header + trailer; truncated?)");
  TRAIL_CHECK(std::memcmp(p, kShardMagic, 8) == 0, path, ": not a token shard (bad magic)");
  const uint32_t version = GetU32(p + 8);
  TRAIL_CHECK(version == kShardVersion, path, ": shard format version ", version,
              " is not supported (this build reads version ", kShardVersion, ")");
  ShardHeader h;
  h.token_bytes = GetU32(p + 12);
  h.num_docs = GetU64(p + 16);
  h.num_tokens = GetU64(p + 24);
  h.tokens_offset = GetU64(p + 32);
  h.index_offset = GetU64(p + 40);
  h.keys_offset = GetU64(p + 48);
  h.keys_bytes = GetU64(p + 56);
  std::memcpy(h.contract.data(), p + 64, 32);
  h.vocab_size = GetU32(p + 96);
  TRAIL_CHECK(h.token_bytes == 2 || h.token_bytes == 4, path, ": bad token width ", h.token_bytes);

  // The layout must add up exactly to the file size; a shorter file was truncated.
  const bool sane = h.tokens_offset == kShardHeaderBytes && h.num_tokens < (1ull << 40) &&
                    h.num_docs < (1ull << 36) && h.vocab_size > 0 && h.vocab_size <= (1u << 31) &&
                    h.index_offset >= h.tokens_offset + h.num_tokens * h.token_bytes &&
                    h.index_offset - (h.tokens_offset + h.num_tokens * h.token_bytes) < 8 &&
                    h.keys_offset == h.index_offset + h.num_docs * kDocRecordBytes;
  TRAIL_CHECK(sane, path, ": corrupted shard header (section offsets do not add up)");
  const uint64_t trailer = h.keys_offset + h.keys_bytes;
  TRAIL_CHECK(trailer + kShardTrailerBytes == size, path, ": file is ", size,
              " bytes but its header describes ", trailer + kShardTrailerBytes,
              " (truncated or appended to)");
  return h;
}

ShardReader::ShardReader(const std::string& path, const ShardExpectations& expect) : file_(path) {
  const uint8_t* p = file_.data();
  const uint64_t size = file_.size();
  header_ = ParseShardHeader(p, size, path);
  const ShardHeader& h = header_;
  const uint64_t trailer = h.keys_offset + h.keys_bytes;
  TRAIL_CHECK(std::memcmp(p + trailer, kShardTrailerMagic, 8) == 0, path,
              ": missing shard trailer (truncated?)");

  if (expect.verify_hash) {
    const Digest d = Sha256({p, trailer});
    TRAIL_CHECK(std::memcmp(d.data(), p + trailer + 8, 32) == 0, path,
                ": content hash mismatch: the file is corrupted (computed ", ToHex(d),
                ", trailer says ", sha256(), ")");
  }
  if (expect.sha256) {
    TRAIL_CHECK(*expect.sha256 == sha256(), path, ": the manifest expects sha256 ", *expect.sha256,
                " but the shard is ", sha256());
  }
  if (expect.contract) {
    Digest want, got;
    std::memcpy(want.data(), expect.contract->data(), 32);
    std::memcpy(got.data(), h.contract.data(), 32);
    TRAIL_CHECK(want == got, path, ": shard was tokenized under contract ", ToHex(got),
                " but the manifest's tokenizer contract is ", ToHex(want));
  }
  if (expect.token_bytes) {
    TRAIL_CHECK(*expect.token_bytes == h.token_bytes, path, ": token width ", h.token_bytes,
                " differs from the manifest's ", *expect.token_bytes);
  }

  index_ = p + h.index_offset;
  keys_ = reinterpret_cast<const char*>(p + h.keys_offset);
  if (h.token_bytes == 2) {
    u16_ = reinterpret_cast<const uint16_t*>(p + h.tokens_offset);
  } else {
    u32_ = reinterpret_cast<const uint32_t*>(p + h.tokens_offset);
  }
  // The index must tile the token array in order, and keys must lie in the blob.
  uint64_t next = 0;
  for (uint64_t i = 0; i < h.num_docs; ++i) {
    const DocRecord r = doc(i);
    TRAIL_CHECK(r.token_start == next && r.length > 0, path, ": corrupted document index at ", i);
    TRAIL_CHECK(r.key_offset + r.key_length <= h.keys_bytes && r.key_length > 0, path,
                ": corrupted key of document ", i);
    next += r.length;
  }
  TRAIL_CHECK(next == h.num_tokens, path, ": document index covers ", next, " of ", h.num_tokens,
              " tokens");
}

std::string ShardReader::sha256() const {
  Digest d;
  std::memcpy(d.data(), file_.data() + header_.keys_offset + header_.keys_bytes + 8, 32);
  return ToHex(d);
}

DocRecord ShardReader::doc(uint64_t i) const {
  TRAIL_CHECK(i < header_.num_docs, path(), ": document ", i, " out of range");
  const uint8_t* r = index_ + i * kDocRecordBytes;
  DocRecord d;
  d.token_start = GetU64(r + 0);
  d.key_offset = GetU64(r + 8);
  d.length = GetU32(r + 16);
  d.key_length = GetU32(r + 20);
  d.domain = GetU32(r + 24);
  return d;
}

uint32_t ShardReader::doc_length(uint64_t i) const {
  return GetU32(index_ + i * kDocRecordBytes + 16);
}

std::string_view ShardReader::doc_key(uint64_t i) const {
  const DocRecord d = doc(i);
  return {keys_ + d.key_offset, d.key_length};
}

void ShardReader::CopyTokens(uint64_t begin, uint64_t n, int32_t* out) const {
  if (read_log_ != nullptr) read_log_->push_back({begin, begin + n});
  if (u16_ != nullptr) {
    const uint16_t* src = u16_ + begin;
    for (uint64_t i = 0; i < n; ++i) out[i] = src[i];
  } else {
    const uint32_t* src = u32_ + begin;
    for (uint64_t i = 0; i < n; ++i) out[i] = static_cast<int32_t>(src[i]);
  }
}

void CopyPieceTokens(const ShardReader& sh, const PieceLayout& p, uint64_t offset, uint64_t n,
                     int32_t* out) {
  const uint64_t doc_end = p.bos + p.count;
  const uint64_t lo = std::max(offset, p.bos), hi = std::min(offset + n, doc_end);
  if (hi > lo) sh.CopyTokens(p.first + (lo - p.bos), hi - lo, out + (lo - offset));
  for (uint64_t i = 0; i < n; ++i) {
    if (offset + i < p.bos) out[i] = p.bos_id;
    if (offset + i >= doc_end) out[i] = p.eos_id;
  }
}

}  // namespace trail::data
