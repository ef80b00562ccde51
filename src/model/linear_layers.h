// The block matrices' products, fp32 or int8 QAT (ModelConfig::linear_quant), behind one
// interface so the transformer's forward and backward read the same either way.
//
// fp32: Forward is MatMul, Backward MatMulBT (dx) and MatMulAT (dw) (repops/gemm.h), exactly
// the calls the transformer made before int8 existed, so fp32 bits do not change.
// int8: BeginForward quantizes every block matrix from the current weights (the per-step
// step-size recompute); SetInput quantizes a layer input once for all matrices that read it;
// the products are repops/int8_linear.h's.
#pragma once

#include <cstdint>
#include <vector>

#include "model/config.h"
#include "model/params.h"
#include "repops/backend.h"
#include "repops/int8_linear.h"

namespace trail::model {

// The inputs the matrices (params.h, Matrix) multiply.
enum class LayerInput { kH1, kAtt, kH2, kAct };  // h1: q,k,v  att: o  h2: gate,up  act: down
inline constexpr int kLayerInputs = 4;

class LinearLayers {
 public:
  // Runs on `backend` (which must outlive it). With one_layer_of_inputs, the quantized inputs
  // are kept for one layer at a time, all layers sharing them (activation recomputation: a
  // layer's inputs are quantized again just before its backward).
  LinearLayers(const ModelConfig& c, int64_t max_tokens, repops::Backend& backend,
               bool one_layer_of_inputs = false);
  bool quantized() const { return quant_; }
  int64_t bytes() const;  // what the constructor allocated
  static int64_t PlannedBytes(const ModelConfig& c, int64_t max_tokens,
                              bool one_layer_of_inputs = false);

  // int8: the forward of p (which must outlive the backward) begins: each layer's matrices are
  // quantized by PrepareLayer, just before the layer's forward (where a sharded job has them
  // gathered). While weights are held (HoldWeights), a second forward on the same set reuses
  // them. fp32: nothing.
  void BeginForward(const ParameterSet& p);
  void PrepareLayer(int64_t l);
  // The caller promises that the parameter set the next forwards read does not change until
  // HoldWeights(false): a step's micro-batches quantize the weights once (the same bits, since
  // quantizing is deterministic). Releasing forgets the quantized set.
  void HoldWeights(bool hold) {
    hold_ = hold;
    if (!hold) held_ = nullptr;
  }
  // Learned step sizes: their gradients go to g's step tensors. Otherwise nothing.
  void BeginBackward(ParameterSet& g);
  // int8: quantizes x [M, K], the input `in` of layer l. fp32: nothing.
  void SetInput(int64_t l, LayerInput in, const float* x, int64_t M, int64_t K);
  // y [M, N] = x [M, K] · W [K, N], W = m of layer l, x its input `in`.
  void Forward(int64_t l, Matrix m, LayerInput in, const float* x, const float* w, float* y,
               int64_t M, int64_t K, int64_t N);
  // dx [M, K] (+)= dy [M, N] · Wᵀ and dw [K, N] = xᵀ · dy (and, with learned step sizes, the
  // steps' gradient); int8 quantizes dx's gradient and takes dw's column scales in one pass.
  void Backward(int64_t l, Matrix m, LayerInput in, const float* x, const float* dy, const float* w,
                float* dx, float* dw, int64_t M, int64_t K, int64_t N, bool accumulate = false);

 private:
  struct Layer {
    repops::QuantizedWeight w[kMatrices];
    repops::QuantizedInput in[kLayerInputs];  // empty but in layer 0 when inputs are shared
  };
  repops::QuantizedInput& Input(int64_t l, LayerInput in) {
    return layers_[shared_inputs_ ? 0 : l].in[static_cast<int>(in)];
  }
  repops::Backend& be_;
  bool quant_, learned_, shared_inputs_;
  repops::Int8Backward backward_;
  const ParameterSet* params_ = nullptr;
  bool hold_ = false;
  const ParameterSet* held_ = nullptr;  // the set quantized while held
  std::vector<bool> ready_;             // layer l's matrices quantized from params_
  ParameterSet* grads_ = nullptr;
  std::vector<Layer> layers_;
  repops::Int8Scratch scratch_;
};

}  // namespace trail::model
