#include "repops/guarded_backend.h"

namespace trail::repops {

std::string GuardedBackend::description() const { return cpu_.description(); }

void GuardedBackend::CopyToHost(const TensorView& src, void* dst) {
  GuardedWindow open(allocator_);
  cpu_.CopyToHost(src, dst);
}

void GuardedBackend::CopyFromHost(const void* src, const TensorView& dst) {
  GuardedWindow open(allocator_);
  cpu_.CopyFromHost(src, dst);
}

void GuardedBackend::Copy(const TensorView& src, const TensorView& dst) {
  GuardedWindow open(allocator_);
  cpu_.Copy(src, dst);
}

void GuardedBackend::Zero(const TensorView& x) {
  GuardedWindow open(allocator_);
  cpu_.Zero(x);
}

void GuardedBackend::MatMul(const float* a, const float* b, float* c, int64_t M, int64_t K,
                            int64_t N, bool accumulate) {
  GuardedWindow open(allocator_);
  cpu_.MatMul(a, b, c, M, K, N, accumulate);
}

void GuardedBackend::MatMulBT(const float* a, const float* bt, float* c, int64_t M, int64_t K,
                              int64_t N, bool accumulate) {
  GuardedWindow open(allocator_);
  cpu_.MatMulBT(a, bt, c, M, K, N, accumulate);
}

void GuardedBackend::MatMulAT(const float* at, const float* b, float* c, int64_t M, int64_t K,
                              int64_t N, bool accumulate) {
  GuardedWindow open(allocator_);
  cpu_.MatMulAT(at, b, c, M, K, N, accumulate);
}

void GuardedBackend::QuantizeWeight(const float* w, int64_t K, int64_t N, Int8Backward backward,
                                    QuantizedWeight& out, const float* learned_step) {
  GuardedWindow open(allocator_);
  cpu_.QuantizeWeight(w, K, N, backward, out, learned_step);
}

void GuardedBackend::QuantizeInput(const float* x, int64_t M, int64_t K, QuantizedInput& out) {
  GuardedWindow open(allocator_);
  cpu_.QuantizeInput(x, M, K, out);
}

void GuardedBackend::Int8LinearForward(const QuantizedInput& x, const QuantizedWeight& w,
                                       Int8Scratch& s, float* y) {
  GuardedWindow open(allocator_);
  cpu_.Int8LinearForward(x, w, s, y);
}

void GuardedBackend::Int8LinearBackward(QuantizedInput& x, const float* dy,
                                        const QuantizedWeight& qw, Int8Backward backward,
                                        Int8Scratch& s, float* dx, bool accumulate, float* dw,
                                        const float* w, float* dstep) {
  GuardedWindow open(allocator_);
  cpu_.Int8LinearBackward(x, dy, qw, backward, s, dx, accumulate, dw, w, dstep);
}

void GuardedBackend::RmsNormForward(const float* x, const float* gain, float eps, int64_t rows,
                                    int64_t d, float* y, float* rstd) {
  GuardedWindow open(allocator_);
  cpu_.RmsNormForward(x, gain, eps, rows, d, y, rstd);
}

void GuardedBackend::RmsNormBackward(const float* dy, const float* x, const float* gain,
                                     const float* rstd, int64_t rows, int64_t d, float* dx,
                                     float* dgain) {
  GuardedWindow open(allocator_);
  cpu_.RmsNormBackward(dy, x, gain, rstd, rows, d, dx, dgain);
}

void GuardedBackend::RopeApply(float* x, int64_t rows, int64_t hd, const int32_t* pos,
                               const RopeTableView& table, bool backward) {
  GuardedWindow open(allocator_);
  cpu_.RopeApply(x, rows, hd, pos, table, backward);
}

void GuardedBackend::AttentionForward(const AttentionShape& s, const float* q, const float* k,
                                      const float* v, float* out, float* probs) {
  GuardedWindow open(allocator_);
  cpu_.AttentionForward(s, q, k, v, out, probs);
}

void GuardedBackend::AttentionBackward(const AttentionShape& s, const float* q, const float* k,
                                       const float* v, const float* probs, const float* dout,
                                       float* dq, float* dk, float* dv) {
  GuardedWindow open(allocator_);
  cpu_.AttentionBackward(s, q, k, v, probs, dout, dq, dk, dv);
}

void GuardedBackend::SwiGluForward(const float* a, const float* b, int64_t n, float* h) {
  GuardedWindow open(allocator_);
  cpu_.SwiGluForward(a, b, n, h);
}

void GuardedBackend::SwiGluBackward(const float* dh, const float* a, const float* b, int64_t n,
                                    float* da, float* db) {
  GuardedWindow open(allocator_);
  cpu_.SwiGluBackward(dh, a, b, n, da, db);
}

void GuardedBackend::GeluForward(const float* x, int64_t n, float* y) {
  GuardedWindow open(allocator_);
  cpu_.GeluForward(x, n, y);
}

void GuardedBackend::GeluBackward(const float* dy, const float* x, int64_t n, float* dx) {
  GuardedWindow open(allocator_);
  cpu_.GeluBackward(dy, x, n, dx);
}

void GuardedBackend::EmbeddingForward(const float* table, int64_t vocab, int64_t d,
                                      const int32_t* tokens, int64_t n, float* out) {
  GuardedWindow open(allocator_);
  cpu_.EmbeddingForward(table, vocab, d, tokens, n, out);
}

void GuardedBackend::EmbeddingBackward(const float* dout, const int32_t* tokens, int64_t n,
                                       int64_t vocab, int64_t d, float* dtable) {
  GuardedWindow open(allocator_);
  cpu_.EmbeddingBackward(dout, tokens, n, vocab, d, dtable);
}

CrossEntropySums GuardedBackend::CrossEntropyForward(const float* logits, const int32_t* targets,
                                                     int64_t rows, int64_t vocab,
                                                     int32_t ignore_index, float* lse) {
  GuardedWindow open(allocator_);
  return cpu_.CrossEntropyForward(logits, targets, rows, vocab, ignore_index, lse);
}

void GuardedBackend::CrossEntropyBackward(const float* logits, const int32_t* targets,
                                          const float* lse, int64_t rows, int64_t vocab,
                                          int32_t ignore_index, float grad_scale, float z_coef,
                                          float* dlogits) {
  GuardedWindow open(allocator_);
  cpu_.CrossEntropyBackward(logits, targets, lse, rows, vocab, ignore_index, grad_scale, z_coef,
                            dlogits);
}

void GuardedBackend::Fill(float* x, int64_t n, float value) {
  GuardedWindow open(allocator_);
  cpu_.Fill(x, n, value);
}

void GuardedBackend::FillNormal(float* x, int64_t n, uint64_t seed, uint64_t stream, float mean,
                                float stddev) {
  GuardedWindow open(allocator_);
  cpu_.FillNormal(x, n, seed, stream, mean, stddev);
}

void GuardedBackend::WeightStepSizes(const float* w, int64_t K, int64_t N, float* step) {
  GuardedWindow open(allocator_);
  cpu_.WeightStepSizes(w, K, N, step);
}

float GuardedBackend::SumSq(const float* x, int64_t n) {
  GuardedWindow open(allocator_);
  return cpu_.SumSq(x, n);
}

void GuardedBackend::Scale(float* x, int64_t n, float coef) {
  GuardedWindow open(allocator_);
  cpu_.Scale(x, n, coef);
}

void GuardedBackend::AdamWStep(float* p, const float* g, float* m, float* v, int64_t n,
                               const AdamWHyper& h, int64_t t) {
  GuardedWindow open(allocator_);
  cpu_.AdamWStep(p, g, m, v, n, h, t);
}

void GuardedBackend::ChunkLeaves(std::span<const LeafChunk> chunks, Digest* out) {
  GuardedWindow open(allocator_);
  cpu_.ChunkLeaves(chunks, out);
}

void GuardedBackend::AddInto(float* y, const float* x, int64_t n) {
  GuardedWindow open(allocator_);
  cpu_.AddInto(y, x, n);
}

void GuardedBackend::SplitHeads(const float* x, float* y, int64_t rows, int64_t T, int64_t H,
                                int64_t hd) {
  GuardedWindow open(allocator_);
  cpu_.SplitHeads(x, y, rows, T, H, hd);
}

void GuardedBackend::MergeHeads(const float* y, float* x, int64_t rows, int64_t T, int64_t H,
                                int64_t hd) {
  GuardedWindow open(allocator_);
  cpu_.MergeHeads(y, x, rows, T, H, hd);
}

}  // namespace trail::repops
