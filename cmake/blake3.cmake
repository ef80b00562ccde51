# BLAKE3, the official C implementation as Debian ships it inside the blake3 crate's sources
# (package librust-blake3-dev: /usr/share/cargo/registry/blake3-<version>/c). Built here as a
# static library with its run-time dispatch: AVX-512, AVX2, SSE4.1, SSE2 on x86-64, NEON on
# aarch64, the portable code elsewhere. Every implementation computes the same digest.
file(GLOB TRAIL_BLAKE3_DIRS /usr/share/cargo/registry/blake3-*/c)
if(NOT TRAIL_BLAKE3_DIRS)
  message(FATAL_ERROR "BLAKE3 sources not found: install librust-blake3-dev "
                      "(scripts/install-deps.sh)")
endif()
list(SORT TRAIL_BLAKE3_DIRS COMPARE NATURAL)
list(GET TRAIL_BLAKE3_DIRS -1 TRAIL_BLAKE3_DIR)
message(STATUS "BLAKE3 from ${TRAIL_BLAKE3_DIR}")

set(b3 ${TRAIL_BLAKE3_DIR})
add_library(trail_blake3 STATIC ${b3}/blake3.c ${b3}/blake3_dispatch.c ${b3}/blake3_portable.c)
target_include_directories(trail_blake3 SYSTEM PUBLIC ${b3})
target_compile_options(trail_blake3 PRIVATE -w)
set_target_properties(trail_blake3 PROPERTIES POSITION_INDEPENDENT_CODE ON)
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  target_sources(trail_blake3 PRIVATE ${b3}/blake3_sse2.c ${b3}/blake3_sse41.c ${b3}/blake3_avx2.c
                                      ${b3}/blake3_avx512.c)
  set_source_files_properties(${b3}/blake3_sse2.c PROPERTIES COMPILE_OPTIONS "-msse2")
  set_source_files_properties(${b3}/blake3_sse41.c PROPERTIES COMPILE_OPTIONS "-msse4.1")
  set_source_files_properties(${b3}/blake3_avx2.c PROPERTIES COMPILE_OPTIONS "-mavx2")
  set_source_files_properties(${b3}/blake3_avx512.c PROPERTIES
                              COMPILE_OPTIONS "-mavx512f;-mavx512vl")
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "aarch64|arm64")
  target_sources(trail_blake3 PRIVATE ${b3}/blake3_neon.c)
  target_compile_definitions(trail_blake3 PRIVATE BLAKE3_USE_NEON=1)
endif()
