#include "core/tensor.h"

#include <cstdlib>
#include <cstring>

namespace trail {

void Tensor::FreeDeleter::operator()(std::byte* p) const { std::free(p); }

Tensor::Tensor(std::string name, DType dtype, std::vector<int64_t> shape)
    : name_(std::move(name)), dtype_(dtype), shape_(std::move(shape)) {
  numel_ = 1;
  for (int64_t d : shape_) {
    TRAIL_CHECK(d >= 0, "tensor '", name_, "': negative dimension ", d);
    numel_ *= d;
  }
  const size_t bytes = ((nbytes() + 63) / 64) * 64;
  data_.reset(static_cast<std::byte*>(std::aligned_alloc(64, bytes == 0 ? 64 : bytes)));
  TRAIL_CHECK(data_ != nullptr, "tensor '", name_, "': out of memory allocating ", bytes, " bytes");
  std::memset(data_.get(), 0, bytes == 0 ? 64 : bytes);
}

void Tensor::Zero() { std::memset(data_.get(), 0, nbytes()); }

void Tensor::CheckType(DType want) const {
  TRAIL_CHECK(dtype_ == want, "tensor '", name_, "' holds ", DTypeName(dtype_), ", accessed as ",
              DTypeName(want));
}

}  // namespace trail
