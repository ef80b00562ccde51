#include "core/device.h"

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>

namespace trail {
namespace {

class CpuAllocator final : public Allocator {
 public:
  Device device() const override { return {}; }
  bool is_host_memory() const override { return true; }
  void* Allocate(size_t bytes) override {
    // Buffers of 2 MiB or more (weights, activations) on 2 MiB boundaries, marked for huge
    // pages: a step streams them, and 4 KiB pages cost a TLB miss every 4 KiB.
    constexpr size_t kHuge = size_t{2} << 20;
    const bool huge = bytes >= kHuge;
    const size_t align = huge ? kHuge : 64;
    const size_t rounded = bytes == 0 ? 64 : (bytes + align - 1) / align * align;
    void* p = std::aligned_alloc(align, rounded);
    TRAIL_CHECK(p != nullptr, "out of memory allocating ", bytes, " bytes on the cpu");
    if (huge) ::madvise(p, rounded, MADV_HUGEPAGE);  // a hint: without THP it changes nothing
    std::memset(p, 0, rounded);
    return p;
  }
  void Free(void* p, size_t) override { std::free(p); }
};

}  // namespace

std::string Device::ToString() const {
  const std::string name(kind.name);
  return !kind.numbered || index == kLocalGpu ? name : name + ":" + std::to_string(index);
}

Allocator& HostAllocator() {
  static CpuAllocator cpu;
  return cpu;
}

TensorView TensorView::Contiguous(void* data, DType dtype, Device device,
                                  std::initializer_list<int64_t> shape) {
  TRAIL_CHECK(shape.size() <= kMaxViewRank, "a view has at most ", kMaxViewRank,
              " dimensions, got ", shape.size());
  TensorView v{data, dtype, device, static_cast<int>(shape.size())};
  int64_t stride = 1;
  for (int k = v.rank - 1; k >= 0; --k) {
    v.shape[k] = shape.begin()[k];
    v.strides[k] = stride;
    stride *= v.shape[k];
  }
  return v;
}

int64_t TensorView::numel() const {
  int64_t n = 1;
  for (int k = 0; k < rank; ++k) n *= shape[k];
  return n;
}

bool TensorView::contiguous() const {
  int64_t stride = 1;
  for (int k = rank - 1; k >= 0; --k) {
    if (shape[k] != 1 && strides[k] != stride) return false;
    stride *= shape[k];
  }
  return true;
}

Buffer::Buffer(Allocator& allocator, DType dtype, int64_t numel)
    : allocator_(&allocator), dtype_(dtype), numel_(numel) {
  TRAIL_CHECK(numel >= 0, "a buffer of ", numel, " elements");
  data_ = allocator.Allocate(nbytes());
}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    Release();
    allocator_ = other.allocator_, data_ = other.data_;
    dtype_ = other.dtype_, numel_ = other.numel_;
    other.allocator_ = nullptr, other.data_ = nullptr, other.numel_ = 0;
  }
  return *this;
}

void Buffer::Release() {
  if (allocator_ != nullptr && data_ != nullptr) allocator_->Free(data_, nbytes());
  allocator_ = nullptr, data_ = nullptr, numel_ = 0;
}

Device Buffer::device() const { return allocator_ ? allocator_->device() : Device{}; }

TensorView Buffer::view() const { return view({numel_}); }

TensorView Buffer::view(std::initializer_list<int64_t> shape) const {
  TensorView v = TensorView::Contiguous(data_, dtype_, device(), shape);
  TRAIL_CHECK(v.numel() <= numel_, "a view of ", v.numel(), " elements of a buffer of ", numel_);
  return v;
}

namespace {
int64_t ElementsOf(const std::string& name, const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    TRAIL_CHECK(d >= 0, "tensor '", name, "': negative dimension ", d);
    n *= d;
  }
  return n;
}
}  // namespace

DeviceTensor::DeviceTensor(std::string name, DType dtype, std::vector<int64_t> shape,
                           Allocator& allocator)
    : name_(std::move(name)),
      shape_(std::move(shape)),
      dtype_(dtype),
      numel_(ElementsOf(name_, shape_)),
      allocator_(&allocator),
      buffer_(allocator, dtype, numel_),
      data_(buffer_.view().data) {}

DeviceTensor::DeviceTensor(std::string name, DType dtype, std::vector<int64_t> shape,
                           Allocator& allocator, Unbound)
    : name_(std::move(name)),
      shape_(std::move(shape)),
      dtype_(dtype),
      numel_(ElementsOf(name_, shape_)),
      allocator_(&allocator) {}

TensorView DeviceTensor::view() const {
  return TensorView::Contiguous(data_, dtype_, device(), {numel_});
}

void DeviceTensor::Bind(void* data) {
  buffer_ = Buffer();
  data_ = data;
}

}  // namespace trail
