// The int8 GEMM on AMX tiles (x86 with AMX-INT8: Sapphire Rapids and later). Integer sums are
// exact, so this gives the same int32 outputs as every other int8 GEMM path; it is only faster
// (one TDPBSSD is 16×16×64 multiply-adds). The AVX3_DL backend uses it when AmxInt8InUse().
#pragma once

#include "repops/kernels.h"

namespace trail::repops {

// The CPU has AMX-TILE and AMX-INT8, the OS enables tile state, and the kernel granted this
// process permission to use it (arch_prctl ARCH_REQ_XCOMP_PERM; asked once, process-wide).
// False on other architectures.
bool AmxInt8Available();

// Available, and neither AllowAmx(false) nor the environment TRAIL_AMX=off turned it off.
bool AmxInt8InUse();

// Lets tests and benchmarks compare the AMX path with the VNNI path it replaces.
void AllowAmx(bool allow);

// C = A·B as GemmI8Args describes (B given as bt [N, K] or b [K, N]); multi-threaded over
// output tiles. Requires AmxInt8Available().
void GemmI8Amx(const GemmI8Args& g);

}  // namespace trail::repops
