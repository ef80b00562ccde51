#include "audit/bisect.h"

#include <bit>
#include <cstdio>
#include <cstring>

#include "audit/published_run.h"
#include "audit/replay.h"
#include "core/error.h"
#include "core/hash.h"
#include "repops/kernels.h"

namespace trail::audit {
namespace {

std::vector<float> ValuesOf(const std::string& hex, size_t n, const std::string& where) {
  const std::vector<uint8_t> bytes = BytesFromHex(hex, n * 4, where);
  std::vector<float> out(n);
  std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

void NameElement(Divergence& d) {
  int64_t n = 1;
  for (int64_t s : d.a.shape) n *= s;
  const std::vector<float> a = ValuesOf(d.a.values, n, "trace A"),
                           b = ValuesOf(d.b.values, n, "trace B");
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t x = std::bit_cast<uint32_t>(a[i]), y = std::bit_cast<uint32_t>(b[i]);
    if (x == y) continue;
    d.element_known = true, d.element = i, d.a_bits = x, d.b_bits = y;
    d.coords.assign(d.a.shape.size(), 0);
    for (int64_t k = static_cast<int64_t>(d.a.shape.size()) - 1, r = i; k >= 0; --k) {
      d.coords[k] = r % d.a.shape[k], r /= d.a.shape[k];
    }
    return;
  }
  d.note = "the captured values are equal although their hashes differ";
}

// The entry's output as this machine computes it on `kernels` (this machine's SIMD target, or
// the reference's: the specification's values).
train::TraceOp Capture(const std::string& run_dir, const std::string& data, int64_t step,
                       int64_t index, const repops::Kernels& kernels) {
  ReplayOptions o;
  o.run_dir = run_dir, o.data = data, o.steps = {step}, o.quiet = true;
  o.trace_step = step, o.capture = index, o.bisect = false, o.kernels = &kernels;
  ReplayReport r = ReplaySteps(o);
  TRAIL_CHECK(static_cast<int64_t>(r.trace.ops.size()) > index,
              "audit bisect: the replayed step has no entry ", index);
  return r.trace.ops[index];
}

}  // namespace

Divergence Bisect(const train::StepTrace& a, const train::StepTrace& b) {
  TRAIL_CHECK(a.genesis == b.genesis && a.step == b.step,
              "audit bisect: traces of different runs "
              "or steps (step ",
              a.step, " of run ", a.genesis.substr(0, 16), "…, step ", b.step, " of run ",
              b.genesis.substr(0, 16), "…)");
  Divergence d;
  const size_t n = std::min(a.ops.size(), b.ops.size());
  for (size_t i = 0; i < n; ++i) {
    TRAIL_CHECK(a.ops[i].Identity() == b.ops[i].Identity(),
                "audit bisect: the traces record "
                "different computations at entry ",
                i, ": ", a.ops[i].Identity(), " vs ", b.ops[i].Identity(),
                " (another recipe, mesh or batch)");
    if (a.ops[i].hash == b.ops[i].hash) continue;
    d.found = true, d.index = static_cast<int64_t>(i), d.a = a.ops[i], d.b = b.ops[i];
    if (!d.a.values.empty() && !d.b.values.empty()) {
      NameElement(d);
    } else {
      d.note = "the traces hold hashes only";
    }
    return d;
  }
  TRAIL_CHECK(a.ops.size() == b.ops.size(), "audit bisect: one trace has more entries (",
              a.ops.size(), " vs ", b.ops.size(), ")");
  return d;
}

Divergence BisectWithRun(const train::StepTrace& a, const train::StepTrace& b,
                         const std::string& run_dir, const std::string& data) {
  Divergence d = Bisect(a, b);
  if (!d.found || d.element_known || d.a.op == "batch" || d.a.op == "step") return d;
  const repops::Kernels& active = repops::ActiveKernels();
  const train::TraceOp here = Capture(run_dir, data, a.step, d.index, active);
  const train::TraceOp spec = Capture(run_dir, data, a.step, d.index, repops::ReferenceKernels());
  for (train::TraceOp* side : {&d.a, &d.b}) {
    if (side->values.empty() && side->hash == here.hash) side->values = here.values;
    if (side->values.empty() && side->hash == spec.hash) side->values = spec.values;
  }
  if (d.a.values.empty() || d.b.values.empty()) {
    d.note = StrCat("this machine (", active.name, ") computes ", here.hash.substr(0, 16),
                    "… and the reference kernels ", spec.hash.substr(0, 16),
                    "…: neither reproduces the other trace, so its values are unknown");
    return d;
  }
  NameElement(d);
  const bool a_spec = d.a.hash == spec.hash, b_spec = d.b.hash == spec.hash;
  d.note = a_spec == b_spec ? ""
                            : StrCat("trace ", a_spec ? "A" : "B",
                                     " holds the value the "
                                     "specification (the reference kernels) gives");
  return d;
}

void CheckStrictTraces(const std::string& a_path, const train::StepTrace& a,
                       const train::StepTrace& b, const std::string& run_dir) {
  const PublishedRun run = OpenPublishedRun(run_dir);
  TRAIL_CHECK(run.attestation.is_signed && run.attestation.problems.empty(), run_dir,
              ": the run's attestation is not signed, so a strict bisect has no trainer's key "
              "to check the trace against (drop --strict to compare unsigned traces)");
  const train::TraceSignatureCheck sig = train::CheckTraceSignature(a_path, a);
  TRAIL_CHECK(sig.present, a_path, " is unsigned (no ", a_path,
              ".sig): --strict takes only a trace the trainer signed");
  TRAIL_CHECK(sig.problem.empty(), sig.problem);
  TRAIL_CHECK(sig.signer == run.attestation.signer, a_path, " is signed by key ",
              sig.signer.substr(0, 16), ", not by the key that signed the run (",
              run.attestation.signer.substr(0, 16), ")");
  const std::string genesis = ToHex(run.info.genesis);
  TRAIL_CHECK(a.genesis == genesis && b.genesis == genesis, "the traces are not of this run ",
              "(genesis ", a.genesis.substr(0, 16), " and ", b.genesis.substr(0, 16),
              ", the run's ", genesis.substr(0, 16), ")");
  TRAIL_CHECK(a.step == b.step, "the traces are of different steps (", a.step, " and ", b.step,
              ")");
  TRAIL_CHECK(a.step >= 0 && a.step < run.steps() &&
                  a.chain == ToHex(run.records[static_cast<size_t>(a.step)].chain),
              a_path, " records a chain after step ", a.step,
              " that is not the one the run's trajectory holds");
}

std::string DivergenceText(const Divergence& d) {
  if (!d.found) return "the traces are identical: no operation diverges\n";
  const train::TraceOp& o = d.a;
  std::string out = StrCat(
      "first diverging operation: entry ", d.index, ": ", o.op,
      o.layer >= 0 ? StrCat(", layer ", o.layer) : std::string(", "), o.layer >= 0 ? ", " : "",
      "tensor ", o.tensor,
      o.rank >= 0 ? StrCat(" (logical rank ", o.rank, ", micro-batch ", o.micro, ")")
                  : std::string(),
      ", shape ", nlohmann::json(o.shape).dump(), "\n  A ", d.a.hash, "\n  B ", d.b.hash, "\n");
  if (d.element_known) {
    char buf[160];
    std::snprintf(
        buf, sizeof buf, "  first differing element %lld %s: A 0x%08x (%.9g), B 0x%08x (%.9g)\n",
        static_cast<long long>(d.element), nlohmann::json(d.coords).dump().c_str(), d.a_bits,
        double(std::bit_cast<float>(d.a_bits)), d.b_bits, double(std::bit_cast<float>(d.b_bits)));
    out += buf;
  }
  if (!d.note.empty()) out += "  " + d.note + "\n";
  return out;
}

nlohmann::json DivergenceJson(const Divergence& d) {
  if (!d.found) return {{"diverges", false}};
  char a[11], b[11];
  std::snprintf(a, sizeof a, "0x%08x", d.a_bits);
  std::snprintf(b, sizeof b, "0x%08x", d.b_bits);
  nlohmann::json j = {{"diverges", true},   {"entry", d.index},     {"op", d.a.op},
                      {"layer", d.a.layer}, {"tensor", d.a.tensor}, {"rank", d.a.rank},
                      {"micro", d.a.micro}, {"shape", d.a.shape},   {"hash_a", d.a.hash},
                      {"hash_b", d.b.hash}, {"note", d.note}};
  if (d.element_known) {
    j["element"] = {{"index", d.element}, {"coords", d.coords}, {"a", a}, {"b", b}};
  }
  return j;
}

}  // namespace trail::audit
