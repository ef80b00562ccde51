#include "collectives/thread_group.h"

#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>

#include "core/error.h"

namespace trail::collectives {

class ThreadGroup::Member final : public Communicator {
 public:
  Member(ThreadGroup& g, int rank) : g_(g), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return g_.P_; }
  std::string name() const override { return "threads"; }
  bool callable_from_any_thread() const override { return true; }
  [[noreturn]] void Abort(int code) override { std::_Exit(code); }

 private:
  void Transfer(std::span<const std::span<const std::byte>> send,
                std::span<const std::span<std::byte>> recv) override {
    const int P = g_.P_;
    for (int q = 0; q < P; ++q) g_.slots_[rank_ * P + q].assign(send[q].begin(), send[q].end());
    g_.sync_.arrive_and_wait();
    for (int p = 0; p < P; ++p) {
      const auto& s = g_.slots_[p * P + rank_];
      TRAIL_CHECK(s.size() == recv[p].size(), "thread group: process ", p, " sent ", s.size(),
                  " bytes, ", recv[p].size(), " expected");
      if (!s.empty()) std::memcpy(recv[p].data(), s.data(), s.size());
    }
    g_.sync_.arrive_and_wait();
  }
  ThreadGroup& g_;
  int rank_;
};

ThreadGroup::ThreadGroup(int processes)
    : P_(processes), slots_(processes * processes), sync_(processes) {}

void ThreadGroup::Run(const std::function<void(Communicator&)>& body) {
  // The first failure is the one to report: the others may only be its echo in a collective.
  std::exception_ptr first;
  std::mutex mu;
  std::vector<std::thread> threads;
  for (int p = 0; p < P_; ++p) {
    threads.emplace_back([&, p] {
      Member m(*this, p);
      try {
        body(m);
      } catch (...) {
        {
          std::lock_guard<std::mutex> lock(mu);
          if (!first) first = std::current_exception();
        }
        sync_.arrive_and_drop();  // the others must not wait for this thread at a barrier
      }
    });
  }
  for (std::thread& t : threads) t.join();
  if (first) std::rethrow_exception(first);
}

}  // namespace trail::collectives
