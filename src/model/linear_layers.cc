#include "model/linear_layers.h"

#include <algorithm>

#include "core/error.h"

namespace trail::model {
namespace {

using repops::Int8Backward;

// The bytes of one layer's quantized matrices and inputs, and of the shared scratch.
struct Sizes {
  int64_t weights = 0, inputs = 0, scratch = 0;  // weights and inputs: of one layer
};

Sizes SizesOf(const ModelConfig& c, int64_t M) {
  const int64_t d = c.d_model, ff = c.d_ff, kvd = c.kv_dim(), qd = c.q_dim();
  const int64_t wide = std::max({d, ff, qd}), big = std::max(d * ff, d * qd);
  const int64_t mlp_in = c.mlp == MlpKind::kSwiGlu ? 2 : 1;
  const int64_t weights = 2 * d * qd + 2 * d * kvd + (mlp_in + 1) * d * ff;
  const int64_t outputs = qd + d + 2 * kvd + mlp_in * ff + d;  // step sizes
  // qw, and with the fp32 backward the dequantized float copy.
  const int64_t copy = c.quant_backward == Int8Backward::kInt8 ? 0 : 4;
  Sizes s;
  // Inputs: q, and with int8 backward its transpose; a scale per token.
  const int64_t input_copies = c.quant_backward == Int8Backward::kInt8 ? 2 : 1;
  s.weights = weights * (1 + copy) + outputs * 4;
  s.inputs = input_copies * M * (2 * d + qd + ff) + 4 * M * 4;
  s.scratch = 4 * std::max(M * wide, big) + 4 * M * wide + M * wide + 4 * std::max(M, wide);
  return s;
}

}  // namespace

LinearLayers::LinearLayers(const ModelConfig& c, int64_t max_tokens, repops::Backend& backend,
                           bool one_layer_of_inputs)
    : be_(backend),
      quant_(c.linear_quant == LinearQuant::kInt8Lsq),
      learned_(c.quant_step_learned),
      shared_inputs_(one_layer_of_inputs),
      backward_(c.quant_backward) {
  if (!quant_) return;
  const int64_t d = c.d_model, ff = c.d_ff, kvd = c.kv_dim(), qd = c.q_dim(), M = max_tokens;
  const int64_t wide = std::max({d, ff, qd}), big = std::max(d * ff, d * qd);
  // The operands live on the backend's device: reserved here (reserve() writes no element;
  // only the backend's ops do), filled by its quantize ops.
  Allocator& memory = be_.allocator();
  scratch_ = repops::Int8Scratch(memory);
  layers_.resize(c.n_layers);
  const int64_t shapes[kMatrices][2] = {{d, qd}, {d, kvd}, {d, kvd}, {qd, d},
                                        {d, ff}, {d, ff},  {ff, d}};
  const int64_t widths[kLayerInputs] = {d, qd, d, ff};  // h1, att, h2, act
  for (size_t l = 0; l < layers_.size(); ++l) {
    Layer& L = layers_[l];
    for (int m = 0; m < kMatrices; ++m) {
      if (m == static_cast<int>(Matrix::kUp) && c.mlp != MlpKind::kSwiGlu) continue;
      const int64_t K = shapes[m][0], N = shapes[m][1];
      repops::QuantizedWeight& w = L.w[m] = repops::QuantizedWeight(memory);
      w.step.reserve(N), w.q.reserve(K * N);
      if (backward_ == Int8Backward::kFp32) w.dequant.reserve(K * N);
    }
    for (int i = 0; i < kLayerInputs; ++i) {
      if (shared_inputs_ && l > 0) break;
      repops::QuantizedInput& in = L.in[i] = repops::QuantizedInput(memory);
      in.q.reserve(M * widths[i]), in.scale.reserve(M);
      if (backward_ == Int8Backward::kInt8) in.qt.reserve(M * widths[i]);
    }
  }
  scratch_.acc.reserve(std::max(M * wide, big));
  scratch_.f.reserve(M * wide), scratch_.a.reserve(M * wide);
  scratch_.scale.reserve(std::max(M, wide));
}

int64_t LinearLayers::bytes() const {
  size_t n = 0;
  for (const Layer& L : layers_) {
    for (const auto& w : L.w) {
      n += w.q.capacity() + 4 * (w.step.capacity() + w.dequant.capacity());
    }
    for (const auto& in : L.in) n += in.q.capacity() + in.qt.capacity() + 4 * in.scale.capacity();
  }
  n += 4 * (scratch_.acc.capacity() + scratch_.f.capacity() + scratch_.scale.capacity()) +
       scratch_.a.capacity();
  return static_cast<int64_t>(n);
}

int64_t LinearLayers::PlannedBytes(const ModelConfig& c, int64_t max_tokens,
                                   bool one_layer_of_inputs) {
  if (c.linear_quant != LinearQuant::kInt8Lsq) return 0;
  const Sizes s = SizesOf(c, max_tokens);
  return c.n_layers * s.weights + (one_layer_of_inputs ? 1 : c.n_layers) * s.inputs + s.scratch;
}

void LinearLayers::BeginForward(const ParameterSet& p) {
  if (!quant_) return;
  params_ = &p;
  if (hold_ && held_ == &p) return;
  held_ = hold_ ? &p : nullptr;
  ready_.assign(layers_.size(), false);
}

void LinearLayers::PrepareLayer(int64_t l) {
  if (!quant_ || ready_.at(l)) return;
  const LayerParams& P = params_->layers[l];
  for (int m = 0; m < kMatrices; ++m) {
    const DeviceTensor* t = P.matrix(static_cast<Matrix>(m));
    if (t == nullptr) continue;
    be_.QuantizeWeight(t->data<float>(), t->dim(0), t->dim(1), backward_, layers_[l].w[m],
                       learned_ ? P.step[m]->data<float>() : nullptr);
  }
  ready_[l] = true;
}

void LinearLayers::BeginBackward(ParameterSet& g) {
  if (learned_) grads_ = &g;
}

void LinearLayers::SetInput(int64_t l, LayerInput in, const float* x, int64_t M, int64_t K) {
  if (quant_) be_.QuantizeInput(x, M, K, Input(l, in));
}

void LinearLayers::Forward(int64_t l, Matrix m, LayerInput in, const float* x, const float* w,
                           float* y, int64_t M, int64_t K, int64_t N) {
  if (!quant_) return be_.MatMul(x, w, y, M, K, N, false);
  const repops::QuantizedInput& qx = Input(l, in);
  TRAIL_CHECK(qx.M == M && qx.K == K, "int8 linear: layer ", l, "'s input was not set");
  be_.Int8LinearForward(qx, layers_[l].w[static_cast<int>(m)], scratch_, y);
}

void LinearLayers::Backward(int64_t l, Matrix m, LayerInput in, const float* x, const float* dy,
                            const float* w, float* dx, float* dw, int64_t M, int64_t K, int64_t N,
                            bool accumulate) {
  if (!quant_) {
    be_.MatMulBT(dy, w, dx, M, N, K, accumulate);
    be_.MatMulAT(x, dy, dw, K, M, N, false);
    return;
  }
  const int mi = static_cast<int>(m);
  const float* w_unq = learned_ ? params_->layers[l].matrix(m)->data<float>() : nullptr;
  float* dstep = learned_ ? grads_->layers[l].step[mi]->data<float>() : nullptr;
  be_.Int8LinearBackward(Input(l, in), dy, layers_[l].w[mi], backward_, scratch_, dx, accumulate,
                         dw, w_unq, dstep);
}

}  // namespace trail::model
