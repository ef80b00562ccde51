// trail.ops, continued: the backward of the activations, attention, cross-entropy, the
// optimizer and gradient clipping, and the tensor digest that golden cases and traces use.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <mutex>
#include <string>
#include <vector>

#include "bindings.h"
#include "core/hash.h"
#include "ops_args.h"
#include "repops/activation.h"
#include "repops/attention.h"
#include "repops/cross_entropy.h"
#include "repops/math.h"
#include "repops/optim.h"

namespace trail::python {
namespace {

template <class Fn>
void Run(Fn&& fn) {
  py::gil_scoped_release nogil;
  const std::shared_lock lock(KernelStateMutex());
  fn();
}

std::vector<int64_t> ShapeOf(const py::array& a) {
  return std::vector<int64_t>(a.shape(), a.shape() + a.ndim());
}

void BindActivationBackward(py::module_& m) {
  m.def(
      "swiglu_backward",
      [](const py::array& dh, const py::array& a, const py::array& b) {
        const float* pdh = Checked<float>(dh, {"swiglu_backward", "dh"}, -1);
        const float* pa = Checked<float>(a, {"swiglu_backward", "a"}, -1);
        const float* pb = Checked<float>(b, {"swiglu_backward", "b"}, -1);
        ExpectShape(a, {"swiglu_backward", "a"}, ShapeOf(dh));
        ExpectShape(b, {"swiglu_backward", "b"}, ShapeOf(dh));
        auto da = NewArray<float>(ShapeOf(dh)), db = NewArray<float>(ShapeOf(dh));
        const int64_t n = Size(dh);
        float *pda = da.mutable_data(), *pdb = db.mutable_data();
        Run([&] { repops::SwiGluBackward(pdh, pa, pb, n, pda, pdb); });
        return std::make_pair(da, db);
      },
      py::arg("dh"), py::arg("a"), py::arg("b"), "(da, db) of h = SiLU(a)·b.");
  m.def(
      "gelu_backward",
      [](const py::array& dy, const py::array& x) {
        const float* pdy = Checked<float>(dy, {"gelu_backward", "dy"}, -1);
        const float* px = Checked<float>(x, {"gelu_backward", "x"}, -1);
        ExpectShape(x, {"gelu_backward", "x"}, ShapeOf(dy));
        auto dx = NewArray<float>(ShapeOf(dy));
        const int64_t n = Size(dy);
        float* pdx = dx.mutable_data();
        Run([&] { repops::GeluBackward(pdy, px, n, pdx); });
        return dx;
      },
      py::arg("dy"), py::arg("x"), "dx of y = GELU(x).");
}

// The attention shape of q [B,H,T,hd] and its masks (doc_ids int32 [B,T], key_valid uint8
// [B,T], each optional), with k and v checked to match q.
repops::AttentionShape AttentionShapeOf(const char* op, const py::array& q, const py::array& k,
                                        const py::array& v, int64_t window,
                                        const py::object& doc_ids, const py::object& key_valid) {
  Checked<float>(q, {op, "q"}, 4);
  repops::AttentionShape s{Dim(q, 0), Dim(q, 1), Dim(q, 2), Dim(q, 3), window};
  Checked<float>(k, {op, "k"}, 4);
  Checked<float>(v, {op, "v"}, 4);
  ExpectShape(k, {op, "k"}, ShapeOf(q));
  ExpectShape(v, {op, "v"}, ShapeOf(q));
  if (window < 0) throw py::value_error(std::string("trail.ops.") + op + ": window must be >= 0");
  if (!doc_ids.is_none()) {
    s.doc_ids = Checked<int32_t>(doc_ids, {op, "doc_ids"}, 2);
    ExpectShape(doc_ids, {op, "doc_ids"}, {s.batch, s.seq});
  }
  if (!key_valid.is_none()) {
    s.key_valid = Checked<uint8_t>(key_valid, {op, "key_valid"}, 2);
    ExpectShape(key_valid, {op, "key_valid"}, {s.batch, s.seq});
  }
  return s;
}

void BindAttention(py::module_& m) {
  m.def(
      "attention",
      [](const py::array& q, const py::array& k, const py::array& v, int64_t window,
         const py::object& doc_ids, const py::object& key_valid) {
        const auto s = AttentionShapeOf("attention", q, k, v, window, doc_ids, key_valid);
        auto out = NewArray<float>(ShapeOf(q));
        auto probs = NewArray<float>({s.batch, s.heads, s.seq, s.seq});
        Run([&] {
          repops::AttentionForward(
              s, static_cast<const float*>(q.data()), static_cast<const float*>(k.data()),
              static_cast<const float*>(v.data()), out.mutable_data(), probs.mutable_data());
        });
        return std::make_pair(out, probs);
      },
      py::arg("q"), py::arg("k"), py::arg("v"), py::arg("window") = 0,
      py::arg("doc_ids") = py::none(), py::arg("key_valid") = py::none(),
      "(out, probs) of causal attention; q, k, v [B,H,T,hd]; window 0 = unlimited.");
  m.def(
      "attention_backward",
      [](const py::array& q, const py::array& k, const py::array& v, const py::array& probs,
         const py::array& dout, int64_t window, const py::object& doc_ids,
         const py::object& key_valid) {
        const auto s = AttentionShapeOf("attention_backward", q, k, v, window, doc_ids, key_valid);
        Checked<float>(probs, {"attention_backward", "probs"}, 4);
        ExpectShape(probs, {"attention_backward", "probs"}, {s.batch, s.heads, s.seq, s.seq});
        Checked<float>(dout, {"attention_backward", "dout"}, 4);
        ExpectShape(dout, {"attention_backward", "dout"}, ShapeOf(q));
        auto dq = NewArray<float>(ShapeOf(q)), dk = NewArray<float>(ShapeOf(q)),
             dv = NewArray<float>(ShapeOf(q));
        Run([&] {
          repops::AttentionBackward(
              s, static_cast<const float*>(q.data()), static_cast<const float*>(k.data()),
              static_cast<const float*>(v.data()), static_cast<const float*>(probs.data()),
              static_cast<const float*>(dout.data()), dq.mutable_data(), dk.mutable_data(),
              dv.mutable_data());
        });
        return py::make_tuple(dq, dk, dv);
      },
      py::arg("q"), py::arg("k"), py::arg("v"), py::arg("probs"), py::arg("dout"),
      py::arg("window") = 0, py::arg("doc_ids") = py::none(), py::arg("key_valid") = py::none(),
      "(dq, dk, dv) of attention, from the forward's probs.");
}

void BindCrossEntropy(py::module_& m) {
  m.def(
      "cross_entropy",
      [](const py::array& logits, const py::array& targets, int32_t ignore_index) {
        const float* pl = Checked<float>(logits, {"cross_entropy", "logits"}, 2);
        const int32_t* pt = Checked<int32_t>(targets, {"cross_entropy", "targets"}, 1);
        const int64_t rows = Dim(logits, 0), vocab = Dim(logits, 1);
        ExpectShape(targets, {"cross_entropy", "targets"}, {rows});
        for (int64_t r = 0; r < rows; ++r) {
          if (pt[r] != ignore_index && (pt[r] < 0 || pt[r] >= vocab)) {
            throw py::value_error("trail.ops.cross_entropy: target " + std::to_string(pt[r]) +
                                  " of row " + std::to_string(r) + " is outside the vocabulary");
          }
        }
        auto lse = NewArray<float>({rows});
        repops::CrossEntropySums sums;
        Run([&] {
          sums = repops::CrossEntropyForward(pl, pt, rows, vocab, ignore_index, lse.mutable_data());
        });
        return py::make_tuple(sums.nll_sum, sums.lse_sq_sum, sums.valid, lse);
      },
      py::arg("logits"), py::arg("targets"), py::arg("ignore_index") = -100,
      "(nll_sum, lse_sq_sum, valid_rows, lse) over logits [rows, vocab].");
  m.def(
      "cross_entropy_backward",
      [](const py::array& logits, const py::array& targets, const py::array& lse, float grad_scale,
         float z_coef, int32_t ignore_index) {
        const float* pl = Checked<float>(logits, {"cross_entropy_backward", "logits"}, 2);
        const int64_t rows = Dim(logits, 0), vocab = Dim(logits, 1);
        const int32_t* pt = Checked<int32_t>(targets, {"cross_entropy_backward", "targets"}, 1);
        ExpectShape(targets, {"cross_entropy_backward", "targets"}, {rows});
        const float* pe = Checked<float>(lse, {"cross_entropy_backward", "lse"}, 1);
        ExpectShape(lse, {"cross_entropy_backward", "lse"}, {rows});
        auto d = NewArray<float>({rows, vocab});
        Run([&] {
          repops::CrossEntropyBackward(pl, pt, pe, rows, vocab, ignore_index, grad_scale, z_coef,
                                       d.mutable_data());
        });
        return d;
      },
      py::arg("logits"), py::arg("targets"), py::arg("lse"), py::arg("grad_scale"),
      py::arg("z_coef") = 0.0f, py::arg("ignore_index") = -100, "dlogits [rows, vocab].");
}

void BindOptimizer(py::module_& m) {
  m.def(
      "adamw_step",
      [](const py::array& p, const py::array& g, const py::array& mo, const py::array& v, int64_t t,
         float lr, float beta1, float beta2, float eps, float weight_decay) {
        float* pp = Checked<float>(p, {"adamw_step", "p"}, -1, true);
        const float* pg = Checked<float>(g, {"adamw_step", "g"}, -1);
        float* pm = Checked<float>(mo, {"adamw_step", "m"}, -1, true);
        float* pv = Checked<float>(v, {"adamw_step", "v"}, -1, true);
        for (const auto* a : {&g, &mo, &v})
          ExpectShape(*a, {"adamw_step", "g, m and v"}, ShapeOf(p));
        if (t < 1) throw py::value_error("trail.ops.adamw_step: t is 1-based");
        const repops::AdamWHyper h{lr, beta1, beta2, eps, weight_decay};
        const int64_t n = Size(p);
        Run([&] { repops::AdamWStep(pp, pg, pm, pv, n, h, t); });
      },
      py::arg("p"), py::arg("g"), py::arg("m"), py::arg("v"), py::arg("t"), py::arg("lr"),
      py::arg("beta1") = 0.9f, py::arg("beta2") = 0.95f, py::arg("eps") = 1e-8f,
      py::arg("weight_decay") = 0.0f, "One AdamW update of p, m and v in place at step t.");
  m.def(
      "global_grad_norm",
      [](const std::vector<py::array>& grads) {
        std::vector<repops::GradSpan> spans;
        for (const py::array& g : grads) {
          spans.push_back({Checked<float>(g, {"global_grad_norm", "a gradient"}, -1), Size(g)});
        }
        return repops::GlobalGradNorm(spans);
      },
      py::arg("grads"), "sqrt of the per-array sums of squares added in the order given.");
  m.def(
      "clip_grad_norm",
      [](const std::vector<py::array>& grads, float norm, float max_norm) {
        std::vector<float*> ptrs;
        std::vector<int64_t> sizes;
        for (const py::array& g : grads) {
          ptrs.push_back(Checked<float>(g, {"clip_grad_norm", "a gradient"}, -1, true));
          sizes.push_back(Size(g));
        }
        return repops::ClipGradNorm(ptrs, sizes, norm, max_norm);
      },
      py::arg("grads"), py::arg("norm"), py::arg("max_norm"),
      "Scales the gradients in place when the clip coefficient is below 1; returns it.");
  m.def("pow_int", &repops::PowInt, py::arg("b"), py::arg("n"),
        "b to the integer power n by the canonical square-and-multiply.");
}

DType DTypeOfArray(const py::array& a) {
  const py::dtype d = a.dtype();
  if (d.is(py::dtype::of<float>())) return DType::kF32;
  if (d.is(py::dtype::of<double>())) return DType::kF64;
  if (d.is(py::dtype::of<int32_t>())) return DType::kI32;
  if (d.is(py::dtype::of<int8_t>())) return DType::kI8;
  if (d.is(py::dtype::of<uint16_t>())) return DType::kU16;
  if (d.is(py::dtype::of<uint32_t>())) return DType::kU32;
  throw py::type_error("trail.ops.tensor_digest: dtype " + DTypeText(d) +
                       " has no tensor digest (float32, float64, int32, int8, uint16, uint32)");
}

void BindDigest(py::module_& m) {
  m.def(
      "tensor_digest",
      [](const py::array& a, const std::string& name) {
        if (!(a.flags() & py::array::c_style)) {
          throw py::type_error("trail.ops.tensor_digest: the array must be C-contiguous");
        }
        const DType t = DTypeOfArray(a);
        const std::vector<int64_t> shape = ShapeOf(a);
        return ToHex(BufferDigest(name, t, shape, a.data()));
      },
      py::arg("a"), py::arg("name") = "",
      "SHA-256 (hex) of the tensor's canonical bytes: name, dtype, shape, elements (NaN "
      "canonical), as docs/repops.md §7 defines.");
}

}  // namespace

void BindModelOps(py::module_& ops) {
  BindActivationBackward(ops);
  BindAttention(ops);
  BindCrossEntropy(ops);
  BindOptimizer(ops);
  BindDigest(ops);
}

}  // namespace trail::python
