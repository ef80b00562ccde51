// A named, contiguous, row-major tensor that owns 64-byte-aligned storage.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/error.h"

namespace trail {

class Tensor {
 public:
  Tensor() = default;
  Tensor(std::string name, DType dtype, std::vector<int64_t> shape);

  template <class T>
  static Tensor Of(std::string name, std::vector<int64_t> shape) {
    return Tensor(std::move(name), DTypeOf<T>::value, std::move(shape));
  }

  const std::string& name() const { return name_; }
  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t dim(size_t i) const { return shape_.at(i); }
  size_t rank() const { return shape_.size(); }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return static_cast<size_t>(numel_) * DTypeSize(dtype_); }

  const std::byte* bytes() const { return data_.get(); }
  std::byte* bytes() { return data_.get(); }

  template <class T>
  T* data() {
    CheckType(DTypeOf<T>::value);
    return reinterpret_cast<T*>(data_.get());
  }
  template <class T>
  const T* data() const {
    CheckType(DTypeOf<T>::value);
    return reinterpret_cast<const T*>(data_.get());
  }
  template <class T>
  std::span<T> span() {
    return {data<T>(), static_cast<size_t>(numel_)};
  }
  template <class T>
  std::span<const T> span() const {
    return {data<T>(), static_cast<size_t>(numel_)};
  }

  void Zero();

 private:
  struct FreeDeleter {
    void operator()(std::byte* p) const;
  };
  void CheckType(DType want) const;

  std::string name_;
  DType dtype_ = DType::kF32;
  std::vector<int64_t> shape_;
  int64_t numel_ = 0;
  std::unique_ptr<std::byte[], FreeDeleter> data_;
};

}  // namespace trail
