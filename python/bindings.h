// The parts of the `trail._trail` extension module (docs/python.md). Each Bind* adds one area's
// functions and classes; module.cc calls them and maps trail::Error to trail.TrailError.
//
// Conventions shared by every binding:
// - what the CLI prints as JSON comes back as that JSON's text (the package parses it), so a
//   Python verdict equals the CLI's by construction;
// - calls that read files or replay steps release the GIL;
// - numpy inputs are checked for dtype, layout and shape before any pointer is taken, and a
//   mismatch raises TypeError or ValueError naming the argument.
#pragma once

#include <pybind11/pybind11.h>

#include <shared_mutex>

namespace trail::python {

// Held shared by every call that runs kernels without the GIL, exclusively while the kernel
// pool or SIMD target changes (neither may change under a running kernel).
std::shared_mutex& KernelStateMutex();

void BindRuns(pybind11::module_& m);
void BindData(pybind11::module_& m);
void BindOps(pybind11::module_& m);

}  // namespace trail::python
