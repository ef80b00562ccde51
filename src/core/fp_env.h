// The floating-point environment the reproducibility contract requires, and the startup check
// that refuses to run when it does not hold. The rule (docs/repops.md, "Floating point"):
// IEEE-754 binary32, round-to-nearest-even, gradual underflow kept (no flush-to-zero, no
// denormals-are-zero) on every thread that runs a kernel, and no compiler contraction of a*b+c.
#pragma once

#include <string>

namespace trail {

// Sets round-to-nearest-even and clears flush-to-zero/denormals-are-zero on the calling thread
// (MXCSR on x86-64, FPCR on aarch64). Every thread-pool worker calls it when it starts.
void SetContractFpMode();

// A function computing a*b + c as the compiler saw fit; compiled in its own translation unit with
// the project's flags, so a build with contraction turns it into a fused multiply-add.
using MulAddProbe = float (*)(float a, float b, float c);
float ProjectMulAddProbe(float a, float b, float c);

struct FpCheck {
  bool ok = true;
  std::string problems;  // one line per violated rule, empty when ok
};

// Checks, on the calling thread: no contraction (through `probe`), subnormals produced and
// consumed (no FTZ/DAZ), round-to-nearest-even on ties and non-ties of both signs.
FpCheck CheckFpContract(MulAddProbe probe = &ProjectMulAddProbe);

// Throws trail::Error with every violated rule when CheckFpContract fails.
void RequireFpContract();

}  // namespace trail
