// Token embedding lookup and its scatter-add backward.
#pragma once

#include <cstdint>

namespace trail::repops {

// out[t, :] = table[tokens[t], :]. tokens must be < vocab (checked).
void EmbeddingForward(const float* table, int64_t vocab, int64_t d, const int32_t* tokens,
                      int64_t n, float* out);
// dtable[tokens[t], :] += dout[t, :] for t = 0, 1, ..., n-1 in that order (accumulates).
void EmbeddingBackward(const float* dout, const int32_t* tokens, int64_t n, int64_t vocab,
                       int64_t d, float* dtable);

}  // namespace trail::repops
