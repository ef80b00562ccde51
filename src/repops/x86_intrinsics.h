// <immintrin.h> for the x86 kernels, included through this header first in every file that
// uses AVX-512 intrinsics. GCC 12's avx512fintrin.h makes its "undefined" vectors by
// self-initialization (`__m512i __Y = __Y;`, GCC bug 105593, fixed in GCC 13), which
// -Wuninitialized reports wherever such an intrinsic is inlined; the warning is silenced for that
// header's text only, so the kernels' own code keeps every warning.
#pragma once

#if defined(__x86_64__) || defined(__i386__)
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#else
#include <immintrin.h>
#endif
#endif
