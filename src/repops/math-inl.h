// trail's binary32 elementary functions, written once over an arithmetic policy `O` (ScalarOps
// for the reference path, HwyOps<D> for each SIMD target) so that every path performs exactly the
// same sequence of correctly rounded operations. docs/repops.md gives each algorithm in prose;
// math_test.cc measures the maximum error in ULP against a float64 reference.
//
// Per-target include (Highway's pattern): no include guard of the usual kind.
#if defined(TRAIL_REPOPS_MATH_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TRAIL_REPOPS_MATH_INL_H_
#undef TRAIL_REPOPS_MATH_INL_H_
#else
#define TRAIL_REPOPS_MATH_INL_H_
#endif

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace trail::repops::HWY_NAMESPACE {

#define TRAIL_MATH_FN HWY_INLINE
#include "repops/math_body.inc"
#undef TRAIL_MATH_FN

}  // namespace trail::repops::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // TRAIL_REPOPS_MATH_INL_H_
