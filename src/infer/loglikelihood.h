// Log-likelihoods of continuations given contexts, as lm-eval and OLMES score them
// (docs/inference.md §4), on the KV-cache decoder, so each value has the bits of the training
// forward over the same tokens on every device, SIMD target and thread count.
//
//   tokens:    lm-eval's pair encoding: trailing whitespace of the context (Python's
//              str.isspace) moves to the continuation's front; whole = Encode(context +
//              continuation), ctx = Encode(context), cont = whole[len(ctx):]; an empty context
//              is the EOS id alone. For a model trained with a BOS before every document
//              (bos_id >= 0: its manifest's prepend_bos), ctx is BOS + Encode(context), and an
//              empty context is the BOS alone
//   window:    the last max_seq_len + 1 tokens of ctx + cont (a longer context loses its
//              front); the model reads all but the last, and cont's tokens are the targets of
//              its last len(cont) positions. A continuation longer than max_seq_len is an error.
//   loglik:    Σ over cont's tokens, ascending, in float64, of the float32 logprob
//              logit_target − lse (lse as the cross-entropy's, docs/repops.md §5)
//   greedy:    whether every target is the first largest logit of its row
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "infer/olmes_tasks.h"
#include "model/config.h"
#include "model/params.h"
#include "repops/backend.h"
#include "tokenizer/tokenizer.h"

namespace trail::infer {

struct EncodedRequest {
  std::vector<int32_t> context, continuation;
};
// The pair encoding above (before the window).
EncodedRequest EncodeRequest(const tok::Tokenizer& tokenizer, const std::string& context,
                             const std::string& continuation, int64_t eos_id, int64_t bos_id = -1);

struct ScoredRequest {
  double loglik = 0;
  int64_t continuation_tokens = 0;
  int64_t context_tokens = 0;  // of the context, in the window
  int64_t truncated = 0;       // context tokens the window dropped
  bool greedy = false;
};

class LoglikelihoodScorer {
 public:
  // The model (parameters on `backend`, which both outlive the scorer) and its tokenizer;
  // bos_id >= 0 when its training documents each started with that BOS.
  LoglikelihoodScorer(const model::ModelConfig& c, const model::ParameterSet& p,
                      repops::Backend& backend, const tok::Tokenizer& tokenizer, int64_t eos_id,
                      int64_t bos_id = -1);
  // Scores every request. A document's choices share the context's cached prefix; on the CPU
  // documents run in parallel on the kernel pool (one decoder per thread), elsewhere one after
  // another. `progress` (optional) is called with the requests done so far, from one thread at
  // a time. Throws trail::Error naming the request for one that cannot be scored.
  std::vector<ScoredRequest> Score(const std::vector<EvalRequest>& requests,
                                   const std::function<void(int64_t)>& progress = {});
  // Throws trail::Error naming `where`, the document and the choice of the first request whose
  // continuation (tokenized as Score does) is longer than the model's context: what Score would
  // refuse, found before anything is scored.
  void CheckFits(const std::vector<EvalRequest>& requests, const std::string& where) const;

 private:
  const model::ModelConfig& c_;
  const model::ParameterSet& p_;
  repops::Backend& be_;
  const tok::Tokenizer& tok_;
  int64_t eos_id_, bos_id_;
};

}  // namespace trail::infer
