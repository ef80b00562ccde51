// Checked numpy arguments for trail.ops: every op takes C-contiguous arrays of one dtype and
// shapes it states, and a wrong one raises TypeError (dtype, layout, read-only) or ValueError
// (shape) naming the op and the argument, before any pointer is taken.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>
#include <vector>

namespace trail::python {

namespace py = pybind11;

struct Arg {
  const char* op;
  const char* name;
};

template <class T>
const char* NumpyName();
template <>
inline const char* NumpyName<float>() {
  return "float32";
}
template <>
inline const char* NumpyName<int32_t>() {
  return "int32";
}
template <>
inline const char* NumpyName<uint8_t>() {
  return "uint8";
}

inline std::string DTypeText(const py::dtype& d) {
  return py::str(py::handle(d)).cast<std::string>();
}

inline std::string ShapeText(const py::array& a) {
  std::string s = "(";
  for (py::ssize_t i = 0; i < a.ndim(); ++i) s += (i ? ", " : "") + std::to_string(a.shape(i));
  return s + (a.ndim() == 1 ? ",)" : ")");
}

// a as a C-contiguous array of T with `rank` dimensions (-1: any); its data pointer.
template <class T>
T* Checked(const py::handle& h, Arg arg, int rank, bool writable = false) {
  const std::string where = std::string("trail.ops.") + arg.op + ": " + arg.name;
  if (!py::isinstance<py::array>(h)) throw py::type_error(where + " must be a numpy array");
  const py::array a = py::reinterpret_borrow<py::array>(h);
  if (!a.dtype().is(py::dtype::of<T>())) {
    throw py::type_error(where + " must be " + NumpyName<T>() + ", not " + DTypeText(a.dtype()) +
                         " (convert with .astype(np." + NumpyName<T>() + "))");
  }
  if (!(a.flags() & py::array::c_style)) {
    throw py::type_error(where + " must be C-contiguous (use np.ascontiguousarray)");
  }
  if (writable && !a.writeable()) throw py::type_error(where + " is read-only");
  if (rank >= 0 && a.ndim() != rank) {
    throw py::value_error(where + " must have " + std::to_string(rank) + " dimensions, not shape " +
                          ShapeText(a));
  }
  return static_cast<T*>(const_cast<void*>(a.data()));
}

inline int64_t Dim(const py::handle& h, int i) {
  return static_cast<int64_t>(py::reinterpret_borrow<py::array>(h).shape(i));
}
inline int64_t Size(const py::handle& h) {
  return static_cast<int64_t>(py::reinterpret_borrow<py::array>(h).size());
}

// Throws ValueError unless `h` has exactly `shape`.
inline void ExpectShape(const py::handle& h, Arg arg, const std::vector<int64_t>& shape) {
  const py::array a = py::reinterpret_borrow<py::array>(h);
  bool same = a.ndim() == static_cast<py::ssize_t>(shape.size());
  for (size_t i = 0; same && i < shape.size(); ++i) same = a.shape(i) == shape[i];
  if (same) return;
  std::string want = "(";
  for (size_t i = 0; i < shape.size(); ++i) want += (i ? ", " : "") + std::to_string(shape[i]);
  want += shape.size() == 1 ? ",)" : ")";
  throw py::value_error(std::string("trail.ops.") + arg.op + ": " + arg.name + " has shape " +
                        ShapeText(a) + ", expected " + want);
}

template <class T>
py::array_t<T> NewArray(const std::vector<int64_t>& shape) {
  return py::array_t<T>(std::vector<py::ssize_t>(shape.begin(), shape.end()));
}

}  // namespace trail::python
