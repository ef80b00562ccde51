// A job whose processes are threads of this process: P communicators exchanging through shared
// memory. For tests of everything distributed without a launcher (the collectives, the step
// engine at any P); MPI runs the same code across real processes.
#pragma once

#include <barrier>
#include <functional>
#include <vector>

#include "collectives/communicator.h"

namespace trail::collectives {

class ThreadGroup {
 public:
  explicit ThreadGroup(int processes);
  // Runs body(communicator of process p) on one thread per process and waits for all. An
  // exception on one thread is rethrown here (after the others finished or failed too).
  void Run(const std::function<void(Communicator&)>& body);

 private:
  class Member;
  int P_;
  std::vector<std::vector<std::byte>> slots_;  // [from · P + to]
  std::barrier<> sync_;
};

}  // namespace trail::collectives
