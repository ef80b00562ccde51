// Kept alone in this file: the expression below must be compiled exactly as the project's
// kernels are. With -ffp-contract=off it is a rounded multiply then a rounded add.
#include "core/fp_env.h"

namespace trail {
float ProjectMulAddProbe(float a, float b, float c) { return a * b + c; }
}  // namespace trail
