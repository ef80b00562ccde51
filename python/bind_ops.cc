// trail.ops: RepOps on numpy float32 arrays, the bits of the C++ CPU backend (the active SIMD
// target's kernels; every target gives the same bits). For an auditor who checks one operation
// of a trace in a notebook. Shapes as in docs/repops.md; outputs are new arrays unless an op
// says it updates an argument in place.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <mutex>

#include "bindings.h"
#include "ops_args.h"
#include "repops/activation.h"
#include "repops/gemm.h"
#include "repops/kernels.h"
#include "repops/norm.h"
#include "repops/random.h"
#include "repops/softmax.h"

namespace trail::python {
namespace {

using repops::ActiveKernels;

// Runs kernels without the GIL (the arrays stay referenced by the caller's frame). `fn` must
// not touch a Python object: sizes and pointers are taken before (a new reference made without
// the GIL races with other threads' reference counts; pybind11's checks abort on it).
template <class Fn>
void Run(Fn&& fn) {
  py::gil_scoped_release nogil;
  const std::shared_lock lock(KernelStateMutex());
  fn();
}

enum class Layout { kNN, kBT, kAT };

// c [M,N] (+)= a·b in one of the three stored layouts (docs/repops.md §3).
py::array Gemm(Layout layout, const py::array& a, const py::array& b, py::object out,
               bool accumulate, const char* op) {
  const float* pa = Checked<float>(a, {op, "a"}, 2);
  const float* pb = Checked<float>(b, {op, "b"}, 2);
  const int64_t M = layout == Layout::kAT ? Dim(a, 1) : Dim(a, 0);
  const int64_t K = layout == Layout::kAT ? Dim(a, 0) : Dim(a, 1);
  const int64_t N = layout == Layout::kBT ? Dim(b, 0) : Dim(b, 1);
  ExpectShape(b, {op, "b"},
              layout == Layout::kBT ? std::vector<int64_t>{N, K} : std::vector<int64_t>{K, N});
  if (accumulate && out.is_none()) throw py::value_error("accumulate=True needs out=");
  py::array c = out.is_none() ? py::array(NewArray<float>({M, N})) : py::array(out);
  float* pc = Checked<float>(c, {op, "out"}, 2, true);
  ExpectShape(c, {op, "out"}, {M, N});
  Run([&] {
    switch (layout) {
      case Layout::kNN:
        return repops::MatMul(pa, pb, pc, M, K, N, accumulate);
      case Layout::kBT:
        return repops::MatMulBT(pa, pb, pc, M, K, N, accumulate);
      case Layout::kAT:
        return repops::MatMulAT(pa, pb, pc, M, K, N, accumulate);
    }
  });
  return c;
}

void BindGemm(py::module_& m) {
  const char* doc =
      " Every output element is one FMA chain over k = 0..K-1, from out when "
      "accumulating, else from +0. Returns out (a new array when not given).";
  m.def(
      "matmul",
      [](const py::array& a, const py::array& b, py::object out, bool acc) {
        return Gemm(Layout::kNN, a, b, std::move(out), acc, "matmul");
      },
      py::arg("a"), py::arg("b"), py::arg("out") = py::none(), py::arg("accumulate") = false,
      (std::string("out [M,N] (+)= a [M,K] @ b [K,N].") + doc).c_str());
  m.def(
      "matmul_bt",
      [](const py::array& a, const py::array& bt, py::object out, bool acc) {
        return Gemm(Layout::kBT, a, bt, std::move(out), acc, "matmul_bt");
      },
      py::arg("a"), py::arg("bt"), py::arg("out") = py::none(), py::arg("accumulate") = false,
      (std::string("out [M,N] (+)= a [M,K] @ bt [N,K].T.") + doc).c_str());
  m.def(
      "matmul_at",
      [](const py::array& at, const py::array& b, py::object out, bool acc) {
        return Gemm(Layout::kAT, at, b, std::move(out), acc, "matmul_at");
      },
      py::arg("at"), py::arg("b"), py::arg("out") = py::none(), py::arg("accumulate") = false,
      (std::string("out [M,N] (+)= at [K,M].T @ b [K,N].") + doc).c_str());
}

void BindReductions(py::module_& m) {
  m.def(
      "sum",
      [](const py::array& x) {
        return ActiveKernels().sum(Checked<float>(x, {"sum", "x"}, -1), Size(x));
      },
      py::arg("x"), "Σ x in the canonical reduction order (16 partial sums, a fixed tree).");
  m.def(
      "sum_sq",
      [](const py::array& x) {
        return ActiveKernels().sum_sq(Checked<float>(x, {"sum_sq", "x"}, -1), Size(x));
      },
      py::arg("x"), "Σ x² in the canonical order (partials by FMA).");
  m.def(
      "dot",
      [](const py::array& x, const py::array& y) {
        const float* px = Checked<float>(x, {"dot", "x"}, -1);
        const float* py_ = Checked<float>(y, {"dot", "y"}, -1);
        if (Size(x) != Size(y)) throw py::value_error("trail.ops.dot: x and y differ in size");
        return ActiveKernels().dot(px, py_, Size(x));
      },
      py::arg("x"), py::arg("y"), "Σ x·y in the canonical order (partials by FMA).");
  m.def(
      "max",
      [](const py::array& x) {
        return ActiveKernels().max(Checked<float>(x, {"max", "x"}, -1), Size(x));
      },
      py::arg("x"), "The maximum (NaN propagates; -inf for an empty array).");
  m.def(
      "axpy",
      [](float a, const py::array& x, const py::array& y) {
        const float* px = Checked<float>(x, {"axpy", "x"}, -1);
        const float* py_ = Checked<float>(y, {"axpy", "y"}, -1);
        if (Size(x) != Size(y)) throw py::value_error("trail.ops.axpy: x and y differ in size");
        py::array_t<float> z(py::reinterpret_borrow<py::array>(y).request().shape);
        std::memcpy(z.mutable_data(), py_, sizeof(float) * Size(y));
        ActiveKernels().axpy(a, px, z.mutable_data(), Size(x));
        return z;
      },
      py::arg("a"), py::arg("x"), py::arg("y"), "A new array y + a·x, one FMA per element.");
}

std::pair<py::array, py::array> RmsNorm(const py::array& x, const py::object& gain, float eps) {
  const float* px = Checked<float>(x, {"rmsnorm", "x"}, 2);
  const int64_t rows = Dim(x, 0), d = Dim(x, 1);
  const float* pg = nullptr;
  if (!gain.is_none()) {
    pg = Checked<float>(gain, {"rmsnorm", "gain"}, 1);
    ExpectShape(gain, {"rmsnorm", "gain"}, {d});
  }
  auto y = NewArray<float>({rows, d});
  auto rstd = NewArray<float>({rows});
  Run([&] { repops::RmsNormForward(px, pg, eps, rows, d, y.mutable_data(), rstd.mutable_data()); });
  return {y, rstd};
}

std::pair<py::array, py::object> RmsNormBackward(const py::array& dy, const py::array& x,
                                                 const py::object& gain, const py::array& rstd) {
  const float* px = Checked<float>(x, {"rmsnorm_backward", "x"}, 2);
  const int64_t rows = Dim(x, 0), d = Dim(x, 1);
  const float* pdy = Checked<float>(dy, {"rmsnorm_backward", "dy"}, 2);
  ExpectShape(dy, {"rmsnorm_backward", "dy"}, {rows, d});
  const float* pr = Checked<float>(rstd, {"rmsnorm_backward", "rstd"}, 1);
  ExpectShape(rstd, {"rmsnorm_backward", "rstd"}, {rows});
  const float* pg = nullptr;
  py::object dgain = py::none();
  float* pdg = nullptr;
  if (!gain.is_none()) {
    pg = Checked<float>(gain, {"rmsnorm_backward", "gain"}, 1);
    ExpectShape(gain, {"rmsnorm_backward", "gain"}, {d});
    auto g = NewArray<float>({d});
    pdg = g.mutable_data();
    std::fill(pdg, pdg + d, 0.0f);  // accumulated from +0
    dgain = g;
  }
  auto dx = NewArray<float>({rows, d});
  Run([&] { repops::RmsNormBackward(pdy, px, pg, pr, rows, d, dx.mutable_data(), pdg); });
  return {dx, dgain};
}

void BindNormAndSoftmax(py::module_& m) {
  m.def("rmsnorm", &RmsNorm, py::arg("x"), py::arg("gain") = py::none(), py::arg("eps") = 1e-5f,
        "(y, rstd) of RMSNorm over the rows of x [rows, d]; gain [d] or None.");
  m.def("rmsnorm_backward", &RmsNormBackward, py::arg("dy"), py::arg("x"), py::arg("gain"),
        py::arg("rstd"), "(dx, dgain): dgain summed over rows from +0 (None without a gain).");
  m.def(
      "softmax",
      [](const py::array& x) {
        const float* px = Checked<float>(x, {"softmax", "x"}, 2);
        const int64_t rows = Dim(x, 0), n = Dim(x, 1);
        auto y = NewArray<float>({rows, n});
        float* py = y.mutable_data();
        Run([&] { repops::SoftmaxForward(px, rows, n, py); });
        return y;
      },
      py::arg("x"), "Softmax of each row of x [rows, n].");
  m.def(
      "softmax_backward",
      [](const py::array& y, const py::array& dy) {
        const float* py_ = Checked<float>(y, {"softmax_backward", "y"}, 2);
        const float* pdy = Checked<float>(dy, {"softmax_backward", "dy"}, 2);
        ExpectShape(dy, {"softmax_backward", "dy"}, {Dim(y, 0), Dim(y, 1)});
        const int64_t rows = Dim(y, 0), n = Dim(y, 1);
        auto dx = NewArray<float>({rows, n});
        float* pdx = dx.mutable_data();
        Run([&] { repops::SoftmaxBackward(py_, pdy, rows, n, pdx); });
        return dx;
      },
      py::arg("y"), py::arg("dy"), "dx of the softmax rows y [rows, n].");
}

// Elementwise op of two same-size arrays into a new one.
template <class Fn>
py::array Elementwise(const char* op, const py::array& a, const py::array& b, Fn fn) {
  const float* pa = Checked<float>(a, {op, "first argument"}, -1);
  const float* pb = Checked<float>(b, {op, "second argument"}, -1);
  if (Size(a) != Size(b)) throw py::value_error(std::string("trail.ops.") + op + ": sizes differ");
  py::array_t<float> out(a.request().shape);
  const int64_t n = Size(a);
  float* po = out.mutable_data();
  Run([&] { fn(pa, pb, n, po); });
  return out;
}

void BindActivations(py::module_& m) {
  m.def(
      "swiglu",
      [](const py::array& a, const py::array& b) {
        return Elementwise("swiglu", a, b, [](const float* x, const float* y, int64_t n, float* h) {
          repops::SwiGluForward(x, y, n, h);
        });
      },
      py::arg("a"), py::arg("b"), "SiLU(a)·b elementwise.");
  m.def(
      "gelu",
      [](const py::array& x) {
        return Elementwise("gelu", x, x, [](const float* p, const float*, int64_t n, float* y) {
          repops::GeluForward(p, n, y);
        });
      },
      py::arg("x"), "GELU (tanh form) elementwise.");
}

void BindRandom(py::module_& m) {
  m.def(
      "fill_uniform",
      [](int64_t n, uint64_t seed, uint64_t stream, float lo, float hi) {
        auto x = NewArray<float>({n});
        repops::FillUniform(x.mutable_data(), n, seed, stream, lo, hi);
        return x;
      },
      py::arg("n"), py::arg("seed"), py::arg("stream"), py::arg("lo") = 0.0f, py::arg("hi") = 1.0f,
      "n floats uniform in [lo, hi) from Philox counters (seed, stream, i).");
  m.def(
      "fill_normal",
      [](int64_t n, uint64_t seed, uint64_t stream, float mean, float std) {
        auto x = NewArray<float>({n});
        repops::FillNormal(x.mutable_data(), n, seed, stream, mean, std);
        return x;
      },
      py::arg("n"), py::arg("seed"), py::arg("stream"), py::arg("mean") = 0.0f,
      py::arg("std") = 1.0f, "n floats N(mean, std) by Box-Muller on Philox blocks.");
}

}  // namespace

void BindModelOps(py::module_& ops);  // bind_ops_model.cc

void BindOps(py::module_& m) {
  py::module_ ops = m.def_submodule("ops", "RepOps on numpy float32 arrays (docs/repops.md)");
  BindGemm(ops);
  BindReductions(ops);
  BindNormAndSoftmax(ops);
  BindActivations(ops);
  BindRandom(ops);
  BindModelOps(ops);
}

}  // namespace trail::python
