#include "data/packing.h"

#include "core/error.h"

namespace trail::data {

std::vector<int32_t> ShiftedLabels(std::span<const int32_t> tokens,
                                   std::span<const int32_t> doc_ids, Semantics sem,
                                   int64_t valid_len) {
  const int64_t n = static_cast<int64_t>(tokens.size());
  TRAIL_CHECK(doc_ids.size() == tokens.size(), "ShiftedLabels: ", tokens.size(), " tokens but ",
              doc_ids.size(), " document ids");
  if (valid_len < 0) valid_len = n;
  std::vector<int32_t> labels(n, kIgnoreLabel);
  for (int64_t i = 0; i + 1 < n; ++i) {
    if (LabelValid(sem, doc_ids.data(), nullptr, i, valid_len)) labels[i] = tokens[i + 1];
  }
  return labels;
}

void PackedBatch::Resize(int64_t r, int64_t L) {
  rows = r;
  seq_len = L;
  const size_t n = static_cast<size_t>(r * L);
  inputs.assign(n, 0);
  labels.assign(n, kIgnoreLabel);
  doc_ids.assign(n, 0);
  positions.assign(n, 0);
  key_valid.assign(n, 0);
  loss_mask.assign(n, 0);
  windows.assign(static_cast<size_t>(r), kPaddingRow);
  input_tokens = real_tokens = target_tokens = 0;
}

void PackRow(const RawWindow& w, Semantics sem, PackedBatch& b, int64_t row) {
  const int64_t L = b.seq_len;
  TRAIL_CHECK(static_cast<int64_t>(w.tokens.size()) == L + 1 && row >= 0 && row < b.rows,
              "PackRow: window of ", w.tokens.size(), " tokens does not fit rows of ", L);
  const size_t base = static_cast<size_t>(row * L);
  int32_t* in = b.inputs.data() + base;
  int32_t* lab = b.labels.data() + base;
  int32_t* doc = b.doc_ids.data() + base;
  int32_t* pos = b.positions.data() + base;
  uint8_t* kv = b.key_valid.data() + base;
  uint8_t* lm = b.loss_mask.data() + base;
  const int32_t* tok = w.tokens.data();
  const int32_t* wdoc = w.doc.data();
  const uint8_t* ok = w.target_ok.data();
  const int64_t valid = w.length;
  const bool independent = sem == Semantics::kIndependent;
  int64_t targets = 0;
  for (int64_t i = 0; i < L; ++i) {
    in[i] = tok[i];
    const bool v = LabelValid(sem, wdoc, ok, i, valid);
    lab[i] = v ? tok[i + 1] : kIgnoreLabel;
    lm[i] = v ? 1 : 0;
    targets += v ? 1 : 0;
    doc[i] = independent ? wdoc[i] : 0;
    pos[i] = w.positions[i];
    kv[i] = i < valid ? 1 : 0;
  }
  if (valid == 0) kv[0] = 1;
  b.windows[row] = w.index;
  b.input_tokens += L;
  b.real_tokens += std::min<int64_t>(valid, L);
  b.target_tokens += targets;
}

void PackPaddingRow(PackedBatch& b, int64_t row, int32_t pad_token) {
  const int64_t L = b.seq_len;
  const size_t base = static_cast<size_t>(row * L);
  for (int64_t i = 0; i < L; ++i) {
    b.inputs[base + i] = pad_token;
    b.labels[base + i] = kIgnoreLabel;
    b.loss_mask[base + i] = 0;
    b.doc_ids[base + i] = 0;
    b.positions[base + i] = static_cast<int32_t>(i);
    b.key_valid[base + i] = i == 0 ? 1 : 0;
  }
  b.windows[row] = kPaddingRow;
  b.input_tokens += L;
}

bool EveryAttentionRowNonEmpty(const PackedBatch& b, int64_t window) {
  const int64_t L = b.seq_len;
  for (int64_t r = 0; r < b.rows; ++r) {
    const size_t base = static_cast<size_t>(r * L);
    for (int64_t q = 0; q < L; ++q) {
      const int64_t lo = window > 0 ? std::max<int64_t>(0, q - window + 1) : 0;
      bool any = false;
      for (int64_t k = q; k >= lo && !any; --k) {
        any = b.key_valid[base + k] != 0 && b.doc_ids[base + k] == b.doc_ids[base + q];
      }
      if (!any) return false;
    }
  }
  return true;
}

}  // namespace trail::data
