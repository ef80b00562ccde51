// The memory of the "guarded" test device: host pages kept PROT_NONE except while an access
// window is open. A backend over it (repops/guarded_backend.h) opens the window only for the
// duration of each of its ops, so any read or write of device state by host code outside the
// backend faults at once instead of passing silently: the test that the device seam is complete.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>

#include "core/device.h"

namespace trail {

class GuardedAllocator final : public Allocator {
 public:
  GuardedAllocator() = default;
  GuardedAllocator(const GuardedAllocator&) = delete;
  GuardedAllocator& operator=(const GuardedAllocator&) = delete;
  ~GuardedAllocator() override;

  Device device() const override { return {kGuardedDevice, 0}; }
  // Whole anonymous pages (zero), accessible only while the window is open.
  void* Allocate(size_t bytes) override;
  void Free(void* p, size_t bytes) override;

  // Opens the access window on every live allocation (and those made while it is open) until
  // the matching Close. Windows nest; the outermost Close protects every page again.
  void Open();
  void Close();
  bool is_open() const;
  size_t live_allocations() const;

 private:
  void ProtectAll(int prot);
  mutable std::mutex mu_;
  std::map<void*, size_t> live_;  // page-rounded lengths
  int depth_ = 0;
};

// Holds a guarded allocator's window open for a scope.
class GuardedWindow {
 public:
  explicit GuardedWindow(GuardedAllocator& a) : a_(a) { a_.Open(); }
  ~GuardedWindow() { a_.Close(); }
  GuardedWindow(const GuardedWindow&) = delete;
  GuardedWindow& operator=(const GuardedWindow&) = delete;

 private:
  GuardedAllocator& a_;
};

}  // namespace trail
