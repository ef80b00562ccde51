#include "train/step_trace.h"

#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_util.h"
#include "core/hash.h"
#include "core/json_read.h"
#include "core/state_hash.h"
#include "core/thread_pool.h"

namespace trail::train {
namespace {

nlohmann::json OpJson(const TraceOp& o, size_t i) {
  nlohmann::json j = {{"i", i},           {"rank", o.rank},   {"micro", o.micro},
                      {"op", o.op},       {"layer", o.layer}, {"tensor", o.tensor},
                      {"shape", o.shape}, {"hash", o.hash}};
  if (!o.values.empty()) j["values"] = o.values;
  return j;
}

// An entry as read from a file, checked so that no later use overflows or over-allocates: at
// most 8 dimensions of at most 2^40 elements in all, and values (when present) that are exactly
// the output's bytes in hex.
TraceOp OpFromJson(const nlohmann::json& j) {
  TraceOp o;
  o.rank = JsonInteger<int64_t>(j.at("rank"), "a trace entry's rank");
  o.micro = JsonInteger<int64_t>(j.at("micro"), "a trace entry's micro-batch");
  o.layer = JsonInteger<int64_t>(j.at("layer"), "a trace entry's layer");
  o.op = j.at("op"), o.tensor = j.at("tensor");
  o.shape = JsonIntegers<int64_t>(j.at("shape"), "a trace entry's shape");
  o.hash = j.at("hash");
  if (j.contains("values")) o.values = j.at("values");
  TRAIL_CHECK(o.shape.size() <= 8, "a trace entry of rank ", o.shape.size());
  uint64_t n = 1;
  for (int64_t d : o.shape) {
    TRAIL_CHECK(d >= 0, "a trace entry's dimension ", d);
    if (d == 0) n = 0;
    TRAIL_CHECK(d == 0 || n <= (uint64_t{1} << 40) / static_cast<uint64_t>(d),
                "a trace entry of more than 2^40 elements");
    n *= static_cast<uint64_t>(d);
  }
  TRAIL_CHECK(o.values.empty() || o.values.size() == 8 * n, "a trace entry's values hold ",
              o.values.size() / 2, " bytes for ", n, " elements");
  return o;
}

// Every process's entries, in process order (= logical rank order), on every process.
std::vector<TraceOp> GatherOps(collectives::Communicator& comm, const std::vector<TraceOp>& mine) {
  if (comm.size() == 1) return mine;
  std::string text;
  for (const TraceOp& o : mine) text += OpJson(o, 0).dump() + "\n";
  std::vector<TraceOp> all;
  for (const std::vector<uint8_t>& part :
       comm.AllGather(std::vector<uint8_t>(text.begin(), text.end()))) {
    const std::string s(part.begin(), part.end());
    for (size_t pos = 0, nl; (nl = s.find('\n', pos)) != std::string::npos; pos = nl + 1) {
      all.push_back(OpFromJson(nlohmann::json::parse(s.substr(pos, nl - pos))));
    }
  }
  return all;
}

}  // namespace

std::string TraceOp::Identity() const {
  return StrCat("rank ", rank, " micro ", micro, " ", op, " layer ", layer, " ", tensor, " ",
                nlohmann::json(shape).dump());
}

void TraceRecorder::BeginMicroBatch(int64_t logical_rank, int64_t micro, const Digest& batch) {
  rank_ = logical_rank, micro_ = micro;
  ops_.push_back({rank_, micro_, -1, "batch", "tokens", {}, ToHex(batch), ""});
}

void TraceRecorder::Output(const char* op, int64_t layer, const char* tensor,
                           const model::OpOutput& out) {
  const std::vector<float> host = out.ToHost();
  TraceOp o{rank_,
            micro_,
            layer,
            op,
            tensor,
            out.shape(),
            ToHex(ElementsRoot(DType::kF32, host.data(), static_cast<int64_t>(host.size()))),
            ""};
  if (static_cast<int64_t>(ops_.size()) == capture_) {
    o.values = HexOf({reinterpret_cast<const uint8_t*>(host.data()), host.size() * 4});
  }
  ops_.push_back(std::move(o));
}

std::string TracedStepAndChain(StepEngine& engine, TrainState& st, StepResult& r,
                               const Digest& genesis, StepTrace& trace, int64_t capture) {
  TRAIL_CHECK(capture < 0 || engine.comm().size() == 1,
              "capturing an operation's values needs a job of one process");
  TraceRecorder rec(capture);
  engine.set_observer(&rec);
  std::string line;
  try {
    line = StepAndChain(engine, st, r);
  } catch (...) {
    engine.set_observer(nullptr);
    throw;
  }
  engine.set_observer(nullptr);
  trace.step = r.step, trace.genesis = ToHex(genesis), trace.chain = ToHex(st.chain);
  trace.backend = engine.backend().description();
  trace.threads = static_cast<int64_t>(KernelPool().num_threads());
  trace.processes = engine.comm().size();
  trace.ops = GatherOps(engine.comm(), rec.ops());
  trace.ops.push_back({-1, -1, -1, "step", "grads", {}, ToHex(r.grads_hash), ""});
  if (r.state_hashed) {
    trace.ops.push_back({-1, -1, -1, "step", "params", {}, ToHex(r.params_hash), ""});
    trace.ops.push_back({-1, -1, -1, "step", "optim", {}, ToHex(r.optim_hash), ""});
  }
  return line;
}

std::string TracePath(const std::string& run_dir, int64_t step) {
  char name[40];
  std::snprintf(name, sizeof name, "/traces/step_%08lld.trace", static_cast<long long>(step));
  return run_dir + name;
}

void WriteStepTrace(const std::string& path, const StepTrace& t) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  const nlohmann::json header = {
      {"format", "trail.trace.v1"}, {"genesis", t.genesis}, {"step", t.step},
      {"chain", t.chain},           {"backend", t.backend}, {"threads", t.threads},
      {"processes", t.processes},   {"ops", t.ops.size()}};
  std::string text = header.dump() + "\n";
  for (size_t i = 0; i < t.ops.size(); ++i) text += OpJson(t.ops[i], i).dump() + "\n";
  WriteFileAtomic(path, text);
}

