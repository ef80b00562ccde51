// The MPI communicator: Exchange on point-to-point messages (MPI_Isend / MPI_Irecv), each
// message cut into pieces of at most 1 GiB so no count overflows MPI's int.
#include <mpi.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "collectives/launch.h"

namespace trail::collectives {
namespace {

constexpr size_t kPiece = size_t{1} << 30;

void Check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  TRAIL_FAIL("MPI ", what, " failed: ", std::string(msg, len));
}

class Mpi final : public Communicator {
 public:
  Mpi() {
    // One thread at a time calls MPI: the main thread, or a sharded job's gathering thread
    // while the main thread computes (train/sharded_params.h); the kernel pool's never do.
    Check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided_), "init");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~Mpi() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string name() const override { return "mpi"; }
  bool callable_from_any_thread() const override { return provided_ >= MPI_THREAD_SERIALIZED; }

  void Transfer(std::span<const std::span<const std::byte>> send,
                std::span<const std::span<std::byte>> recv) override {
    TRAIL_CHECK(send.size() == static_cast<size_t>(size_) && recv.size() == send.size(),
                "exchange: ", send.size(), " send and ", recv.size(), " receive buffers for ",
                size_, " processes");
    std::vector<MPI_Request> reqs;
    for (int p = 0; p < size_; ++p) {
      if (p == rank_) continue;
      for (size_t off = 0, tag = 0; off < recv[p].size(); off += kPiece, ++tag) {
        reqs.emplace_back();
        Check(MPI_Irecv(recv[p].data() + off,
                        static_cast<int>(std::min(kPiece, recv[p].size() - off)), MPI_BYTE, p,
                        static_cast<int>(tag), MPI_COMM_WORLD, &reqs.back()),
              "receive");
      }
    }
    for (int q = 0; q < size_; ++q) {
      if (q == rank_) continue;
      for (size_t off = 0, tag = 0; off < send[q].size(); off += kPiece, ++tag) {
        reqs.emplace_back();
        Check(MPI_Isend(send[q].data() + off,
                        static_cast<int>(std::min(kPiece, send[q].size() - off)), MPI_BYTE, q,
                        static_cast<int>(tag), MPI_COMM_WORLD, &reqs.back()),
              "send");
      }
    }
    TRAIL_CHECK(send[rank_].size() == recv[rank_].size(), "exchange: ", send[rank_].size(),
                " bytes to self into ", recv[rank_].size());
    if (!send[rank_].empty())
      std::memcpy(recv[rank_].data(), send[rank_].data(), send[rank_].size());
    Check(MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE), "wait");
  }

  [[noreturn]] void Abort(int code) override {
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);
  }

 private:
  int rank_ = 0, size_ = 1;
  int provided_ = MPI_THREAD_SINGLE;
};

}  // namespace

std::unique_ptr<Communicator> MpiCommunicator() { return std::make_unique<Mpi>(); }

}  // namespace trail::collectives
