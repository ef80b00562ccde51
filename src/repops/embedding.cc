#include "repops/embedding.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "repops/parallel.h"

namespace trail::repops {
namespace {
void CheckTokens(const int32_t* tokens, int64_t n, int64_t vocab) {
  for (int64_t t = 0; t < n; ++t)
    TRAIL_CHECK(tokens[t] >= 0 && tokens[t] < vocab, "token id ", tokens[t], " at position ", t,
                " is outside the vocabulary [0, ", vocab, ")");
}
}  // namespace

void EmbeddingForward(const float* table, int64_t vocab, int64_t d, const int32_t* tokens,
                      int64_t n, float* out) {
  CheckTokens(tokens, n, vocab);
  ForEachRow(n, [&](int64_t t) {
    std::memcpy(out + t * d, table + int64_t{tokens[t]} * d, d * sizeof(float));
  });
}

void EmbeddingBackward(const float* dout, const int32_t* tokens, int64_t n, int64_t vocab,
                       int64_t d, float* dtable) {
  CheckTokens(tokens, n, vocab);
  // Columns are split across tasks; inside a task positions run in ascending order, so every
  // table element receives its additions in position order whatever the thread count.
  const int64_t chunk = 32;
  ForEachRow((d + chunk - 1) / chunk, [&](int64_t cb) {
    const int64_t j0 = cb * chunk, j1 = std::min(d, j0 + chunk);
    for (int64_t t = 0; t < n; ++t) {
      float* row = dtable + int64_t{tokens[t]} * d;
      const float* g = dout + t * d;
      for (int64_t j = j0; j < j1; ++j) row[j] = row[j] + g[j];
    }
  });
}

}  // namespace trail::repops
