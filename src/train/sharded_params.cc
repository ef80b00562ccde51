#include "train/sharded_params.h"

#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "core/error.h"
#include "core/thread_pool.h"

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

// The job's processes on this machine (as the launcher says; 1 outside a job).
int LocalProcesses() {
  for (const char* name :
       {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE"}) {
    if (const char* v = std::getenv(name)) {
      const long n = std::strtol(v, nullptr, 10);
      if (n >= 1) return static_cast<int>(n);
    }
  }
  return 1;
}

// Whether a gathering thread would find a CPU the kernel threads leave idle: the CPUs this
// process may run on (its own when the launcher bound it to fewer than the machine's, else
// shared with the job's other processes here) against its kernel threads. Gathering ahead on a
// busy core costs more than it hides: measured +17% a step (docs/performance.md).
// TRAIL_GATHER_AHEAD=0 or 1 decides instead.
bool GatherAheadWanted() {
  if (const char* v = std::getenv("TRAIL_GATHER_AHEAD")) return std::strcmp(v, "0") != 0;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return false;
  const int mine = CPU_COUNT(&set);
  const int machine = static_cast<int>(std::thread::hardware_concurrency());
  const int cpus = mine < machine ? mine : mine / LocalProcesses();
  return cpus > static_cast<int>(KernelPool().num_threads());
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
  const std::vector<Unit> units = UnitsOf(layout);
  std::set<int64_t> sizes;
  for (const Unit& u : units) sizes.insert(u.buffer_floats);
  int64_t floats = 0;
  for (int64_t n : sizes) floats += n;
  // Two layers at once: the one in use and the next, gathered ahead.
  if (layout.layers.size() >= 2) floats += units[model::ParameterSet::LayerUnit(0)].buffer_floats;
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
  // A device's memory is reached by its backend's ops only, which run on the model's thread.
  // One process has no exchange to wait for: its "gather" is a copy, with nothing to hide.
  ahead_ = comm.size() > 1 && be.allocator().is_host_memory() && comm.callable_from_any_thread() &&
           GatherAheadWanted();
}

ShardedParameters::~ShardedParameters() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ShardedParameters::Adopt(model::ParameterSet& params, std::span<const float> mine) {
  const int64_t n = bounds_[comm_.rank() + 1] - range_begin();
  TRAIL_CHECK(static_cast<int64_t>(mine.size()) == n, "sharded parameters: ", mine.size(),
              " values for a range of ", n);
  TRAIL_CHECK(!InPass(), "sharded parameters adopted in the middle of a pass");
  range_ = repops::AllocateOn<float>(be_, n);
  if (n > 0) be_.CopyFromHost(mine.data(), range_.view());
  params.Unbind();
  params_ = &params;
  held_.clear();
}

void ShardedParameters::Gather(const Unit& u, float* out) {
  const int P = comm_.size(), me = comm_.rank();
  // My piece of the unit, sent to every process (myself included: a copy).
  const int64_t my_lo = std::max(u.flat_begin, bounds_[me]);
  const int64_t my_hi = std::min(u.flat_end, bounds_[me + 1]);
  const int64_t my_n = std::max<int64_t>(0, my_hi - my_lo);
  const float* mine = range() + (my_lo - bounds_[me]);
  if (!be_.allocator().is_host_memory() && my_n > 0) {  // never while gathering ahead
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

Buffer ShardedParameters::TakeBuffer(int64_t floats) {
  std::vector<Buffer>& spare = spare_[floats];
  if (spare.empty()) {
    Buffer b = repops::AllocateOn<float>(be_, floats);
    allocated_bytes_ += static_cast<int64_t>(b.nbytes());
    return b;
  }
  Buffer b = std::move(spare.back());
  spare.pop_back();
  return b;
}

ShardedParameters::Fetched ShardedParameters::Fetch(int unit) {
  const Unit& u = units_[unit];
  Fetched f;
  {
    std::lock_guard<std::mutex> lock(mu_);
    f.buf = TakeBuffer(u.buffer_floats);
  }
  if (u.packed && be_.allocator().is_host_memory()) {
    Gather(u, f.buf.data<float>());  // straight into the unit's memory
  } else {
    f.staged.resize(static_cast<size_t>(u.flat_end - u.flat_begin));
    Gather(u, f.staged.data());
  }
  return f;
}

void ShardedParameters::Bind(int unit, Fetched f) {
  const Unit& u = units_[unit];
  std::vector<DeviceTensor>& tensors = params_->tensors();
  int64_t flat = 0;
  for (size_t t = first_tensor_[unit]; t < first_tensor_[unit + 1]; ++t) {
    float* at = f.buf.data<float>() + u.offsets[t - first_tensor_[unit]];
    const int64_t k = tensors[t].numel();
    if (!f.staged.empty()) {
      be_.CopyFromHost(f.staged.data() + flat,
                       TensorView::Contiguous(at, DType::kF32, be_.device(), {k}));
    }
    tensors[t].Bind(at);
    flat += k;
  }
  held_.emplace(unit, std::move(f.buf));
}

void ShardedParameters::BeginPass(bool backward) {
  TRAIL_CHECK(params_ != nullptr, "sharded parameters: a pass began before Adopt");
  std::unique_lock<std::mutex> lock(mu_);
  TRAIL_CHECK(!InPass(), "sharded parameters: a pass began before the last one ended");
  order_ = model::AcquireOrder(static_cast<int64_t>(params_->layers.size()),
                               params_->lm_head == nullptr, backward);
  taken_ = 0, gathered_ = 0;
  ready_.clear();
  if (!ahead_) return;
  if (!thread_.joinable()) thread_ = std::thread([this] { GatherAhead(); });
  lock.unlock();
  cv_.notify_all();
}

void ShardedParameters::GatherAhead() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    // The next unit of the pass, once the model has taken every unit before it but one.
    cv_.wait(lock, [&] { return stop_ || (gathered_ < order_.size() && gathered_ <= taken_); });
    if (stop_) return;
    const int unit = order_[gathered_];
    lock.unlock();
    Fetched f;
    try {
      f = Fetch(unit);
    } catch (...) {
      lock.lock();
      error_ = std::current_exception();
      cv_.notify_all();
      return;
    }
    lock.lock();
    ready_.push_back(std::move(f));
    ++gathered_;
    cv_.notify_all();
  }
}

void ShardedParameters::Acquire(int unit) {
  TRAIL_CHECK(params_ != nullptr, "sharded parameters: a unit acquired before Adopt");
  TRAIL_CHECK(unit >= 0 && unit < static_cast<int>(units_.size()) && !held_.count(unit),
              "sharded parameters: unit ", unit, " acquired twice or out of range");
  std::unique_lock<std::mutex> lock(mu_);
  if (!InPass()) {  // outside a pass (ForEachUnit): gathered here and now
    lock.unlock();
    Bind(unit, Fetch(unit));
    return;
  }
  TRAIL_CHECK(order_[taken_] == unit, "sharded parameters: unit ", unit, " acquired where the ",
              "pass's order has unit ", order_[taken_]);
  if (!ahead_) {
    ++taken_;
    lock.unlock();
    Bind(unit, Fetch(unit));
    return;
  }
  cv_.wait(lock, [&] { return error_ != nullptr || gathered_ > taken_; });
  if (error_ != nullptr) std::rethrow_exception(error_);
  Fetched f = std::move(ready_.front());
  ready_.pop_front();
  ++taken_;
  lock.unlock();
  cv_.notify_all();  // the thread may gather the next unit now
  Bind(unit, std::move(f));
}

void ShardedParameters::Release(int unit) {
  auto it = held_.find(unit);
  TRAIL_CHECK(it != held_.end(), "sharded parameters: unit ", unit, " released but not held");
  std::vector<DeviceTensor>& tensors = params_->tensors();
  for (size_t t = first_tensor_[unit]; t < first_tensor_[unit + 1]; ++t) tensors[t].Bind(nullptr);
  {
    std::lock_guard<std::mutex> lock(mu_);
    spare_[units_[unit].buffer_floats].push_back(std::move(it->second));
  }
  held_.erase(it);
}

void ShardedParameters::IdlePass(bool backward) {
  BeginPass(backward);
  for (int u : model::AcquireOrder(static_cast<int64_t>(params_->layers.size()),
                                   params_->lm_head == nullptr, backward)) {
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

void ShardedParameters::ForEachLocalUnit(
    model::ParameterSet& params,
    const std::function<void(int unit, int64_t begin, int64_t end)>& fn) {
  TRAIL_CHECK(!InPass() && held_.empty(), "sharded parameters: local units while units are held");
  params.Unbind();
  params_ = &params;
  for (int u = 0; u < static_cast<int>(units_.size()); ++u) {
    Fetched f;
    {
      std::lock_guard<std::mutex> lock(mu_);
      f.buf = TakeBuffer(units_[u].buffer_floats);
    }
    Bind(u, std::move(f));
    fn(u, units_[u].flat_begin, units_[u].flat_end);
    Release(u);
  }
}

int64_t ShardedParameters::gathered_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return allocated_bytes_;
}

}  // namespace trail::train
