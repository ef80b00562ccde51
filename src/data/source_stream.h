// The token stream of one source: its documents (cut into pieces by the chunking policy, each
// followed by EOS as configured) concatenated in a seeded order, as a pure function of the
// position. Random access costs O(pieces of one shard) the first time an (epoch, shard) is
// touched and O(log) after, with no state carried between calls except caches.
//
// Permutation sampling: epoch e lists the shards in the order Permutation(#shards, seed,
//   stream(source, "shards", e)) and, inside shard j, its pieces in the order
//   Permutation(#pieces_j, seed, stream(source, "pieces", e, j)). Every epoch has the same
//   length, so position p is in epoch p / epoch_tokens.
// Replacement sampling: the stream is cut into blocks of B tokens; block b holds draws
//   i = 0, 1, … of piece g = floor(u * #pieces / 2^64), u the 64-bit Philox word pair
//   (seed, stream(source, "draws", b), i), until B tokens are filled (the last draw is cut).
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <vector>

#include "data/manifest.h"
#include "data/permutation.h"
#include "data/shard_reader.h"
#include "data/window.h"

namespace trail::data {

class SourceStream {
 public:
  SourceStream(uint32_t index, const SourceSpec& spec,
               std::vector<std::shared_ptr<const ShardReader>> shards, const StreamConfig& cfg,
               const TokenizerSpec& tok);

  const std::string& name() const { return name_; }
  uint64_t epoch_tokens() const { return epoch_tokens_; }  // stream tokens in one pass
  uint64_t total_tokens() const { return total_tokens_; }  // kUnlimited unless max_epochs
  uint64_t num_pieces() const { return piece_prefix_.back(); }
  // Windows of L+1 tokens at stride L: kUnlimited, or enough to cover every token as a target.
  uint64_t num_windows(int64_t seq_len) const;

  // Appends the stream tokens [p, p+n) to `out` from out.length on (as new segments); stops
  // early only at the end of a finite source. Returns the number of tokens appended.
  uint64_t Fill(uint64_t p, uint64_t n, RawWindow& out);

  const ShardReader& shard(uint32_t j) const { return *shards_[j]; }
  size_t num_shards() const { return shards_.size(); }

  // Where document `doc` of shard `shard` lies in this stream: one run per piece read, in stream
  // order, for every run that starts before stream position `limit`. Permutation sampling costs
  // one shard order per epoch below `limit`; replacement sampling walks every draw block below
  // it (source_stream_runs.cc).
  struct PieceRun {
    uint64_t begin = 0, length = 0;  // stream positions [begin, begin + length)
    uint32_t chunk = 0;
    uint64_t pass = 0;  // epoch, or draw block
  };
  std::vector<PieceRun> DocumentRuns(uint32_t shard, uint64_t doc, uint64_t limit);

 private:
  struct Piece {
    uint32_t shard;
    uint64_t doc;
    uint32_t chunk;
  };
  struct EpochOrder {  // permutation: shard order of one epoch
    uint64_t epoch;
    std::vector<uint32_t> shards;
    std::vector<uint64_t> prefix;  // stream offset of each listed shard, + total
  };
  struct ShardOrder {  // permutation: piece order of one shard in one epoch
    uint64_t epoch;
    uint32_t shard;
    std::vector<uint32_t> pieces;  // local piece index at each position
    std::vector<uint64_t> prefix;
  };
  struct Block {  // replacement: draws of one block
    uint64_t block;
    std::vector<uint64_t> pieces;  // global piece index of each draw
    std::vector<uint64_t> prefix;  // offset of each draw in the block, + B
  };

  Piece PieceOf(uint32_t shard, uint64_t local_piece) const;
  uint64_t PieceLength(const Piece& pc) const;
  uint64_t PieceBos(const Piece& pc) const;  // 1 when the piece starts with a BOS, else 0
  uint64_t Emit(const Piece& pc, uint64_t offset, uint64_t n, uint64_t pass, RawWindow& out);
  const EpochOrder& Epoch(uint64_t e);
  const ShardOrder& Order(uint64_t e, uint32_t shard);
  const Block& DrawBlock(uint64_t b);
  uint64_t FillPermutation(uint64_t p, uint64_t n, RawWindow& out);
  uint64_t FillReplacement(uint64_t p, uint64_t n, RawWindow& out);

  uint32_t index_;
  std::string name_;
  uint64_t name_id_;
  Sampling sampling_;
  StreamConfig cfg_;
  int32_t eos_, bos_;
  std::vector<std::shared_ptr<const ShardReader>> shards_;
  // Per shard: first piece of each document (docs+1; empty when documents are never cut),
  // and the piece -> document table (empty when not cut).
  std::vector<std::vector<uint64_t>> doc_first_piece_;
  std::vector<std::vector<uint32_t>> piece_doc_;
  std::vector<uint64_t> piece_prefix_;  // global piece index of each shard's first piece, + total
  std::vector<uint64_t> shard_tokens_;  // stream tokens of each shard per pass
  uint64_t epoch_tokens_ = 0, total_tokens_ = 0;

  // Small caches; sequential reading touches one or two entries at a time.
  std::list<EpochOrder> epochs_;
  std::list<ShardOrder> orders_;
  std::list<Block> blocks_;
};

}  // namespace trail::data
