// Where `trail plan fit` gets its (N, D, L) points: trained run directories, or a CSV table of
// runs done elsewhere.
#pragma once

#include <string>
#include <vector>

#include "plan/scaling_law.h"

namespace trail::plan {

struct SourcedPoint {
  std::string source;  // the run directory, or "FILE:LINE"
  LossPoint point;
};

// From a run directory: N = run.json's "parameters" (every trained parameter, the embedding
// table included — Kaplan et al. count without it, Hoffmann et al. with it, as here); D = the
// "tokens" consumed up to the last metrics.jsonl line that carries validation losses ("val"); L =
// the mean of that line's per-domain losses (nats per token). Throws trail::Error naming the file
// when the run has no evaluation yet.
SourcedPoint LossPointOfRun(const std::string& run_dir);

// From a CSV file whose header names the columns params, tokens and loss (in any order, other
// columns ignored; '#' starts a comment line).
std::vector<SourcedPoint> LossPointsFromCsv(const std::string& path);

}  // namespace trail::plan
