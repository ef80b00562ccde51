#include "core/guarded_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace trail {
namespace {

size_t PageRounded(size_t bytes) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return bytes == 0 ? page : (bytes + page - 1) / page * page;
}

}  // namespace

GuardedAllocator::~GuardedAllocator() {
  for (const auto& [p, len] : live_) munmap(p, len);
}

void* GuardedAllocator::Allocate(size_t bytes) {
  std::lock_guard lock(mu_);
  const size_t len = PageRounded(bytes);
  const int prot = depth_ > 0 ? PROT_READ | PROT_WRITE : PROT_NONE;
  void* p = mmap(nullptr, len, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  TRAIL_CHECK(p != MAP_FAILED, "guarded device: mapping ", len,
              " bytes failed: ", std::strerror(errno));
  live_.emplace(p, len);
  return p;
}

void GuardedAllocator::Free(void* p, size_t) {
  std::lock_guard lock(mu_);
  const auto it = live_.find(p);
  if (it == live_.end()) return;
  munmap(it->first, it->second);
  live_.erase(it);
}

void GuardedAllocator::ProtectAll(int prot) {
  for (const auto& [p, len] : live_) {
    TRAIL_CHECK(mprotect(p, len, prot) == 0,
                "guarded device: mprotect failed: ", std::strerror(errno));
  }
}

void GuardedAllocator::Open() {
  std::lock_guard lock(mu_);
  if (depth_++ == 0) ProtectAll(PROT_READ | PROT_WRITE);
}

void GuardedAllocator::Close() {
  std::lock_guard lock(mu_);
  TRAIL_CHECK(depth_ > 0, "guarded device: Close without Open");
  if (--depth_ == 0) ProtectAll(PROT_NONE);
}

bool GuardedAllocator::is_open() const {
  std::lock_guard lock(mu_);
  return depth_ > 0;
}

size_t GuardedAllocator::live_allocations() const {
  std::lock_guard lock(mu_);
  return live_.size();
}

}  // namespace trail
