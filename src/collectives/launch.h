// The job this process belongs to. A process started by an MPI launcher (mpirun / mpiexec, or a
// scheduler's srun; they set OMPI_COMM_WORLD_SIZE, PMIX_RANK or PMI_SIZE) joins its MPI job;
// any other process is a job of one (in-process communicator). MPI is initialized on first use
// and finalized at exit.
#pragma once

#include <string>

#include "collectives/communicator.h"

namespace trail::collectives {

bool StartedByMpiLauncher();
// Whether this build can run under MPI (it was built with OpenMPI's headers found).
bool BuiltWithMpi();
// The process-wide communicator; throws trail::Error when started by a launcher in a build
// without MPI.
Communicator& JobCommunicator();
// For error paths: when this process is one of several, ends the whole job with `code` (so no
// process waits forever on one that failed); otherwise returns.
void AbortJobIfDistributed(int code);
// "process R of P: " in a job of several processes, else "" (for messages).
std::string ProcessLabel();

#if TRAIL_WITH_MPI
std::unique_ptr<Communicator> MpiCommunicator();  // mpi_communicator.cc
#endif

}  // namespace trail::collectives
