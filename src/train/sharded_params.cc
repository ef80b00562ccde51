#include "train/sharded_params.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"

namespace trail::train {
namespace {

constexpr int64_t kAlignFloats = 16;  // 64 bytes: the alignment every allocation has

int64_t AlignUp(int64_t n) { return (n + kAlignFloats - 1) / kAlignFloats * kAlignFloats; }

template <class T>
std::span<const std::byte> Bytes(const T* p, int64_t n) {
  return {reinterpret_cast<const std::byte*>(p), static_cast<size_t>(n) * sizeof(T)};
}
template <class T>
std::span<std::byte> MutableBytes(T* p, int64_t n) {
  return {reinterpret_cast<std::byte*>(p), static_cast<size_t>(n) * sizeof(T)};
}

}  // namespace

std::vector<ShardedParameters::Unit> ShardedParameters::UnitsOf(const model::ParameterSet& layout) {
  const std::vector<DeviceTensor>& tensors = layout.tensors();
  std::vector<Unit> units;
  int64_t flat = 0;
  for (int u = 0; u < layout.num_units(); ++u) {
    const auto [t0, t1] = layout.unit_tensors(u);
    Unit unit;
    unit.flat_begin = flat;
    for (size_t t = t0; t < t1; ++t) {
      // Packed while every tensor starts at its flat offset (the last one's padding is no data).
      if (unit.buffer_floats != flat - unit.flat_begin) unit.packed = false;
      unit.offsets.push_back(unit.buffer_floats);
      unit.buffer_floats = AlignUp(unit.buffer_floats + tensors[t].numel());
      flat += tensors[t].numel();
    }
    unit.flat_end = flat;
    units.push_back(std::move(unit));
  }
  return units;
}

int64_t ShardedParameters::PlannedGatheredBytes(const model::ParameterSet& layout) {
  std::set<int64_t> sizes;
  for (const Unit& u : UnitsOf(layout)) sizes.insert(u.buffer_floats);
  int64_t floats = 0;
  for (int64_t n : sizes) floats += n;
  return 4 * floats;
}

ShardedParameters::ShardedParameters(collectives::Communicator& comm, repops::Backend& be,
                                     const model::ParameterSet& layout,
                                     std::span<const int64_t> bounds)
    : comm_(comm), be_(be), bounds_(bounds.begin(), bounds.end()), units_(UnitsOf(layout)) {
  TRAIL_CHECK(bounds_.size() == static_cast<size_t>(comm.size()) + 1,
              "sharded parameters: ranges for ", bounds_.size() - 1, " processes in a job of ",
              comm.size());
  for (int u = 0; u < layout.num_units(); ++u)
    first_tensor_.push_back(layout.unit_tensors(u).first);
  first_tensor_.push_back(layout.tensors().size());
  TRAIL_CHECK(units_.back().flat_end == bounds_.back(), "sharded parameters: the ranges cover ",
              bounds_.back(), " elements, the model has ", units_.back().flat_end);
}

void ShardedParameters::Adopt(model::ParameterSet& params, std::span<const float> mine) {
  const int64_t n = bounds_[comm_.rank() + 1] - range_begin();
  TRAIL_CHECK(static_cast<int64_t>(mine.size()) == n, "sharded parameters: ", mine.size(),
              " values for a range of ", n);
  range_ = repops::AllocateOn<float>(be_, n);
  if (n > 0) be_.CopyFromHost(mine.data(), range_.view());
  params.Unbind();
  params_ = &params;
  held_.clear();
}

void ShardedParameters::Gather(const Unit& u, float* out) {
  const int P = comm_.size(), me = comm_.rank();
  const bool host = be_.device().is_host();
  // My piece of the unit, sent to every process (myself included: a copy).
  const int64_t my_lo = std::max(u.flat_begin, bounds_[me]);
  const int64_t my_hi = std::min(u.flat_end, bounds_[me + 1]);
  const int64_t my_n = std::max<int64_t>(0, my_hi - my_lo);
  const float* mine = range() + (my_lo - bounds_[me]);
  if (!host && my_n > 0) {
    own_piece_.resize(static_cast<size_t>(my_n));
    be_.CopyToHost(
        TensorView::Contiguous(const_cast<float*>(mine), DType::kF32, be_.device(), {my_n}),
        own_piece_.data());
    mine = own_piece_.data();
  }
  std::vector<std::span<const std::byte>> send(P);
  std::vector<std::span<std::byte>> recv(P);
  for (int q = 0; q < P; ++q) {
    const int64_t lo = std::max(u.flat_begin, bounds_[q]),
                  hi = std::min(u.flat_end, bounds_[q + 1]);
    send[q] = Bytes(mine, my_n);
    recv[q] = lo < hi ? MutableBytes(out + (lo - u.flat_begin), hi - lo) : std::span<std::byte>{};
  }
  comm_.Exchange(send, recv);
}

void ShardedParameters::Acquire(int unit) {
  TRAIL_CHECK(params_ != nullptr, "sharded parameters: a unit acquired before Adopt");
  TRAIL_CHECK(unit >= 0 && unit < static_cast<int>(units_.size()) && !held_.count(unit),
              "sharded parameters: unit ", unit, " acquired twice or out of range");
  const Unit& u = units_[unit];
  std::vector<Buffer>& spare = spare_[u.buffer_floats];
  Buffer buf;
  if (spare.empty()) {
    buf = repops::AllocateOn<float>(be_, u.buffer_floats);
    allocated_bytes_ += static_cast<int64_t>(buf.nbytes());
  } else {
    buf = std::move(spare.back());
    spare.pop_back();
  }
  const int64_t n = u.flat_end - u.flat_begin;
  std::vector<DeviceTensor>& tensors = params_->tensors();
  if (u.packed && be_.device().is_host()) {
    Gather(u, buf.data<float>());  // straight into the unit's memory
  } else {
    staging_.resize(static_cast<size_t>(n));
    Gather(u, staging_.data());
    int64_t flat = 0;
    for (size_t t = first_tensor_[unit]; t < first_tensor_[unit + 1]; ++t) {
      const int64_t k = tensors[t].numel();
      be_.CopyFromHost(
          staging_.data() + flat,
          TensorView::Contiguous(buf.data<float>() + u.offsets[t - first_tensor_[unit]],
                                 DType::kF32, be_.device(), {k}));
      flat += k;
    }
  }
  for (size_t t = first_tensor_[unit]; t < first_tensor_[unit + 1]; ++t) {
    tensors[t].Bind(buf.data<float>() + u.offsets[t - first_tensor_[unit]]);
  }
  held_.emplace(unit, std::move(buf));
}

void ShardedParameters::Release(int unit) {
  auto it = held_.find(unit);
  TRAIL_CHECK(it != held_.end(), "sharded parameters: unit ", unit, " released but not held");
  std::vector<DeviceTensor>& tensors = params_->tensors();
  for (size_t t = first_tensor_[unit]; t < first_tensor_[unit + 1]; ++t) tensors[t].Bind(nullptr);
  spare_[units_[unit].buffer_floats].push_back(std::move(it->second));
  held_.erase(it);
}

void ShardedParameters::IdlePass(bool backward) {
  const model::ParameterSet& p = *params_;
  for (int u :
       model::AcquireOrder(static_cast<int64_t>(p.layers.size()), p.lm_head == nullptr, backward)) {
    Acquire(u);
    Release(u);
  }
}

void ShardedParameters::ForEachUnit(const std::function<void(int unit)>& fn) {
  for (int u = 0; u < static_cast<int>(units_.size()); ++u) {
    Acquire(u);
    fn(u);
    Release(u);
  }
}

}  // namespace trail::train
