// Where training state lives: devices, their allocators, buffers and views.
//
// A Device names a place memory lives and ops run ("cpu", "guarded", "cuda:N"). Every
// device has an Allocator; a Buffer owns one allocation of a typed, shaped array on it, and a
// TensorView describes (without owning) an array on some device: pointer, dtype, shape,
// strides, device. A pointer on a device other than the host's may not be dereferenced by host
// code: only the device's backend (repops/backend.h) reads and writes it, and moves bytes to
// and from the host by explicit copies. The host `Tensor` (core/tensor.h) stays the type of
// files (safetensors, checkpoints).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/dtype.h"
#include "core/error.h"

namespace trail {

// A kind of device: how its devices are spelled, and whether they are numbered ("cuda:N").
// Each backend defines its kind beside its code and registers it (repops/devices.h, the
// registry that parses device names); core defines the two kinds whose memory it provides.
// Kinds compare by name.
struct DeviceKind {
  std::string_view name;
  bool numbered = false;
  bool operator==(const DeviceKind& o) const { return name == o.name; }
};
// The host's memory.
inline constexpr DeviceKind kCpuDevice{"cpu", false};
// The host's memory kept unreadable except while one of its backend's ops runs
// (core/guarded_memory.h): a test device that proves code reaches state only through the
// backend.
inline constexpr DeviceKind kGuardedDevice{"guarded", false};

struct Device {
  DeviceKind kind = kCpuDevice;
  // The ordinal among devices of a numbered kind (cuda:N); 0 for the others. kLocalGpu
  // ("cuda"): the device of this process's local rank among the processes of its job on this
  // machine, modulo the devices there (one a process); 0 outside a job.
  int index = 0;
  static constexpr int kLocalGpu = -1;
  bool operator==(const Device&) const = default;
  std::string ToString() const;  // "cpu", "guarded", "cuda:0", "cuda" (kLocalGpu)
};

// Hands out memory on one device. Allocations are zero-filled and 64-byte aligned; a request
// of 0 bytes still returns a unique non-null pointer.
class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual Device device() const = 0;
  virtual void* Allocate(size_t bytes) = 0;
  virtual void Free(void* p, size_t bytes) = 0;  // bytes: as passed to Allocate
  // Whether host code may read and write this memory (inside a backend's ops, for the guarded
  // device); false for a GPU's.
  virtual bool host_addressable() const { return true; }
  // Whether this is the host's own memory: code outside any backend op may read and write it at
  // any time, from any thread, and hand it to a communicator (the cpu device's). False for a
  // device's memory and for the guarded test device's, which host code reaches only inside its
  // backend's ops: code above the backend asks this, never which device it is.
  virtual bool is_host_memory() const { return false; }
};

Allocator& HostAllocator();  // the process's cpu allocator

// A view's dimensions: at most kMaxViewRank, with element strides.
inline constexpr int kMaxViewRank = 4;

// An array on a device, not owned: element (i0, i1, ...) is at data + Σ i_k·strides[k] elements.
struct TensorView {
  void* data = nullptr;
  DType dtype = DType::kF32;
  Device device;
  int rank = 0;
  std::array<int64_t, kMaxViewRank> shape{}, strides{};

  // A contiguous row-major view of `shape`.
  static TensorView Contiguous(void* data, DType dtype, Device device,
                               std::initializer_list<int64_t> shape);
  int64_t numel() const;
  bool contiguous() const;
  size_t nbytes() const { return static_cast<size_t>(numel()) * DTypeSize(dtype); }
  template <class T>
  T* as() const {
    TRAIL_CHECK(dtype == DTypeOf<T>::value, "a ", DTypeName(dtype), " view read as ",
                DTypeName(DTypeOf<T>::value));
    return static_cast<T*>(data);
  }
};

// One allocation of a contiguous, row-major array on a device; move-only, freed with its
// allocator (which must outlive it).
class Buffer {
 public:
  Buffer() = default;
  Buffer(Allocator& allocator, DType dtype, int64_t numel);
  template <class T>
  static Buffer Of(Allocator& allocator, int64_t numel) {
    return Buffer(allocator, DTypeOf<T>::value, numel);
  }
  Buffer(Buffer&& other) noexcept { *this = std::move(other); }
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { Release(); }

