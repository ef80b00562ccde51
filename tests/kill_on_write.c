// A test shim loaded with LD_PRELOAD (tests/train_mpi_test.sh), so the shipped trail binary
// carries no test hook: the process SIGKILLs itself when it is about to pwrite() to a file whose
// path ends with $TRAIL_KILL_ON_WRITE, in the MPI process whose rank ($OMPI_COMM_WORLD_RANK) is
// $TRAIL_KILL_RANK (any process when unset). Used to kill one process of a job inside a
// checkpoint, after it wrote its parameters and before its moments: the torn checkpoint a resume
// must never take as complete. Without $TRAIL_KILL_ON_WRITE it only forwards the calls.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

static int Doomed(int fd) {
  const char* suffix = getenv("TRAIL_KILL_ON_WRITE");
  if (suffix == NULL || *suffix == '\0') return 0;
  const char* want = getenv("TRAIL_KILL_RANK");
  const char* rank = getenv("OMPI_COMM_WORLD_RANK");
  if (want != NULL && (rank == NULL || strcmp(want, rank) != 0)) return 0;
  char link[64], path[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, path, sizeof path - 1);
  if (n <= 0) return 0;
  path[n] = '\0';
  const size_t len = strlen(suffix), have = (size_t)n;
  return have >= len && strcmp(path + have - len, suffix) == 0;
}

typedef ssize_t (*PwriteFn)(int, const void*, size_t, off_t);

static ssize_t Forward(const char* name, int fd, const void* buf, size_t n, off_t off) {
  if (Doomed(fd)) raise(SIGKILL);
  PwriteFn real = (PwriteFn)dlsym(RTLD_NEXT, name);
  return real(fd, buf, n, off);
}

ssize_t pwrite(int fd, const void* buf, size_t n, off_t off) {
  return Forward("pwrite", fd, buf, n, off);
}

ssize_t pwrite64(int fd, const void* buf, size_t n, off_t off) {
  return Forward("pwrite64", fd, buf, n, off);
}
