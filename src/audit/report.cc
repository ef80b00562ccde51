// The replay report as JSON (format "trail.audit.replay.v1") and as text (audit/replay.h).
#include <cstdio>

#include "audit/replay.h"
#include "core/error.h"
#include "train/step_report.h"

namespace trail::audit {

namespace {

// What the binding of a publication's signer means, for the report's text.
std::string BindingText(const PublicationOrigin& p) {
  if (p.binding == "trainer") return "the run's trainer, which signed run/attestation.json";
  if (p.binding == "trusted") {
    return StrCat("not the run's trainer (key ", p.trainer.substr(0, 16),
                  "...); accepted by --trust-publisher");
  }
  return "the run's attestation is unsigned or absent: no trainer key to compare with";
}

}  // namespace

nlohmann::json PublicationJson(const PublicationOrigin& p) {
  if (p.root.empty()) return nullptr;
  return {{"location", p.location},
          {"root", p.root},
          {"signer", p.signer},
          {"trainer", p.trainer.empty() ? nlohmann::json() : nlohmann::json(p.trainer)},
          {"binding", p.binding}};
}

nlohmann::json ReportJson(const ReplayReport& r) {
  nlohmann::json steps = nlohmann::json::array(), findings = nlohmann::json::array();
  for (const StepVerdict& v : r.steps) {
    steps.push_back({{"step", v.step},
                     {"verdict", VerdictName(v.verdict)},
                     {"requested", v.requested},
                     {"detail", v.detail},
                     {"chain", v.chain},
                     {"seconds", v.seconds}});
  }
  for (const Finding& f : r.findings) {
    findings.push_back(
        {{"step", f.step >= 0 ? nlohmann::json(f.step) : nlohmann::json()}, {"what", f.what}});
  }
  return {{"format", "trail.audit.replay.v1"},
          {"run", r.run_dir},
          {"genesis", r.genesis},
          {"final_chain", r.final_chain},
          {"recorded_steps", r.recorded_steps},
          {"verdict", r.ok() ? "match" : "fail"},
          {"first_failure",
           r.first_failure() >= 0 ? nlohmann::json(r.first_failure()) : nlohmann::json()},
          {"steps", steps},
          {"findings", findings},
          {"run_attestation",
           {{"present", r.attestation.present},
            {"signed", r.attestation.is_signed},
            {"signer", r.attestation.signer}}},
          {"machine", {{"backend", r.backend}, {"threads", r.threads}, {"processes", r.processes}}},
          {"load_seconds", r.load_seconds},
          {"starting_points", r.starting_points},
          {"publication", PublicationJson(r.publication)}};
}

std::string ReportText(const ReplayReport& r) {
  std::string out;
  int64_t requested = 0, matched = 0, replayed = 0;
  double step_seconds = 0;
  int64_t run_begin = -1, run_end = -1;  // a run of consecutive requested matches, printed as one
  auto flush = [&] {
    if (run_begin < 0) return;
    out += run_begin == run_end ? StrCat("step ", run_begin, ": match\n")
                                : StrCat("steps ", run_begin, "..", run_end, ": match\n");
    run_begin = -1;
  };
  for (const StepVerdict& v : r.steps) {
    if (!v.chain.empty()) ++replayed, step_seconds += v.seconds;
    if (!v.requested && v.verdict == Verdict::kMatch) continue;
    requested += v.requested;
    if (v.requested && v.verdict == Verdict::kMatch) {
      ++matched;
      if (run_begin >= 0 && v.step == run_end + 1) {
        run_end = v.step;
      } else {
        flush();
        run_begin = run_end = v.step;
      }
      continue;
    }
    flush();
    out += StrCat("step ", v.step, ": ", VerdictName(v.verdict),
                  v.requested ? "" : " (replayed on the way)",
                  v.detail.empty() ? "" : " — " + v.detail, "\n");
  }
  flush();
  for (const Finding& f : r.findings) {
    out += f.step >= 0 ? StrCat("finding at step ", f.step, ": ", f.what, "\n")
                       : StrCat("finding: ", f.what, "\n");
  }
  if (r.attestation.present && r.attestation.problems.empty()) {
    out += r.attestation.is_signed
               ? StrCat("run attestation: signed by key ", r.attestation.signer.substr(0, 16), "\n")
               : std::string("run attestation: unsigned\n");
  }
  if (!r.publication.root.empty()) {
    out += StrCat("publication: ", r.publication.location, " (root ",
                  r.publication.root.substr(0, 16), "...) signed by key ",
                  r.publication.signer.substr(0, 16), "...: ", BindingText(r.publication), "\n");
  }
  std::string starts;
  for (int64_t s : r.starting_points) starts += StrCat(starts.empty() ? "" : ", ", s);
  out += StrCat(matched, " of ", requested, " requested steps bit-identical (", replayed,
                " replayed, ", train::FormatNumber("%.3f", replayed ? step_seconds / replayed : 0),
                " s/step; starting points at steps ", starts.empty() ? "none" : starts,
                " loaded in ", train::FormatNumber("%.2f", r.load_seconds), " s) on ", r.backend,
                ", ", r.threads, " thread(s), ", r.processes, " process(es)\n");
  out += r.ok() ? "verdict: MATCH\n"
                : StrCat("verdict: FAIL (first failure at step ", r.first_failure(), ")\n");
  return out;
}

}  // namespace trail::audit
