# Finds nvcc and enables CUDA when TRAIL_CUDA asks for it; sets TRAIL_HAVE_CUDA. nvcc is, in
# order: CMAKE_CUDA_COMPILER when given; the CUDA 13 wheels that scripts/install-deps.sh installs
# into the build folder's virtual environment (venv/lib/python3.*/site-packages/nvidia/cu13);
# /usr/local/cuda/bin/nvcc.
#
# The flags are the reproducibility contract on the GPU (docs/repops.md §1): no contraction of
# a*b+c into FMA behind our back (--fmad=false; kernels write __fmaf_rn where the spec fuses),
# subnormals kept (-ftz=false), IEEE division and square root. Never --use_fast_math.
set(TRAIL_HAVE_CUDA OFF)
if(NOT TRAIL_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER)
    file(GLOB _trail_wheel_nvcc
         ${CMAKE_BINARY_DIR}/venv/lib/python3*/site-packages/nvidia/cu13/bin/nvcc)
    if(_trail_wheel_nvcc)
      list(GET _trail_wheel_nvcc 0 _trail_wheel_nvcc)
      get_filename_component(_trail_cuda_root ${_trail_wheel_nvcc} DIRECTORY)
      get_filename_component(_trail_cuda_root ${_trail_cuda_root} DIRECTORY)
      set(CMAKE_CUDA_COMPILER ${_trail_wheel_nvcc})
      set(CUDAToolkit_ROOT ${_trail_cuda_root})
    elseif(EXISTS /usr/local/cuda/bin/nvcc)
      set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
    endif()
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # Hopper (sm_90) machine code, plus PTX the driver compiles for any later GPU.
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 90-real 90-virtual)
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(CMAKE_CUDA_STANDARD 17)  # the kernels need no more; CMake 3.25 knows no CUDA 20 for nvcc
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    set(TRAIL_HAVE_CUDA ON)
    set(TRAIL_CUDA_FLAGS --fmad=false -ftz=false -prec-div=true -prec-sqrt=true
        -Xcompiler=-ffp-contract=off -Xcompiler=-fno-fast-math)
    message(STATUS "trail: CUDA backend enabled (${CMAKE_CUDA_COMPILER_VERSION})")
  elseif(TRAIL_CUDA STREQUAL "ON")
    message(FATAL_ERROR "TRAIL_CUDA=ON but no nvcc was found (set CMAKE_CUDA_COMPILER)")
  else()
    message(STATUS "trail: no nvcc found; building without the CUDA backend")
  endif()
endif()
