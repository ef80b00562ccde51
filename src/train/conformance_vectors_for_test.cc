// Writes the conformance vectors (tests/conformance/vectors/, its README says what each file
// holds) of the golden training runs and the RepOps golden cases: what a port of docs/ must
// reproduce, step by step and buffer by buffer.
// A test program, never part of the trail binary; `make test` runs it into a temporary folder
// and compares the result with the committed files byte for byte (tests/conformance_test.sh).
//
//   conformance_vectors OUT_DIR
//
// Every value written is the same on every SIMD target, thread count and ISA (the golden
// contract), so the files are too: the trace's machine fields are set to fixed values.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_util.h"
#include "core/hash.h"
#include "data/batcher.h"
#include "repops/golden_suite.h"
#include "repops/kernels.h"
#include "train/step_trace.h"
#include "train/train_golden.h"
#include "train/trajectory.h"

namespace trail::train {
namespace {

using Json = nlohmann::ordered_json;

// The case whose first step is traced and whose inputs are written out in full.
constexpr const char* kDetailedCase = "mesh_1x1x2";

std::string Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  char s[9];
  std::snprintf(s, sizeof s, "%08x", u);
  return s;
}

// Every initial parameter tensor: name, shape, SHA-256 of its little-endian float32 bytes and
// the bits of its first four values (where a port's initialization goes wrong first).
std::string InitialTensors(const TrainState& st) {
  std::string out;
  for (const Tensor& t : st.params.ToHost()) {
    Json first = Json::array();
    for (int64_t i = 0; i < std::min<int64_t>(4, t.numel()); ++i) {
      first.push_back(Bits(t.data<float>()[i]));
    }
    const auto* bytes = reinterpret_cast<const uint8_t*>(t.bytes());
    out += Json{{"name", t.name()},
                {"shape", t.shape()},
                {"sha256", ToHex(Sha256({bytes, t.nbytes()}))},
                {"first_bits", first}}
               .dump() +
           "\n";
  }
  return out;
}

// Every micro-batch the case's steps read, in mesh order, with its canonical digest.
std::string Batches(const GoldenCase& gc) {
  data::CanonicalStream stream(gc.manifest());
  data::Batcher batcher(stream);
  const MeshConfig& mesh = gc.recipe().mesh;
  const int64_t ranks = mesh.replicas * mesh.shards;
  std::string out;
  data::PackedBatch b;
  for (int64_t step = 0; step < gc.steps(); ++step) {
    for (int64_t rank = 0; rank < ranks; ++rank) {
      for (int64_t m = 0; m < batcher.NumMicroBatches(step, rank, ranks); ++m) {
        batcher.MicroBatch(step, rank, ranks, m, b);
        Json windows = Json::array();
        for (uint64_t w : b.windows) {
          windows.push_back(w == data::kPaddingRow ? Json(nullptr) : Json(w));
        }
        out += Json{{"step", step},
                    {"rank", rank},
                    {"micro", m},
                    {"rows", b.rows},
                    {"seq_len", b.seq_len},
                    {"windows", windows},
                    {"inputs", b.inputs},
                    {"labels", b.labels},
                    {"doc_ids", b.doc_ids},
                    {"positions", b.positions},
                    {"key_valid", b.key_valid},
                    {"digest", ToHex(MicroBatchDigest(b))}}
                   .dump() +
               "\n";
      }
    }
  }
  return out;
}

void WriteCase(const std::string& name, const std::string& dir) {
  GoldenCase gc(name);
  const std::string base = dir + "/" + name;
  WriteFileAtomic(base + ".toml", gc.recipe_text());
  WriteFileAtomic(base + ".genesis.json",
                  Json{{"recipe_sha256", gc.recipe().sha256},
                       {"manifest", "golden"},
                       {"initial_params_hash", ToHex(gc.state().params.StateHash())},
                       {"genesis", ToHex(gc.genesis())}}
                          .dump(1) +
                      "\n");
  const bool detailed = name == kDetailedCase;
  if (detailed) {
    WriteFileAtomic(base + ".init.jsonl", InitialTensors(gc.state()));
    WriteFileAtomic(base + ".batches.jsonl", Batches(gc));
  }
  std::string trajectory, states;
  for (int64_t s = 0; s < gc.steps(); ++s) {
    StepResult r;
    if (detailed && s == 0) {
      StepTrace trace;
      trajectory += TracedStepAndChain(gc.engine(), gc.state(), r, gc.genesis(), trace) + "\n";
      trace.backend = "any", trace.threads = 0, trace.processes = 1;
      WriteStepTrace(base + ".step0.trace", trace);
    } else {
      trajectory += StepAndChain(gc.engine(), gc.state(), r) + "\n";
    }
    states += Json{{"step", s},
                   {"params", ToHex(gc.state().params.StateHash())},
                   {"optim", ToHex(gc.state().OptimizerHash())}}
                  .dump() +
              "\n";
  }
  WriteFileAtomic(base + ".trajectory.jsonl", trajectory);
  WriteFileAtomic(base + ".states.jsonl", states);
  // The vectors must be the goldens' runs: the final chain is the committed golden value.
  const auto want = CommittedTrainingGolden().find(name);
  TRAIL_CHECK(want != CommittedTrainingGolden().end() && want->second == ToHex(gc.state().chain),
              name, ": the final chain is not goldens/training.txt's");
}

// Every RepOps golden case's output buffers in the order hashed: name, dtype, element count,
// tensor digest and the bits of the first elements (docs/goldens.md §1).
std::string RepOpsBuffers() {
  std::string out;
  for (const repops::GoldenResult& r : repops::RunGoldenSuite()) {
    for (size_t i = 0; i < r.buffers.size(); ++i) {
      const repops::GoldenBuffer& b = r.buffers[i];
      Json first = Json::array();
      for (uint32_t u : b.first_bits) {
        char hex[9];
        std::snprintf(hex, sizeof hex, "%08x", u);
        first.push_back(hex);
      }
      out += Json{{"case", r.name},     {"i", i},
                  {"name", b.name},     {"dtype", b.i32 ? "I32" : "F32"},
                  {"count", b.count},   {"digest", b.digest},
                  {"first_bits", first}}
                 .dump() +
             "\n";
    }
  }
  return out;
}

}  // namespace
}  // namespace trail::train

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: conformance_vectors OUT_DIR\n");
    return 2;
  }
  try {
    // TRAIL_SIMD_TARGET and TRAIL_NUM_THREADS choose the kernels, as for every trail command
    // (conformance_test.sh regenerates on two).
    trail::repops::UseDefaultSimdTarget();
    const std::string dir = std::string(argv[1]) + "/training";
    std::filesystem::create_directories(dir);
    for (const std::string& name : trail::train::GoldenCaseNames()) {
      trail::train::WriteCase(name, dir);
    }
    const std::string repops_dir = std::string(argv[1]) + "/repops";
    std::filesystem::create_directories(repops_dir);
    trail::WriteFileAtomic(repops_dir + "/buffers.jsonl", trail::train::RepOpsBuffers());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "conformance_vectors: %s\n", e.what());
    return 1;
  }
  return 0;
}
