#include "model/params.h"

#include <cmath>

#include "core/philox.h"
#include <algorithm>

#include "core/error.h"
#include "core/state_hash.h"
#include "repops/parallel.h"
#include "repops/int8_linear.h"
#include "repops/random.h"

namespace trail::model {

ParameterSet::ParameterSet(const ModelConfig& c, const std::string& prefix) : prefix_(prefix) {
  c.Validate();
  const int64_t d = c.d_model, V = c.vocab_size, ff = c.d_ff;
  // Reserve first: the role pointers below point into the vector.
  tensors_.reserve(4 + 16 * static_cast<size_t>(c.n_layers));
  auto add = [&](const std::string& name, std::vector<int64_t> shape) {
    tensors_.push_back(Tensor::Of<float>(prefix + name, std::move(shape)));
    tensors_.back().Zero();
    return &tensors_.back();
  };
  embed = add("embed", {V, d});
  if (c.embed_norm && c.norm_gain) embed_norm = add("embed_norm.gain", {d});
  layers.resize(c.n_layers);
  for (int64_t l = 0; l < c.n_layers; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    LayerParams& L = layers[l];
    if (c.norm_gain) L.attn_norm = add(p + "attn_norm.gain", {d});
    L.wq = add(p + "attn.wq", {d, d});
    L.wk = add(p + "attn.wk", {d, d});
    L.wv = add(p + "attn.wv", {d, d});
    L.wo = add(p + "attn.wo", {d, d});
    if (c.norm_gain) L.mlp_norm = add(p + "mlp_norm.gain", {d});
    L.w_gate = add(p + (c.mlp == MlpKind::kSwiGlu ? "mlp.w_gate" : "mlp.w_in"), {d, ff});
    if (c.mlp == MlpKind::kSwiGlu) L.w_up = add(p + "mlp.w_up", {d, ff});
    L.w_down = add(p + "mlp.w_down", {ff, d});
    if (c.quant_step_learned) {
      for (int m = 0; m < kMatrices; ++m) {
        const Tensor* w = L.matrix(static_cast<Matrix>(m));
        if (w != nullptr) L.step[m] = add(w->name().substr(prefix.size()) + ".step", {w->dim(1)});
      }
    }
  }
  if (c.norm_gain) final_norm = add("final_norm.gain", {d});
  if (!c.tied_embeddings) lm_head = add("lm_head", {d, V});
}

void ParameterSet::InitRandom(const ModelConfig& c) {
  const float out_std = c.init_std / std::sqrt(2.0f * static_cast<float>(c.n_layers));
  for (Tensor& t : tensors_) {
    const std::string name = t.name().substr(prefix_.size());
    float* x = t.data<float>();
    if (name.ends_with(".gain")) {
      for (int64_t i = 0; i < t.numel(); ++i) x[i] = 1.0f;
      continue;
    }
    if (name.ends_with(".step")) {  // a learned step size: the formula on its (earlier) matrix
      const Tensor* w = Find(name.substr(0, name.size() - 5));
      TRAIL_CHECK(w != nullptr, "no matrix for the step sizes ", name);
      repops::WeightStepSizes(w->data<float>(), w->dim(0), w->dim(1), x);
      continue;
    }
    const bool output_proj = name.ends_with("attn.wo") || name.ends_with("mlp.w_down");
    repops::FillNormal(x, t.numel(), c.init_seed, StreamIdForName(name.c_str()), 0.0f,
                       output_proj ? out_std : c.init_std);
  }
}

const Tensor* LayerParams::matrix(Matrix m) const {
  switch (m) {
    case Matrix::kQ: return wq;
    case Matrix::kK: return wk;
    case Matrix::kV: return wv;
    case Matrix::kO: return wo;
    case Matrix::kGate: return w_gate;
    case Matrix::kUp: return w_up;
    case Matrix::kDown: return w_down;
  }
  return nullptr;
}

void ParameterSet::Zero() {
  for (Tensor& t : tensors_) t.Zero();
}

int64_t ParameterSet::numel() const {
  int64_t n = 0;
  for (const Tensor& t : tensors_) n += t.numel();
  return n;
}

Digest ParameterSet::StateHash() const {
  std::vector<const Tensor*> ptrs;
  for (const Tensor& t : tensors_) ptrs.push_back(&t);
  return StateDigest(ptrs);
}

const Tensor* ParameterSet::Find(const std::string& name) const {
  for (const Tensor& t : tensors_) {
    if (t.name() == prefix_ + name) return &t;
  }
  return nullptr;
}

}  // namespace trail::model

namespace trail::model {

void AddParameterSets(ParameterSet& acc, const ParameterSet& x) {
  TRAIL_CHECK(acc.tensors().size() == x.tensors().size(), "adding parameter sets of different layouts");
  for (size_t i = 0; i < x.tensors().size(); ++i) {
    Tensor& a = acc.tensors()[i];
    const Tensor& b = x.tensors()[i];
    TRAIL_CHECK(a.numel() == b.numel(), "adding tensors of different sizes: ", a.name(), ", ",
                b.name());
    float* y = a.data<float>();
    const float* v = b.data<float>();
    constexpr int64_t kChunk = 1 << 14;
    const int64_t n = a.numel();
    repops::ForEachRow((n + kChunk - 1) / kChunk, [&](int64_t c) {
      const int64_t end = std::min(n, (c + 1) * kChunk);
      for (int64_t j = c * kChunk; j < end; ++j) y[j] = y[j] + v[j];
    });
  }
}

}  // namespace trail::model
