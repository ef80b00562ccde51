// Packing windows into training tensors (the objective-to-tensor layer).
//
// One rule makes the labels: the label at position i is token i+1 when it is *valid*, else
// kIgnoreLabel. Valid means: i+1 is a real (non-padding) token, token i+1 may be a target
// (not overlap context), and — under independent-document semantics — tokens i and i+1 belong
// to the same document. With EOS counted as the last token of its document this keeps
// "content -> EOS" and masks "EOS -> next document" without a special case.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "data/stream_config.h"
#include "data/window.h"

namespace trail::data {

inline constexpr int32_t kIgnoreLabel = -100;
inline constexpr uint64_t kPaddingRow = UINT64_MAX;

// The single label rule. doc and target_ok cover n tokens; i < n-1.
inline bool LabelValid(Semantics sem, const int32_t* doc, const uint8_t* target_ok, int64_t i,
                       int64_t valid_len) {
  if (i + 1 >= valid_len) return false;
  if (target_ok != nullptr && target_ok[i + 1] == 0) return false;
  return sem == Semantics::kContinuous || doc[i] == doc[i + 1];
}

// Shifted labels of a plain sequence: n labels, the last always ignored. valid_len < 0 means
// all n tokens are real.
std::vector<int32_t> ShiftedLabels(std::span<const int32_t> tokens,
                                   std::span<const int32_t> doc_ids, Semantics sem,
                                   int64_t valid_len = -1);

// A micro-batch: rows of L positions, row-major [rows, L].
struct PackedBatch {
  int64_t rows = 0, seq_len = 0;
  std::vector<int32_t> inputs, labels;
  std::vector<int32_t> doc_ids;  // for attention: independent: window-local ids; continuous: 0
  std::vector<int32_t> positions;
  std::vector<uint8_t> key_valid;  // 0 for padding keys
  std::vector<uint8_t> loss_mask;  // 1 iff the label is not ignored
  std::vector<uint64_t> windows;   // global window of each row, kPaddingRow for an empty row
  // Accounting: B_input counts token slots (rows × L, padding included),
  // B_target counts valid targets (Σ loss_mask).
  int64_t input_tokens = 0, real_tokens = 0, target_tokens = 0;

  void Resize(int64_t rows, int64_t seq_len);
};

// Packs window `w` (L+1 tokens) into row `row` of `b` (L positions) and updates the counts.
void PackRow(const RawWindow& w, Semantics sem, PackedBatch& b, int64_t row);
// An all-padding row (a rank with fewer windows than its micro-batch): no targets; key 0 stays
// visible so its attention rows are not empty.
void PackPaddingRow(PackedBatch& b, int64_t row, int32_t pad_token);

// True iff every query of every row may attend to at least one key under the batch's masks
// (causal, same document id, key valid, and within `window` when window > 0).
bool EveryAttentionRowNonEmpty(const PackedBatch& b, int64_t window = 0);

}  // namespace trail::data
