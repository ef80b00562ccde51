// The `--device` option of the commands that run a model (train, selftest, audit replay, trace
// and certify): where its ops run, checked while parsing so a typo is a usage error.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "core/device.h"
#include "core/error.h"
#include "repops/devices.h"

namespace trail::cli {

// "cpu: the host's memory and CPU kernels; cuda[:N]: an NVIDIA GPU (...)" from the registry.
inline std::string DeviceKindsHelp() {
  std::string out;
  for (const repops::BackendEntry& e : repops::RegisteredBackends()) {
    if (!e.for_users) continue;
    out += (out.empty() ? "" : "; ") + std::string(e.kind.name) + (e.kind.numbered ? "[:N]" : "") +
           ": " + std::string(e.what) + (e.make == nullptr ? " (not in this build)" : "");
  }
  return out;
}

inline void AddDeviceOption(CLI::App* cmd, std::string& device) {
  std::string here;
  for (const std::string& d : repops::AvailableDevices()) here += (here.empty() ? "" : ", ") + d;
  cmd->add_option("--device", device,
                  "Where the model runs (" + DeviceKindsHelp() +
                      "; a numbered kind without :N: the device of this process's local rank). "
                      "Here: " +
                      here + ". Every device gives the same bits")
      ->capture_default_str()
      ->check([](const std::string& text) -> std::string {
        try {
          repops::ParseDevice(text);
          return "";
        } catch (const Error& e) {
          return e.what();
        }
      });
}

}  // namespace trail::cli
