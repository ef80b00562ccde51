// Runs, checkpoints and audits: what `trail train verify` and `trail audit ...` do, callable
// from Python. Verdicts come back as the JSON text the CLI prints with --json.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "audit/attestation.h"
#include "audit/bisect.h"
#include "audit/certify.h"
#include "audit/collect.h"
#include "audit/plan.h"
#include "audit/published_run.h"
#include "audit/replay.h"
#include "bindings.h"
#include "core/safetensors.h"
#include "train/checkpoint.h"
#include "train/run_dir.h"
#include "train/step_trace.h"

namespace trail::python {
namespace {

namespace py = pybind11;
using nlohmann::json;

// Runs `fn` without the GIL and with the kernel state fixed (see KernelStateMutex).
template <class Fn>
auto Unlocked(Fn&& fn) {
  py::gil_scoped_release nogil;
  const std::shared_lock lock(KernelStateMutex());
  return fn();
}

std::string VerifyRun(const std::string& dir) {
  const train::RunCheck r = Unlocked([&] { return train::RunDirectory(dir).Verify(); });
  return json{
      {"ok", r.ok()}, {"steps", r.steps}, {"checkpoints", r.checkpoints}, {"problems", r.problems}}
      .dump();
}

std::string Replay(const std::string& dir, const std::vector<int64_t>& steps,
                   const std::string& data) {
  audit::ReplayOptions o;
  o.run_dir = dir, o.data = data, o.steps = steps, o.quiet = true;
  for (size_t i = 1; i < steps.size(); ++i) {
    if (steps[i] <= steps[i - 1]) throw py::value_error("steps must be ascending and distinct");
  }
  return Unlocked([&] { return audit::ReportJson(audit::ReplaySteps(o)).dump(); });
}

// `trail audit trace`: writes the trace file and returns the step's replay report.
std::string Trace(const std::string& dir, int64_t step, const std::string& out, int64_t capture,
                  const std::string& data) {
  audit::ReplayOptions o;
  o.run_dir = dir, o.data = data, o.steps = {step}, o.quiet = true;
  o.trace_step = step, o.capture = capture, o.bisect = false;
  return Unlocked([&] {
    const audit::ReplayReport r = audit::ReplaySteps(o);
    train::WriteStepTrace(out, r.trace);
    return audit::ReportJson(r).dump();
  });
}

std::string ReadTrace(const std::string& path) {
  const train::StepTrace t = Unlocked([&] { return train::ReadStepTrace(path); });
  json ops = json::array();
  for (const train::TraceOp& op : t.ops) {
    json e = {{"rank", op.rank},     {"micro", op.micro}, {"op", op.op},    {"layer", op.layer},
              {"tensor", op.tensor}, {"shape", op.shape}, {"hash", op.hash}};
    if (!op.values.empty()) e["values"] = op.values;
    ops.push_back(std::move(e));
  }
  return json{{"step", t.step},       {"genesis", t.genesis}, {"chain", t.chain},
              {"backend", t.backend}, {"threads", t.threads}, {"processes", t.processes},
              {"ops", std::move(ops)}}
      .dump();
}

std::string Bisect(const std::string& a, const std::string& b, const std::string& run,
                   const std::string& data, bool strict) {
  if (strict && run.empty()) throw py::value_error("strict=True needs run=");
  return Unlocked([&] {
    const train::StepTrace ta = train::ReadStepTrace(a), tb = train::ReadStepTrace(b);
    if (strict) audit::CheckStrictTraces(a, ta, tb, run);
    const audit::Divergence d =
        run.empty() ? audit::Bisect(ta, tb) : audit::BisectWithRun(ta, tb, run, data);
    return audit::DivergenceJson(d).dump();
  });
}

std::string Plan(const std::string& dir, int64_t auditors, int64_t redundancy, int64_t sample,
                 int64_t segments) {
  return Unlocked([&] {
    return audit::PlanJson(audit::PlanForRun(dir, auditors, redundancy, sample, segments)).dump();
  });
}

// `trail audit certify`: the report and the signed attestation, both as JSON text.
std::pair<std::string, std::string> Certify(const std::string& dir, const std::string& plan,
                                            const std::string& key, int64_t auditor,
                                            const std::string& data) {
  audit::CertifyOptions o;
  o.run_dir = dir, o.plan_path = plan, o.key_path = key, o.auditor = auditor, o.data = data;
  o.quiet = true;
  return Unlocked([&] {
    const audit::Certified c = audit::Certify(o);
    return std::make_pair(audit::ReportJson(c.report).dump(), c.attestation.dump());
  });
}

// An attestation whose signature verified: its signer's fingerprint and statement.
std::string ReadAttestation(const std::string& path) {
  const audit::SignedAttestation a = Unlocked([&] { return audit::ReadSignedAttestation(path); });
  return json{{"path", a.path}, {"signer", a.signer}, {"statement", a.statement}}.dump();
}

std::string Collect(const std::string& dir, const std::string& plan,
                    const std::vector<std::string>& attestations, const std::string& keys) {
  return Unlocked(
      [&] { return audit::CollectJson(audit::Collect(dir, plan, attestations, keys)).dump(); });
}

// The tensors of a safetensors file and where their bytes lie, every offset checked against
// the file (the package maps the file and views those bytes without copying them).
py::dict SafetensorsLayoutOf(const std::string& path) {
  const SafetensorsLayout l = Unlocked([&] { return ReadSafetensorsLayout(path); });
  py::list tensors;
  for (const SafetensorsEntry& e : l.tensors) {
    tensors.append(
        py::make_tuple(e.name, std::string(DTypeName(e.dtype)), e.shape, e.offset, e.nbytes));
  }
  py::dict out;
  out["metadata"] = l.metadata;
  out["tensors"] = tensors;
  out["file_size"] = l.file_size;
  return out;
}

// Checks a checkpoint's files against its meta.json (format, both files' SHA-256).
void VerifyCheckpoint(const std::string& dir) {
  Unlocked([&] { return train::VerifyCheckpointFiles(dir); });
}

}  // namespace

void BindRuns(py::module_& m) {
  m.def("verify_run", &VerifyRun, py::arg("run"));
  m.def("replay", &Replay, py::arg("run"), py::arg("steps"), py::arg("data") = "");
  m.def("trace", &Trace, py::arg("run"), py::arg("step"), py::arg("out"), py::arg("capture") = -1,
        py::arg("data") = "");
  m.def("read_trace", &ReadTrace, py::arg("path"));
  m.def("bisect", &Bisect, py::arg("a"), py::arg("b"), py::arg("run") = "", py::arg("data") = "",
        py::arg("strict") = false);
  m.def("plan", &Plan, py::arg("run"), py::arg("auditors"), py::arg("redundancy"),
        py::arg("sample"), py::arg("segments") = 0);
  m.def("certify", &Certify, py::arg("run"), py::arg("plan"), py::arg("key"), py::arg("auditor"),
        py::arg("data") = "");
  m.def("read_attestation", &ReadAttestation, py::arg("path"));
  m.def("collect", &Collect, py::arg("run"), py::arg("plan"), py::arg("attestations"),
        py::arg("keys"));
  m.def("safetensors_layout", &SafetensorsLayoutOf, py::arg("path"));
  m.def("verify_checkpoint", &VerifyCheckpoint, py::arg("dir"));
  m.def("list_checkpoints", &train::ListCheckpoints, py::arg("run"));
  m.def("checkpoint_dir", &train::CheckpointDir, py::arg("run"), py::arg("step"));
  m.def("trace_path", &train::TracePath, py::arg("run"), py::arg("step"));
}

}  // namespace trail::python
