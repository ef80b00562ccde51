// The recipe of the canonical stream: how documents become windows and windows become batches.
// Every field changes which tokens a step sees, so all of it is recorded (data manifest
// "stream" section) and hashed with the run.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace trail::data {

// Label/attention semantics of a packed window (docs/data.md §5, packing).
enum class Semantics {
  kIndependent,  // label valid iff current and next token share a document; block-diagonal
  kContinuous,   // one EOS-separated stream: labels cross documents, plain causal attention
};

enum class PositionMode {
  kDocument,  // position = offset within the document piece (reset per document)
  kWindow,    // position = index within the window
};

// Long documents are cut into pieces of at most max_tokens (docs/data.md §3.1, pieces).
enum class ChunkBoundary {
  kIndependent,   // each piece ends with EOS, is its own document, positions restart at 0
  kContinuation,  // only the last piece gets EOS; positions continue from the piece's offset
};

struct ChunkingPolicy {
  uint32_t max_tokens = 0;  // 0: documents are never cut
  uint32_t overlap = 0;     // tokens shared by consecutive pieces (< max_tokens)
  // true: the overlap is a target only in the earlier piece (which sees the longer context);
  // in the later piece it is context only. false: it is a target in both.
  bool overlap_loss_once = true;
  ChunkBoundary boundary = ChunkBoundary::kIndependent;
};

// First document token of chunk `chunk` (chunks start every max_tokens - overlap tokens).
inline uint64_t ChunkStart(const ChunkingPolicy& p, uint32_t chunk) {
  return p.max_tokens == 0 ? 0 : uint64_t{chunk} * (p.max_tokens - p.overlap);
}
// Document tokens in chunk `chunk` of a document of `doc_length` tokens.
inline uint64_t ChunkLength(const ChunkingPolicy& p, uint64_t doc_length, uint32_t chunk) {
  const uint64_t rest = doc_length - ChunkStart(p, chunk);
  return p.max_tokens == 0 || rest < p.max_tokens ? rest : p.max_tokens;
}

// Step s (from from_step on, until the next phase) consumes `windows` consecutive windows.
struct BatchPhase {
  int64_t from_step = 0;
  int64_t windows = 1;
};

// A late-training change of the mixture (data annealing): from the first window of step
// `from_step` on, the sources are drawn with these shares (sources not named: 0) instead of
// their target_share. Phases apply in order of from_step.
struct MixturePhase {
  int64_t from_step = 0;
  std::vector<std::pair<std::string, double>> shares;  // source name, share (≥ 0)
};

// The sequence-length curriculum: from the first window of step `from_step` on, windows hold
// seq_len + 1 tokens. Phases apply in order of from_step.
struct SeqLenPhase {
  int64_t from_step = 0;
  int64_t seq_len = 0;
};

struct StreamConfig {
  uint64_t seed = 0;
  int64_t seq_len = 2048;  // L: a window holds L+1 tokens, giving L inputs and L labels
  bool append_eos = true;  // EOS (tokenizer eos_id) after every document
  // BOS (tokenizer bos_id) before every document (Llama 3's <|begin_of_text|>): before each
  // piece under the independent boundary, before a document's first piece under continuation.
  bool prepend_bos = false;
  ChunkingPolicy chunking;
  // Sources sampled with replacement draw documents in blocks of this many tokens (the last
  // draw of a block is cut at the block end), which keeps random access O(block).
  uint64_t replacement_block_tokens = 1 << 20;
  Semantics semantics = Semantics::kIndependent;
  PositionMode positions = PositionMode::kDocument;
  std::vector<BatchPhase> schedule{{0, 1}};
  int64_t micro_batch_windows = 1;           // windows per micro-batch on one logical rank
  std::vector<MixturePhase> mixture_phases;  // after phase 0 (the sources' target shares)
  std::vector<SeqLenPhase> seq_len_phases;   // after phase 0 (seq_len from step 0)
};

// Whether chunk `chunk`'s piece starts with a BOS (docs/data.md §3.1): with prepend_bos, the
// document's first piece, or every piece under the independent boundary.
inline bool PieceStartsWithBos(const StreamConfig& c, uint32_t chunk) {
  return c.prepend_bos && (chunk == 0 || c.chunking.boundary == ChunkBoundary::kIndependent);
}

// L of the windows of step `step`.
inline int64_t SeqLenAtStep(const StreamConfig& c, int64_t step) {
  int64_t L = c.seq_len;
  for (const SeqLenPhase& p : c.seq_len_phases) {
    if (p.from_step <= step) L = p.seq_len;
  }
  return L;
}

// The longest window any step reads: what activations and RoPE must hold.
inline int64_t MaxSeqLen(const StreamConfig& c) {
  int64_t L = c.seq_len;
  for (const SeqLenPhase& p : c.seq_len_phases) L = p.seq_len > L ? p.seq_len : L;
  return L;
}

}  // namespace trail::data
