// The device registry: every kind of device trail knows, one entry each, and the only place that
// maps a device's name to its backend. ParseDevice, MakeBackend and their errors, the CLI's
// --device help and AvailableDevices all enumerate it, and so does the test that checks each
// built backend against the contract (repops/devices_test.cc, docs/devices.md "Adding a
// backend"). A backend is one folder that defines its DeviceKind, its Backend and a
// BackendEntry (its sources listed in this library's CMakeLists.txt), plus one line in
// RegisteredBackends() (devices.cc).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/device.h"
#include "repops/backend.h"
#include "repops/kernels.h"

namespace trail::repops {

struct BackendEntry {
  DeviceKind kind;             // its name and whether devices are numbered (name:N)
  std::string_view what = "";  // what a device of the kind is, in a few words (--help)
  bool for_users = true;       // false: accepted but meant for tests (not offered, not listed)
  // How many devices of a numbered kind this machine has (0 without the hardware or driver);
  // nullptr for an unnumbered kind (always one).
  int (*count)() = nullptr;
  // A backend on `device` (of this kind) whose host work runs on `host_kernels`; nullptr in a
  // build without this backend, and then `missing` says why and what to do.
  std::unique_ptr<Backend> (*make)(const Device& device, const Kernels& host_kernels) = nullptr;
  std::string_view missing = "";
};

// Every kind, in the order help and errors list them (cpu first).
std::span<const BackendEntry> RegisteredBackends();

// A registered kind's name ("cpu"), or a numbered one's with "" (kLocalGpu: the device of this
// process's local rank, modulo the devices here) or ":N" (N a non-negative decimal that fits an
// int); an error that lists the spellings otherwise.
Device ParseDevice(std::string_view text);
// The spellings users are offered, for help and errors: "cpu, cuda or cuda:N".
std::string DeviceSpellings();

// A new backend on `device` whose host work runs on `host_kernels` (a CPU backend's ops, and
// what every backend's host_kernels() hands to code scoring its copied-back results); an error
// saying what this build offers when it has none for the device. The one-argument form takes
// the SIMD target active now (ActiveKernels()): callers that must not depend on process-wide
// state (bisect's replay on the reference kernels) pass their table.
std::unique_ptr<Backend> MakeBackend(const Device& device, const Kernels& host_kernels);
std::unique_ptr<Backend> MakeBackend(const Device& device);
// The devices MakeBackend accepts here and users are offered, by name ("cpu", "cuda:0", ...).
std::vector<std::string> AvailableDevices();

}  // namespace trail::repops
