// The token-shard file format (".tshard"), version 1. All integers little-endian.
//
//   [0, 128)            header (ShardHeader below)
//   [tokens_offset, …)  num_tokens token ids, token_bytes each (uint16 or uint32)
//   [index_offset, …)   num_docs DocRecord (32 bytes each), 8-byte aligned
//   [keys_offset, …)    keys_bytes of UTF-8 document keys, concatenated
//   [trailer, +40)      "TRLSHEND" then SHA-256 of every byte before the trailer
//
// Documents are stored back to back in index order; doc i's tokens start at token_start. A
// writer fed the same documents produces the same bytes (nothing time- or host-dependent).
#pragma once

#include <array>
#include <cstdint>

namespace trail::data {

inline constexpr char kShardMagic[8] = {'T', 'R', 'L', 'S', 'H', 'R', 'D', '1'};
inline constexpr char kShardTrailerMagic[8] = {'T', 'R', 'L', 'S', 'H', 'E', 'N', 'D'};
inline constexpr uint32_t kShardVersion = 1;
inline constexpr uint64_t kShardHeaderBytes = 128;
inline constexpr uint64_t kShardTrailerBytes = 40;
inline constexpr uint64_t kDocRecordBytes = 32;

using ContractHash = std::array<uint8_t, 32>;

// The token width a vocabulary needs: uint16 ids while every id fits (vocab_size <= 65536),
// uint32 ids beyond. Every writer that picks a width from a tokenizer uses this rule.
inline constexpr uint32_t TokenBytesForVocab(uint64_t vocab_size) {
  return vocab_size <= 65536 ? 2 : 4;
}

// Byte layout of the header (offsets in bytes):
//   0 magic[8] | 8 version u32 | 12 token_bytes u32 | 16 num_docs u64 | 24 num_tokens u64
//   32 tokens_offset u64 | 40 index_offset u64 | 48 keys_offset u64 | 56 keys_bytes u64
//   64 tokenizer contract hash [32] | 96 vocab_size u32 | 100..128 zero
struct ShardHeader {
  uint32_t token_bytes = 2;
  uint64_t num_docs = 0, num_tokens = 0;
  uint64_t tokens_offset = 0, index_offset = 0, keys_offset = 0, keys_bytes = 0;
  ContractHash contract{};
  uint32_t vocab_size = 0;  // every token id is < vocab_size
};

// One document: 0 token_start u64 | 8 key_offset u64 (into the keys blob) | 16 length u32
// (tokens) | 20 key_length u32 | 24 domain u32 (source/domain id) | 28 reserved u32 (zero).
struct DocRecord {
  uint64_t token_start = 0, key_offset = 0;
  uint32_t length = 0, key_length = 0, domain = 0;
};

}  // namespace trail::data