StepTrace ReadStepTrace(const std::string& path) {
  const std::string text = ReadFileToString(path);
  StepTrace t;
  size_t line_no = 0, pos = 0, expected = 0;
  for (size_t nl; (nl = text.find('\n', pos)) != std::string::npos; pos = nl + 1) {
    ++line_no;
    try {
      const nlohmann::json j = nlohmann::json::parse(text.substr(pos, nl - pos));
      if (line_no == 1) {
        TRAIL_CHECK(j.at("format") == "trail.trace.v1", path, ": not a trail operation trace");
        t.genesis = j.at("genesis"), t.chain = j.at("chain"), t.backend = j.at("backend");
        t.step = JsonInteger<int64_t>(j.at("step"), path + ": step");
        t.threads = JsonInteger<int64_t>(j.at("threads"), path + ": threads");
        t.processes = JsonInteger<int64_t>(j.at("processes"), path + ": processes");
        expected = JsonInteger<decltype(expected)>(j.at("ops"), path + ": ops");
        continue;
      }
      TRAIL_CHECK(j.at("i") == t.ops.size(), path, ":", line_no, ": entry ", j.at("i").dump(),
                  " where entry ", t.ops.size(), " belongs");
      try {
        t.ops.push_back(OpFromJson(j));
      } catch (const Error& e) {
        TRAIL_FAIL(path, ":", line_no, ": ", e.what());
      }
    } catch (const nlohmann::json::exception& e) {
      TRAIL_FAIL(path, ":", line_no, ": malformed trace line: ", e.what());
    }
  }
  TRAIL_CHECK(line_no > 0 && pos == text.size(), path, ": empty or torn trace");
  TRAIL_CHECK(t.ops.size() == expected, path, ": holds ", t.ops.size(),
              " entries but its header says ", expected);
  return t;
}

namespace {

constexpr const char* kTraceSignatureFormat = "trail.trace.signature.v1";

nlohmann::json TraceStatement(const std::string& trace_path, const StepTrace& t) {
  return {{"format", kTraceSignatureFormat},
          {"trace_sha256", ToHex(Sha256OfFile(trace_path))},
          {"genesis", t.genesis},
          {"step", t.step},
          {"chain", t.chain}};
}

}  // namespace

void SignStepTrace(const std::string& trace_path, const StepTrace& t, const SigningKey& key) {
  const nlohmann::json statement = TraceStatement(trace_path, t);
  const nlohmann::json doc = {
      {"statement", statement},
      {"public_key", key.public_hex()},
      {"signature", key.Sign(std::string(kTraceSignatureFormat) + "\n" + statement.dump())}};
  WriteFileAtomic(trace_path + ".sig", doc.dump() + "\n");
}

TraceSignatureCheck CheckTraceSignature(const std::string& trace_path, const StepTrace& t) {
  TraceSignatureCheck c;
  const std::string sig = trace_path + ".sig";
  c.present = std::filesystem::exists(sig);
  if (!c.present) return c;
  try {
    const nlohmann::json doc = nlohmann::json::parse(ReadFileToString(sig));
    const nlohmann::json& statement = doc.at("statement");
    const SigningKey k = SigningKey::FromPublicHex(doc.at("public_key"), sig + ": public_key");
    if (!k.Verify(std::string(kTraceSignatureFormat) + "\n" + statement.dump(),
                  doc.at("signature").get<std::string>())) {
      c.problem = sig + ": the signature does not verify";
    } else if (statement != TraceStatement(trace_path, t)) {
      c.problem = sig + ": signs another trace (its hash, genesis, step or chain differ)";
    } else {
      c.signer = k.fingerprint();
    }
  } catch (const nlohmann::json::exception& e) {
    c.problem = sig + ": malformed trace signature: " + e.what();
  } catch (const Error& e) {
    c.problem = e.what();
  }
  return c;
}

}  // namespace trail::train
