// One window of the canonical stream before packing: L+1 tokens with, for each token, its
// window-local document id, its position id and whether it may be a training target; plus the
// provenance of every run of tokens, so any training token can be traced to its source.
#pragma once

#include <cstdint>
#include <vector>

#include "data/mixture.h"

namespace trail::data {

// A run of consecutive window tokens that come from one piece (a document, or one chunk of a
// long document) of one shard.
struct Segment {
  uint32_t source = 0, shard = 0;  // shard: index in the source's shard list
  uint64_t doc = 0;                // document index in the shard
  uint32_t chunk = 0;              // which chunk of the document (0 when not chunked)
  uint64_t piece_offset = 0;       // offset of the run's first token within the piece
  uint64_t window_offset = 0;      // where the run starts in the window
  uint64_t length = 0;
  uint64_t pass = 0;           // permutation: epoch; replacement: draw block
  bool ends_with_eos = false;  // the run includes the piece's appended EOS
  // The piece starts with a BOS (prepend_bos) at piece offset 0: its chunk tokens start at 1.
  bool piece_bos = false;
};

struct RawWindow {
  uint64_t index = 0;  // global window index w
  WindowOwner owner;
  int64_t length = 0;                           // real tokens (<= L+1); the rest is padding
  std::vector<int32_t> tokens, positions, doc;  // [L+1]; doc: window-local, 0-based
  std::vector<uint8_t> target_ok;               // [L+1]; 0: context only (or padding)
  std::vector<Segment> segments;                // segment i holds the tokens with doc == i

  void Reset(int64_t capacity) {
    tokens.resize(capacity);
    positions.resize(capacity);
    doc.resize(capacity);
    target_ok.resize(capacity);
    segments.clear();
    length = 0;
  }
};

}  // namespace trail::data
