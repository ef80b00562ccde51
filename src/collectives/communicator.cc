#include "collectives/communicator.h"

#include <chrono>
#include <cstring>

#include "core/error.h"

namespace trail::collectives {
namespace {

class InProcess final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string name() const override { return "in-process"; }
  bool callable_from_any_thread() const override { return true; }
  void Transfer(std::span<const std::span<const std::byte>> send,
                std::span<const std::span<std::byte>> recv) override {
    TRAIL_CHECK(send.size() == 1 && recv.size() == 1 && send[0].size() == recv[0].size(),
                "in-process exchange: mismatched buffers");
    if (!send[0].empty()) std::memcpy(recv[0].data(), send[0].data(), send[0].size());
  }
  [[noreturn]] void Abort(int code) override { std::exit(code); }
};

}  // namespace

std::unique_ptr<Communicator> InProcessCommunicator() { return std::make_unique<InProcess>(); }

Communicator& SingleProcess() {
  static InProcess one;
  return one;
}

void Communicator::Exchange(std::span<const std::span<const std::byte>> send,
                            std::span<const std::span<std::byte>> recv) {
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t q = 0; q < send.size(); ++q) {
    if (static_cast<int>(q) != rank()) bytes_sent_ += static_cast<int64_t>(send[q].size());
  }
  Transfer(send, recv);
  exchange_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::vector<std::vector<uint8_t>> Communicator::AllGather(std::span<const uint8_t> mine) {
  const size_t P = static_cast<size_t>(size());
  // Lengths first (8 bytes each), then the contributions.
  const uint64_t n = mine.size();
  std::vector<uint64_t> lengths(P);
  std::vector<std::span<const std::byte>> send(P, std::as_bytes(std::span(&n, 1)));
  std::vector<std::span<std::byte>> recv;
  for (uint64_t& l : lengths) recv.push_back(std::as_writable_bytes(std::span(&l, 1)));
  Exchange(send, recv);
  std::vector<std::vector<uint8_t>> out(P);
  send.assign(P, std::as_bytes(mine));
  recv.clear();
  for (size_t p = 0; p < P; ++p) {
    out[p].resize(lengths[p]);
    recv.push_back(std::as_writable_bytes(std::span(out[p])));
  }
  Exchange(send, recv);
  return out;
}

void Communicator::AllToAll(std::span<const std::span<const float>> send,
                            std::span<const std::span<float>> recv) {
  std::vector<std::span<const std::byte>> s;
  std::vector<std::span<std::byte>> r;
  for (const auto& x : send) s.push_back(std::as_bytes(x));
  for (const auto& x : recv) r.push_back(std::as_writable_bytes(x));
  Exchange(s, r);
}

}  // namespace trail::collectives
