# Finds Debian's Python 3 and pybind11 when TRAIL_PYTHON asks for them and adds python/ (the
# `trail` package); sets TRAIL_HAVE_PYTHON. The module is built for /usr/bin/python3, the
# interpreter whose numpy and torch the package's tests use, not whichever python3 is first on
# PATH.
set(TRAIL_HAVE_PYTHON OFF)
if(NOT TRAIL_PYTHON STREQUAL "OFF" AND NOT CMAKE_CROSSCOMPILING)
  if(NOT DEFINED Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
    set(Python3_EXECUTABLE /usr/bin/python3)
  endif()
  find_package(Python3 COMPONENTS Interpreter Development.Module QUIET)
  if(Python3_FOUND)
    find_package(pybind11 CONFIG QUIET)
  endif()
  if(Python3_FOUND AND pybind11_FOUND)
    set(TRAIL_HAVE_PYTHON ON)
    message(STATUS "trail: Python package enabled (${Python3_EXECUTABLE}, pybind11 ${pybind11_VERSION})")
    add_subdirectory(python)
  elseif(TRAIL_PYTHON STREQUAL "ON")
    message(FATAL_ERROR "TRAIL_PYTHON=ON needs python3-dev and pybind11-dev (scripts/install-deps.sh)")
  else()
    message(STATUS "trail: no pybind11 or Python headers; building without the Python package")
  endif()
endif()
