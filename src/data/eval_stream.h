// A frozen validation or test set (scored apart from training): its documents in stored order
// (shards as listed, documents in index order), never permuted, resampled or mixed. Each document
// (plus EOS when the stream appends one, after a BOS when it prepends one) is cut into windows of
// L+1 tokens at stride L, the last one padded, so a row never holds two documents and every token
// but a document's first is scored exactly once. When the stream cuts documents into independent
// pieces (chunking.max_tokens), evaluation cuts them the same way (without overlap, each piece
// after its BOS with prepend_bos), so positions stay within what training uses; then every token
// but a piece's first is scored once.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "data/manifest.h"
#include "data/shard_reader.h"
#include "data/stream.h"
#include "data/window.h"

namespace trail::data {

class EvalStream {
 public:
  // split: "validation" or "test".
  EvalStream(const Manifest& m, const std::string& split, const std::string& domain,
             const StreamOptions& opt = {});

  uint64_t num_windows() const { return window_prefix_.back(); }
  void Window(uint64_t i, RawWindow& out) const;

 private:
  int64_t L_;
  bool append_eos_;
  int32_t eos_, pad_;
  uint64_t bos_marks_;  // 1 with prepend_bos: every piece starts with BOS (bos_)
  int32_t bos_;
  PositionMode positions_;
  std::vector<std::shared_ptr<const ShardReader>> shards_;
  struct Piece {
    uint32_t shard, chunk;
    uint64_t doc, start, length;  // document tokens [start, start + length)
    bool eos;                     // the document's last piece, followed by EOS
  };
  std::vector<uint64_t> window_prefix_;  // first window of each piece, flattened, + total
  std::vector<Piece> pieces_;            // in stored order
};

}  // namespace trail::data
