#include "collectives/launch.h"

#include <cstdlib>
#include <mutex>

#include "core/error.h"

namespace trail::collectives {
namespace {

std::unique_ptr<Communicator>& Slot() {
  static std::unique_ptr<Communicator> comm;
  return comm;
}

}  // namespace

bool StartedByMpiLauncher() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"}) {
    if (std::getenv(v) != nullptr) return true;
  }
  return false;
}

bool BuiltWithMpi() {
#if TRAIL_WITH_MPI
  return true;
#else
  return false;
#endif
}

Communicator& JobCommunicator() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (!StartedByMpiLauncher()) {
      Slot() = InProcessCommunicator();
      return;
    }
#if TRAIL_WITH_MPI
    Slot() = MpiCommunicator();
#else
    TRAIL_FAIL("this process was started by an MPI launcher, but this trail was built without "
               "MPI: install libopenmpi-dev (scripts/install-deps.sh) and rebuild");
#endif
  });
  TRAIL_CHECK(Slot() != nullptr, "no communicator (an earlier start failed)");
  return *Slot();
}

void AbortJobIfDistributed(int code) {
  if (Slot() != nullptr && Slot()->size() > 1) Slot()->Abort(code);
}

std::string ProcessLabel() {
  if (Slot() == nullptr || Slot()->size() == 1) return "";
  return "process " + std::to_string(Slot()->rank()) + " of " + std::to_string(Slot()->size()) +
         ": ";
}

}  // namespace trail::collectives
