// How the processes of one training job move data between them. A job has size() processes,
// numbered 0..size()-1. Everything here is pure data movement, with no arithmetic: the bits of
// every sum are fixed by the code that adds (mesh_reduce.h), never by the transport, which is
// why trail does not use MPI_Allreduce / MPI_Reduce_scatter (their order is the library's).
//
// Every process must call each collective in the same order with agreeing sizes; a process that
// fails calls Abort so the others never wait forever.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/error.h"

namespace trail::collectives {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;          // this process
  virtual int size() const = 0;          // processes in the job
  virtual std::string name() const = 0;  // "in-process" or "mpi"

  // The one primitive: this process sends send[q] to process q (send.size() == size()) and
  // receives into recv[p] what process p sent to it; recv[p] already has the agreed size.
  // send[rank()] is copied to recv[rank()].
  void Exchange(std::span<const std::span<const std::byte>> send,
                std::span<const std::span<std::byte>> recv);

  // Ends every process of the job now, with exit status `code`. Never returns.
  [[noreturn]] virtual void Abort(int code) = 0;
  // Whether the collectives may be called from a thread other than the one that created the
  // communicator (one thread at a time): a gather that runs ahead needs it.
  virtual bool callable_from_any_thread() const { return false; }

  // Returns once every process has called it.
  void Barrier() { AllGather({}); }
  // Bytes of every process, by process (contributions may differ in length).
  std::vector<std::vector<uint8_t>> AllGather(std::span<const uint8_t> mine);
  // Floats: process q receives send[q]; recv[p] must have the length process p sends.
  void AllToAll(std::span<const std::span<const float>> send,
                std::span<const std::span<float>> recv);

  // Totals since the start: bytes this process sent to other processes, and seconds spent in
  // exchanges (waiting for slower processes included).
  int64_t bytes_sent() const { return bytes_sent_; }
  double exchange_seconds() const { return exchange_seconds_; }

 private:
  virtual void Transfer(std::span<const std::span<const std::byte>> send,
                        std::span<const std::span<std::byte>> recv) = 0;
  int64_t bytes_sent_ = 0;
  double exchange_seconds_ = 0;
};

// Items of a trivially copyable type from every process, concatenated in process order.
template <class T>
std::vector<T> AllGatherItems(Communicator& comm, std::span<const T> mine) {
  static_assert(std::is_trivially_copyable_v<T>);
  std::vector<T> out;
  for (const std::vector<uint8_t>& from :
       comm.AllGather({reinterpret_cast<const uint8_t*>(mine.data()), mine.size() * sizeof(T)})) {
    TRAIL_CHECK(from.size() % sizeof(T) == 0, "a process sent a torn record (", from.size(),
                " bytes for items of ", sizeof(T), ")");
    const size_t n = from.size() / sizeof(T);
    out.resize(out.size() + n);
    if (n) std::memcpy(out.data() + out.size() - n, from.data(), from.size());
  }
  return out;
}

// A job of one process (P = 1): every exchange is a copy.
std::unique_ptr<Communicator> InProcessCommunicator();
// A process-wide one-process communicator, for work that is never distributed (replay of a
// segment on one machine, golden runs, tests).
Communicator& SingleProcess();

}  // namespace trail::collectives
