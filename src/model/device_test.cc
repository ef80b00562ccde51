// The model on the device seam: with parameters, gradients and activations on the guarded test
// device (memory host code cannot touch outside the backend's ops), initialization, a forward
// and backward and the state hash must run, and give the CPU backend's bits, for every feature
// set and for int8 QAT; an observer must reach the outputs only through the backend's copy.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "model/transformer.h"
#include "repops/cpu_backend.h"
#include "repops/guarded_backend.h"
#include "repops/kernels.h"

namespace trail::model {
namespace {

ModelConfig Small() {
  ModelConfig c;
  c.vocab_size = 41, c.d_model = 16, c.n_layers = 2, c.n_heads = 2, c.d_ff = 24;
  c.max_seq_len = 16, c.init_std = 0.3f, c.init_seed = 5;
  return c;
}

std::vector<std::pair<std::string, ModelConfig>> Configs() {
  std::vector<std::pair<std::string, ModelConfig>> out;
  ModelConfig open1b = Small();
  open1b.qk_norm = true, open1b.embed_norm = true, open1b.z_loss = 1e-2f;
  open1b.attention_window = 3, open1b.full_attention_every = 2, open1b.tied_embeddings = true;
  out.push_back({"open1b_features", open1b});
  ModelConfig gpt2 = Small();
  gpt2.mlp = MlpKind::kGelu, gpt2.tied_embeddings = false;
  out.push_back({"gpt2_features", gpt2});
  for (auto mode : {repops::Int8Backward::kInt8, repops::Int8Backward::kFp32}) {
    ModelConfig q = open1b;
    q.linear_quant = LinearQuant::kInt8Lsq, q.quant_backward = mode;
    out.push_back({std::string("int8_backward_") + QuantBackwardName(mode), q});
  }
  ModelConfig learned = open1b;
  learned.linear_quant = LinearQuant::kInt8Lsq, learned.quant_step_learned = true;
  out.push_back({"int8_learned_steps", learned});
  return out;
}

// Two rows of 10: two documents with restarting positions, and a document then padding.
struct Batch {
  std::vector<int32_t> inputs, labels, doc_ids, positions;
  std::vector<uint8_t> valid;
  explicit Batch(int32_t vocab) {
    for (int r = 0; r < 2; ++r) {
      for (int t = 0; t < 10; ++t) {
        const bool pad = r == 1 && t >= 7;
        inputs.push_back(pad ? 0 : (r * 17 + t * 7 + 3) % vocab);
        labels.push_back(pad || t == 9 || (r == 0 && t == 5) ? -100 : (r * 5 + t * 11) % vocab);
        doc_ids.push_back(r == 0 && t >= 6 ? 1 : 0);
        positions.push_back(r == 0 && t >= 6 ? t - 6 : t);
        valid.push_back(pad ? 0 : 1);
      }
    }
  }
  BatchView View() const {
    return {2, 10, inputs.data(), labels.data(), doc_ids.data(), positions.data(), valid.data()};
  }
};

// Hashes nothing: copies each output to the host through the backend and keeps its bytes.
class Recorder : public OpObserver {
 public:
  void Output(const char* op, int64_t layer, const char* tensor, const OpOutput& out) override {
    const std::vector<float> v = out.ToHost();
    names.push_back(std::string(op) + "/" + std::to_string(layer) + "/" + tensor);
    values.push_back(std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4));
  }
  std::vector<std::string> names, values;
};

struct Outcome {
  repops::CrossEntropySums sums;
  std::vector<float> logits;
  std::vector<std::string> grads;
  Digest params_hash{};
  Recorder ops;
};

Outcome RunModel(const ModelConfig& c, repops::Backend& be) {
  ParameterSet params(c, be), grads(c, be);
  params.InitRandom(c);
  const Batch b(static_cast<int32_t>(c.vocab_size));
  Transformer model(c, be);
  Activations acts(c, 2, 12, be);  // planned larger than the batch
  Outcome out;
  model.set_observer(&out.ops);
  out.sums = model.ForwardBackward(params, b.View(), 0.05f, acts, grads);
  // A second forward on the same activations: nothing may leak from the first.
  model.set_observer(nullptr);
  model.Forward(params, b.View(), acts);
  out.logits.resize(20 * c.vocab_size);
  be.CopyToHost(Transformer::Logits(acts, 2, 10), out.logits.data());
  for (const Tensor& t : grads.ToHost()) {
    out.grads.emplace_back(reinterpret_cast<const char*>(t.bytes()), t.nbytes());
  }
  out.params_hash = params.StateHash();
  return out;
}

TEST(ModelOnDevices, GuardedDeviceGivesTheCpuBits) {
  for (const auto& [name, c] : Configs()) {
    repops::CpuBackend cpu;
    repops::GuardedBackend guarded;
    const Outcome a = RunModel(c, cpu);
    const Outcome g = RunModel(c, guarded);
    EXPECT_EQ(std::memcmp(&a.sums.nll_sum, &g.sums.nll_sum, 4), 0) << name;
    EXPECT_EQ(std::memcmp(&a.sums.lse_sq_sum, &g.sums.lse_sq_sum, 4), 0) << name;
    EXPECT_EQ(a.sums.valid, g.sums.valid) << name;
    EXPECT_EQ(std::memcmp(a.logits.data(), g.logits.data(), a.logits.size() * 4), 0) << name;
    EXPECT_EQ(a.grads, g.grads) << name;
    EXPECT_EQ(a.params_hash, g.params_hash) << name;  // initialized and hashed on the device
    EXPECT_GT(a.ops.names.size(), 40u) << name;
    EXPECT_EQ(a.ops.names, g.ops.names) << name;
    EXPECT_EQ(a.ops.values, g.ops.values) << name;
    EXPECT_FALSE(guarded.memory().is_open()) << name;
  }
}

// A backend runs on the kernels it was made with, never on a global: two CPU backends on
// different SIMD targets give the same bits while the process-wide table is deliberately wrong.
TEST(ModelOnDevices, ABackendRunsOnItsOwnKernelsWhateverTheGlobalSelects) {
  const ModelConfig c = Configs()[0].second;
  repops::CpuBackend reference(repops::ReferenceKernels(), HostAllocator());
  repops::CpuBackend best(repops::ActiveKernels(), HostAllocator());
  const repops::Kernels& saved = repops::ActiveKernels();
  repops::Kernels broken = saved;  // every reduction and GEMM wrong
  broken.sum_sq = [](const float*, size_t) { return 1.0f; };
  broken.dot = [](const float*, const float*, size_t) { return 1.0f; };
  broken.gemm = [](const repops::GemmArgs&) {};
  repops::UseKernels(broken);
  const Outcome a = RunModel(c, reference);
  const Outcome b = RunModel(c, best);
  repops::UseKernels(saved);
  EXPECT_EQ(std::memcmp(a.logits.data(), b.logits.data(), a.logits.size() * 4), 0);
  EXPECT_EQ(a.grads, b.grads);
  EXPECT_EQ(a.ops.values, b.ops.values);
  EXPECT_EQ(a.params_hash, b.params_hash);
  const Outcome fresh = RunModel(c, reference);  // and the same as with the right table set
  EXPECT_EQ(fresh.grads, a.grads);
}

// The guard is real: the activations and parameters are on the guarded device, and reading
// them from host code faults, while the same read through the backend works.
TEST(ModelOnDevices, HostReadsOfGuardedActivationsFault) {
  const ModelConfig c = Small();
  repops::GuardedBackend guarded;
  ParameterSet params(c, guarded);
  params.InitRandom(c);
  const Batch b(static_cast<int32_t>(c.vocab_size));
  Transformer model(c, guarded);
  Activations acts(c, 2, 10, guarded);
  model.Forward(params, b.View(), acts);
  const TensorView logits = Transformer::Logits(acts, 2, 10);
  EXPECT_EQ(logits.device, (Device{kGuardedDevice, 0}));
  std::vector<float> host(logits.numel());
  guarded.CopyToHost(logits, host.data());
  EXPECT_TRUE(std::isfinite(host[0]));
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        volatile float x = logits.as<float>()[0];
        (void)x;
      },
      "");
  EXPECT_DEATH(std::memset(logits.data, 0, 4), "");
  EXPECT_DEATH(
      {
        volatile float x = params.embed->data<float>()[0];
        (void)x;
      },
      "");
}

}  // namespace
}  // namespace trail::model