  Device device() const;
  DType dtype() const { return dtype_; }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return static_cast<size_t>(numel_) * DTypeSize(dtype_); }
  bool empty() const { return numel_ == 0; }
  // The device pointer (host code may dereference it only on the cpu device).
  template <class T>
  T* data() const {
    TRAIL_CHECK(numel_ == 0 || dtype_ == DTypeOf<T>::value, "a ", DTypeName(dtype_),
                " buffer used as ", DTypeName(DTypeOf<T>::value));
    return static_cast<T*>(data_);
  }
  // The whole buffer as [numel], or with `shape` (whose product must be at most numel).
  TensorView view() const;
  TensorView view(std::initializer_list<int64_t> shape) const;

 private:
  void Release();
  Allocator* allocator_ = nullptr;
  void* data_ = nullptr;
  DType dtype_ = DType::kF32;
  int64_t numel_ = 0;
};

// A standard-library allocator over a device's Allocator, so a backend can keep growable
// arrays (its own scratch and operand structures) in its device's memory: DeviceVector<T>.
// Value-initializing or reading elements is host code, so a backend does it only inside its
// ops; reserve() allocates without touching them. Default: the host's allocator.
// On memory the host cannot address (a GPU's), the vector's own element construction does
// nothing: resize() only allocates (zero-filled, by the Allocator's contract), and a vector
// that grows does not carry its old elements over. Such a vector is an array whose size the
// host tracks and whose elements only the device's kernels write (T trivially copyable).
template <class T>
struct DeviceStdAllocator {
  using value_type = T;
  using propagate_on_container_move_assignment = std::true_type;
  using propagate_on_container_copy_assignment = std::true_type;
  using propagate_on_container_swap = std::true_type;
  Allocator* memory;
  DeviceStdAllocator() : memory(&HostAllocator()) {}
  explicit DeviceStdAllocator(Allocator& a) : memory(&a) {}
  template <class U>
  DeviceStdAllocator(const DeviceStdAllocator<U>& o) : memory(o.memory) {}
  T* allocate(size_t n) { return static_cast<T*>(memory->Allocate(n * sizeof(T))); }
  void deallocate(T* p, size_t n) { memory->Free(p, n * sizeof(T)); }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    static_assert(std::is_trivially_copyable_v<U>, "device vectors hold plain values");
    if (memory->host_addressable()) ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  template <class U>
  bool operator==(const DeviceStdAllocator<U>& o) const {
    return memory == o.memory;
  }
};
template <class T>
using DeviceVector = std::vector<T, DeviceStdAllocator<T>>;

// A named, shaped, contiguous row-major array on a device: a parameter, gradient or moment
// tensor of training state. The device counterpart of the host Tensor, without any host access:
// its values are read and written by the device's backend, or copied explicitly.
//
// A tensor either owns its allocation or is unbound: it has its name, dtype and shape but no
// memory (data() is nullptr) until Bind points it at memory someone else owns on its device. A
// process that holds only a range of the parameters (train/sharded_params.h) binds a unit's
// tensors to a gathered copy while the model uses them.
class DeviceTensor {
 public:
  DeviceTensor(std::string name, DType dtype, std::vector<int64_t> shape, Allocator& allocator);
  // Unbound, on the device of `allocator` (which allocates nothing for it).
  struct Unbound {};
  DeviceTensor(std::string name, DType dtype, std::vector<int64_t> shape, Allocator& allocator,
               Unbound);

  const std::string& name() const { return name_; }
  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t dim(size_t i) const { return shape_.at(i); }
  size_t rank() const { return shape_.size(); }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return static_cast<size_t>(numel_) * DTypeSize(dtype_); }
  Device device() const { return allocator_->device(); }
  Allocator& allocator() const { return *allocator_; }
  // The device pointer (host code may dereference it only on the cpu device); nullptr while
  // unbound.
  template <class T>
  T* data() {
    CheckType(DTypeOf<T>::value);
    return static_cast<T*>(data_);
  }
  template <class T>
  const T* data() const {
    CheckType(DTypeOf<T>::value);
    return static_cast<const T*>(data_);
  }
  TensorView view() const;

  // Frees the tensor's own allocation (if any) and points it at `data`: nbytes() of its device's
  // memory that must stay valid while bound (nullptr: unbound).
  void Bind(void* data);

 private:
  void CheckType(DType want) const {
    TRAIL_CHECK(dtype_ == want, "a ", DTypeName(dtype_), " tensor used as ", DTypeName(want));
  }
  std::string name_;
  std::vector<int64_t> shape_;
  DType dtype_;
  int64_t numel_;
  Allocator* allocator_;
  Buffer buffer_;
  void* data_ = nullptr;  // buffer_'s memory, or bound memory
};

}  // namespace trail
