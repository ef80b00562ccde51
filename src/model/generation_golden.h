// Golden generations (goldens/generation.txt): small models from a fixed initialization, a
// fixed prompt prefilled in chunks, then tokens decoded one at a time and drawn by the sampler.
// Each case's digest covers every logits row a token was drawn from, the token and its
// log-probability, so the same values must come out of the decoder and sampler on every SIMD
// target, thread count, compiler, ISA and device (docs/goldens.md §5).
#pragma once

#include <string>
#include <vector>

#include "core/golden.h"
#include "repops/backend.h"

namespace trail::model {

struct GoldenGeneration {
  std::string name, digest;
};

// Every case on `backend`; the sampler on the active SIMD target's kernels.
std::vector<GoldenGeneration> RunGenerationGolden(repops::Backend& backend);

}  // namespace trail::model
