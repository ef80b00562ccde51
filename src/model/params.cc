#include "model/params.h"

#include <cmath>

#include <algorithm>

#include "core/error.h"
#include "core/philox.h"
#include "core/state_hash.h"

namespace trail::model {

ParameterSet::ParameterSet(const ModelConfig& c, repops::Backend& backend,
                           const std::string& prefix, Memory memory)
    : be_(backend), prefix_(prefix) {
  c.Validate();
  const int64_t d = c.d_model, V = c.vocab_size, ff = c.d_ff, qd = c.q_dim(), kvd = c.kv_dim();
  // Reserve first: the role pointers below point into the vector, so it must never grow. At
  // most 4 global tensors (embed and its norm, final norm, lm_head) and per layer 4 gains
  // (attn, q, k, mlp), the matrices and their learned step sizes.
  const size_t most = 4 + (4 + 2 * size_t{kMatrices}) * static_cast<size_t>(c.n_layers);
  tensors_.reserve(most);
  auto add = [&](const std::string& name, std::vector<int64_t> shape) {
    // Allocations are zero-filled (docs/devices.md).
    if (memory == Memory::kAllocated) {
      tensors_.emplace_back(prefix + name, DType::kF32, std::move(shape), be_.allocator());
    } else {
      tensors_.emplace_back(prefix + name, DType::kF32, std::move(shape), be_.allocator(),
                            DeviceTensor::Unbound{});
    }
    return &tensors_.back();
  };
  unit_bounds_.push_back(0);
  embed = add("embed", {V, d});
  if (c.embed_norm && c.norm_gain) embed_norm = add("embed_norm.gain", {d});
  unit_bounds_.push_back(tensors_.size());
  layers.resize(c.n_layers);
  for (int64_t l = 0; l < c.n_layers; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    LayerParams& L = layers[l];
    if (c.norm_gain) L.attn_norm = add(p + "attn_norm.gain", {d});
    L.wq = add(p + "attn.wq", {d, qd});
    L.wk = add(p + "attn.wk", {d, kvd});
    L.wv = add(p + "attn.wv", {d, kvd});
    L.wo = add(p + "attn.wo", {qd, d});
    if (c.qk_norm_gain) {
      L.q_norm = add(p + "attn.q_norm.gain", {c.q_norm_width()});
      L.k_norm = add(p + "attn.k_norm.gain", {c.k_norm_width()});
    }
    if (c.norm_gain) L.mlp_norm = add(p + "mlp_norm.gain", {d});
    L.w_gate = add(p + (c.mlp == MlpKind::kSwiGlu ? "mlp.w_gate" : "mlp.w_in"), {d, ff});
    if (c.mlp == MlpKind::kSwiGlu) L.w_up = add(p + "mlp.w_up", {d, ff});
    L.w_down = add(p + "mlp.w_down", {ff, d});
    if (c.quant_step_learned) {
      for (int m = 0; m < kMatrices; ++m) {
        const DeviceTensor* w = L.matrix(static_cast<Matrix>(m));
        if (w != nullptr) L.step[m] = add(w->name().substr(prefix.size()) + ".step", {w->dim(1)});
      }
    }
    unit_bounds_.push_back(tensors_.size());
  }
  if (c.norm_gain) final_norm = add("final_norm.gain", {d});
  if (!c.tied_embeddings) lm_head = add("lm_head", {d, V});
  unit_bounds_.push_back(tensors_.size());
  TRAIL_CHECK(tensors_.size() <= most, "parameter set: ", tensors_.size(),
              " tensors outgrew the reserved ", most);  // a pointer above would dangle
}

void ParameterSet::Unbind() {
  for (DeviceTensor& t : tensors_) t.Bind(nullptr);
}

bool ParameterSet::bound() const {
  return std::all_of(tensors_.begin(), tensors_.end(),
                     [](const DeviceTensor& t) { return t.data<float>() != nullptr; });
}

std::vector<int> AcquireOrder(int64_t n_layers, bool tied_embeddings, bool backward) {
  std::vector<int> order{ParameterSet::kEmbedUnit};
  for (int64_t l = 0; l < n_layers; ++l) order.push_back(ParameterSet::LayerUnit(l));
  order.push_back(ParameterSet::LayerUnit(n_layers));  // the head
  if (!backward) return order;
  for (int64_t l = n_layers - 1; l >= 0; --l) order.push_back(ParameterSet::LayerUnit(l));
  if (!tied_embeddings) order.push_back(ParameterSet::kEmbedUnit);
  return order;
}

void ParameterSet::InitRandom(const ModelConfig& c) {
  for (int u = 0; u < num_units(); ++u) InitUnit(c, u);
}

void ParameterSet::InitUnit(const ModelConfig& c, int unit) {
  const float out_std = c.init_std / std::sqrt(2.0f * static_cast<float>(c.n_layers));
  const auto [t0, t1] = unit_tensors(unit);
  for (size_t i = t0; i < t1; ++i) {
    DeviceTensor& t = tensors_[i];
    const std::string name = t.name().substr(prefix_.size());
    float* x = t.data<float>();
    if (name.ends_with(".gain")) {
      be_.Fill(x, t.numel(), 1.0f);
      continue;
    }
    if (name.ends_with(".step")) {  // a learned step size: the formula on its (earlier) matrix
      const DeviceTensor* w = Find(name.substr(0, name.size() - 5));
      TRAIL_CHECK(w != nullptr, "no matrix for the step sizes ", name);
      be_.WeightStepSizes(w->data<float>(), w->dim(0), w->dim(1), x);
      continue;
    }
    const bool output_proj = name.ends_with("attn.wo") || name.ends_with("mlp.w_down");
    be_.FillNormal(x, t.numel(), c.init_seed, StreamIdForName(name.c_str()), 0.0f,
                   output_proj ? out_std : c.init_std);
  }
}

const DeviceTensor* LayerParams::matrix(Matrix m) const {
  switch (m) {
    case Matrix::kQ:
      return wq;
    case Matrix::kK:
      return wk;
    case Matrix::kV:
      return wv;
    case Matrix::kO:
      return wo;
    case Matrix::kGate:
      return w_gate;
    case Matrix::kUp:
      return w_up;
    case Matrix::kDown:
      return w_down;
  }
  return nullptr;
}

void ParameterSet::Zero() {
  for (DeviceTensor& t : tensors_) be_.Zero(t.view());
}

int64_t ParameterSet::numel() const {
  int64_t n = 0;
  for (const DeviceTensor& t : tensors_) n += t.numel();
  return n;
}

Digest ParameterSet::StateHash() const { return StateHashOf(be_, {this}); }

const DeviceTensor* ParameterSet::Find(const std::string& name) const {
  for (const DeviceTensor& t : tensors_) {
    if (t.name() == prefix_ + name) return &t;
  }
  return nullptr;
}

std::vector<Tensor> ParameterSet::ToHost() const {
  std::vector<Tensor> out;
  out.reserve(tensors_.size());
  for (const DeviceTensor& t : tensors_) {
    out.emplace_back(t.name(), t.dtype(), t.shape());
    be_.CopyToHost(t.view(), out.back().bytes());
  }
  return out;
}

void ParameterSet::FromHost(std::span<const Tensor> host, const std::string& what) {
  for (DeviceTensor& t : tensors_) {
    const Tensor* src = nullptr;
    for (const Tensor& h : host) {
      if (h.name() == t.name()) src = &h;
    }
    TRAIL_CHECK(src != nullptr, what, ": tensor '", t.name(),
                "' is missing (a checkpoint of another model?)");
    TRAIL_CHECK(src->dtype() == t.dtype() && src->shape() == t.shape(), what, ": tensor '",
                t.name(), "' has another dtype or shape than this recipe's model");
    be_.CopyFromHost(src->bytes(), t.view());
  }
}

Digest StateHashOf(repops::Backend& be, std::initializer_list<const ParameterSet*> sets) {
  std::vector<int64_t> sizes;
  std::vector<TensorMeta> metas;
  std::vector<const DeviceTensor*> tensors;
  for (const ParameterSet* s : sets) {
    for (const DeviceTensor& t : s->tensors()) {
      sizes.push_back(t.numel());
      metas.push_back({t.name(), t.dtype(), t.shape()});
      tensors.push_back(&t);
    }
  }
  const ChunkLayout layout(sizes);
  std::vector<repops::LeafChunk> chunks;
  for (const StateChunk& ch : layout.chunks()) {
    chunks.push_back({tensors[ch.tensor]->data<float>() + ch.offset, ch.index, ch.count});
  }
  std::vector<Digest> leaves(chunks.size());
  be.ChunkLeaves(chunks, leaves.data());
  return StateRootFromLeaves(metas, layout, leaves);
}

}  // namespace trail::model

namespace trail::model {

void AddParameterSets(ParameterSet& acc, const ParameterSet& x) {
  TRAIL_CHECK(acc.tensors().size() == x.tensors().size(),
              "adding parameter sets of different layouts");
  for (size_t i = 0; i < x.tensors().size(); ++i) {
    DeviceTensor& a = acc.tensors()[i];
    const DeviceTensor& b = x.tensors()[i];
    TRAIL_CHECK(a.numel() == b.numel(), "adding tensors of different sizes: ", a.name(), ", ",
                b.name());
    acc.backend().AddInto(a.data<float>(), b.data<float>(), a.numel());
  }
}

}  // namespace trail::model
