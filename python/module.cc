// trail._trail: the C++ core of the `trail` Python package (python/trail/ wraps it).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "core/version.h"
#include "repops/cpu_backend.h"
#include "repops/kernels.h"

namespace py = pybind11;

std::shared_mutex& trail::python::KernelStateMutex() {
  static std::shared_mutex mu;
  return mu;
}

PYBIND11_MODULE(_trail, m) {
  m.doc() = "The C++ core of the trail package; use the `trail` package's modules instead.";
  // trail::Error carries a message for the user (what is wrong, what to do); Python sees it as
  // trail.TrailError, a RuntimeError.
  static py::exception<trail::Error> error(m, "TrailError", PyExc_RuntimeError);
  py::setattr(error, "__doc__",
              py::str("An error trail reports: its message says what is wrong and what to do."));
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const trail::Error& e) {
      error(e.what());
    }
  });
  // The SIMD target the CLI would use (TRAIL_SIMD_TARGET selects another, as for the CLI).
  trail::repops::UseDefaultSimdTarget();
  m.def(
      "set_threads",
      [](int n) {
        if (n < 1) throw py::value_error("threads must be at least 1");
        py::gil_scoped_release nogil;
        const std::unique_lock lock(trail::python::KernelStateMutex());
        trail::SetKernelThreads(static_cast<size_t>(n));
      },
      py::arg("threads"), "Kernel threads for every later call (the CLI's --threads).");
  m.def(
      "simd_targets",
      [] {
        std::vector<std::string> names;
        for (const auto& t : trail::repops::AvailableSimdTargets()) names.push_back(t.name);
        return names;
      },
      "The SIMD targets this CPU runs: 'reference' (the scalar specification) first.");
  m.def(
      "use_simd_target",
      [](const std::string& name) {
        for (const auto& t : trail::repops::AvailableSimdTargets()) {
          if (t.name != name) continue;
          py::gil_scoped_release nogil;
          const std::unique_lock lock(trail::python::KernelStateMutex());
          trail::repops::UseSimdTarget(t);
          return;
        }
        throw py::value_error("no SIMD target '" + name + "' here; see simd_targets()");
      },
      py::arg("name"), "Run every later op on this SIMD target (the CLI's TRAIL_SIMD_TARGET).");
  m.def(
      "backend", [] { return trail::repops::CpuBackend().description(); },
      "What runs the ops, e.g. 'cpu (AVX3_DL)'.");
  m.attr("__version__") = trail::kTrailVersion;
  trail::python::BindRuns(m);
  trail::python::BindData(m);
  trail::python::BindOps(m);
}
