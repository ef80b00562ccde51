#include "infer/loglikelihood.h"

#include <algorithm>
#include <memory>
#include <mutex>

#include "core/error.h"
#include "core/thread_pool.h"
#include "core/utf8.h"
#include "model/decoder.h"
#include "repops/cross_entropy.h"

namespace trail::infer {
namespace {

// Python's str.isspace() code points.
bool IsPythonSpace(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
         c == 0x205F || c == 0x3000;
}

// Bytes of the whitespace code points at the end of s (invalid UTF-8 ends the run).
size_t TrailingSpaceBytes(std::string_view s) {
  size_t end = s.size();
  while (end > 0) {
    size_t start = end - 1;
    while (start > 0 && end - start < 4 && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) {
      --start;
    }
    const std::string_view cp = s.substr(start, end - start);
    if (ValidUtf8Prefix(cp) != cp.size()) break;
    size_t len = 0;
    if (!IsPythonSpace(DecodeValidUtf8(cp.data(), len)) || len != cp.size()) break;
    end = start;
  }
  return s.size() - end;
}

std::vector<int32_t> Ids(const std::vector<uint32_t>& ids) {
  return std::vector<int32_t>(ids.begin(), ids.end());
}

// A decoder and what its cache holds, for one thread at a time.
struct Worker {
  std::unique_ptr<model::Decoder> dec;
  std::vector<int32_t> cached;  // the tokens in dec's cache
  std::vector<float> rows;      // host copy of logits rows
};

}  // namespace

EncodedRequest EncodeRequest(const tok::Tokenizer& tokenizer, const std::string& context,
                             const std::string& continuation, int64_t eos_id, int64_t bos_id) {
  const size_t spaces = TrailingSpaceBytes(context);
  const std::string ctx = context.substr(0, context.size() - spaces);
  const std::string cont = context.substr(context.size() - spaces) + continuation;
  EncodedRequest e;
  if (bos_id >= 0) e.context.push_back(static_cast<int32_t>(bos_id));
  if (ctx.empty()) {
    TRAIL_CHECK(bos_id >= 0 || eos_id >= 0,
                "a request with an empty context needs the tokenizer's EOS id");
    if (bos_id < 0) e.context = {static_cast<int32_t>(eos_id)};
    e.continuation = Ids(tokenizer.Encode(cont));
    return e;
  }
  const std::vector<uint32_t> whole = tokenizer.Encode(ctx + cont);
  const std::vector<uint32_t> head = tokenizer.Encode(ctx);
  e.context.insert(e.context.end(), head.begin(), head.end());
  if (whole.size() > head.size()) {
    e.continuation.assign(whole.begin() + static_cast<std::ptrdiff_t>(head.size()), whole.end());
  }
  return e;
}

LoglikelihoodScorer::LoglikelihoodScorer(const model::ModelConfig& c, const model::ParameterSet& p,
                                         repops::Backend& backend, const tok::Tokenizer& tokenizer,
                                         int64_t eos_id, int64_t bos_id)
    : c_(c), p_(p), be_(backend), tok_(tokenizer), eos_id_(eos_id), bos_id_(bos_id) {}

void LoglikelihoodScorer::CheckFits(const std::vector<EvalRequest>& requests,
                                    const std::string& where) const {
  for (const EvalRequest& r : requests) {
    const EncodedRequest e = EncodeRequest(tok_, r.context, r.continuation, eos_id_, bos_id_);
    TRAIL_CHECK(static_cast<int64_t>(e.continuation.size()) <= c_.max_seq_len, where, ": document ",
                r.doc_id, ", choice ", r.idx, ": its continuation is ", e.continuation.size(),
                " tokens, longer than the model's context of ", c_.max_seq_len,
                " (nothing was scored)");
  }
}

namespace {

// Scores one request on w, reusing the cached prefix it shares with the last one.
ScoredRequest ScoreOne(const EvalRequest& r, const EncodedRequest& e, const model::ModelConfig& c,
                       repops::Backend& be, Worker& w) {
  ScoredRequest out;
  const int64_t L = c.max_seq_len, V = c.vocab_size;
  const int64_t ncont = static_cast<int64_t>(e.continuation.size());
  out.continuation_tokens = ncont;
  TRAIL_CHECK(ncont <= L, "document ", r.doc_id, ", choice ", r.idx, ": its continuation is ",
              ncont, " tokens, longer than the model's context of ", L);
  std::vector<int32_t> full = e.context;
  full.insert(full.end(), e.continuation.begin(), e.continuation.end());
  const int64_t start = std::max<int64_t>(0, static_cast<int64_t>(full.size()) - (L + 1));
  out.truncated = start;
  out.context_tokens = static_cast<int64_t>(e.context.size()) - start;
  out.greedy = true;
  if (ncont == 0) return out;  // the continuation merged into the context: nothing to score
  const std::vector<int32_t> input(full.begin() + start, full.end() - 1);
  const int64_t n = static_cast<int64_t>(input.size()), p0 = n - ncont;
  const auto common = std::mismatch(w.cached.begin(), w.cached.end(), input.begin(), input.end());
  const int64_t keep = std::min<int64_t>(common.first - w.cached.begin(), p0);
  w.dec->Truncate(keep);
  w.cached.assign(input.begin(), input.begin() + keep);
  const repops::Kernels& kern = be.host_kernels();
  for (int64_t a = keep; a < n; a += w.dec->max_chunk()) {
    const int64_t b = std::min(n, a + w.dec->max_chunk());
    const int64_t rows = b > p0 ? b - std::max(a, p0) : 1;
    const TensorView logits = w.dec->Extend(input.data() + a, b - a, rows);
    w.cached.insert(w.cached.end(), input.begin() + a, input.begin() + b);
    if (b <= p0) continue;
    w.rows.resize(static_cast<size_t>(rows * V));
    be.CopyToHost(logits, w.rows.data());
    for (int64_t q = b - rows; q < b; ++q) {  // position q predicts full[start + q + 1]
      const float* row = w.rows.data() + (q - (b - rows)) * V;
      const int32_t target = full[start + q + 1], none = -1;
      float lse = 0;
      repops::CrossEntropyForward(kern, row, &none, 1, V, none, &lse);
      out.loglik += static_cast<double>(row[target] - lse);
      out.greedy = out.greedy && std::max_element(row, row + V) - row == target;
    }
  }
  return out;
}

}  // namespace

std::vector<ScoredRequest> LoglikelihoodScorer::Score(
    const std::vector<EvalRequest>& requests, const std::function<void(int64_t)>& progress) {
  std::vector<ScoredRequest> out(requests.size());
  std::vector<std::pair<size_t, size_t>> docs;  // [begin, end) of each document's requests
  for (size_t i = 0; i < requests.size(); ++i) {
    if (i == 0 || requests[i].doc_id != requests[i - 1].doc_id) docs.push_back({i, i});
    docs.back().second = i + 1;
  }
  const int64_t L = c_.max_seq_len;
  std::mutex mu;
  std::vector<std::unique_ptr<Worker>> idle;
  int64_t done = 0;
  auto run_doc = [&](size_t d) {
    std::unique_ptr<Worker> w;
    {
      const std::lock_guard<std::mutex> lock(mu);
      if (!idle.empty()) w = std::move(idle.back()), idle.pop_back();
    }
    if (!w) {
      w = std::make_unique<Worker>();
      w->dec = std::make_unique<model::Decoder>(c_, p_, be_, L, std::min<int64_t>(L, 128));
    }
    for (size_t i = docs[d].first; i < docs[d].second; ++i) {
      const EvalRequest& r = requests[i];
      out[i] = ScoreOne(r, EncodeRequest(tok_, r.context, r.continuation, eos_id_, bos_id_), c_,
                        be_, *w);
    }
    const std::lock_guard<std::mutex> lock(mu);
    idle.push_back(std::move(w));
    done += static_cast<int64_t>(docs[d].second - docs[d].first);
    if (progress) progress(done);
  };
  if (be_.concurrent_ops()) {
    KernelPool().ParallelFor(docs.size(), run_doc);  // each op inside runs on its task's thread
  } else {
    for (size_t d = 0; d < docs.size(); ++d) run_doc(d);
  }
  return out;
}

}  // namespace trail::infer
