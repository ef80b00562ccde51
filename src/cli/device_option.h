// The `--device` option of the commands that run a model (train, selftest, audit replay, trace
// and certify): where its ops run, checked while parsing so a typo is a usage error.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "core/device.h"
#include "core/error.h"
#include "repops/devices.h"

namespace trail::cli {

inline void AddDeviceOption(CLI::App* cmd, std::string& device) {
  std::string here;
  for (const std::string& d : repops::AvailableDevices()) here += (here.empty() ? "" : ", ") + d;
  cmd->add_option("--device", device,
                  "Where the model runs: cpu, or cuda[:N] in a build with CUDA (cuda: the GPU of "
                  "this process's local rank; here: " +
                      here + "). Every device gives the same bits")
      ->capture_default_str()
      ->check([](const std::string& text) -> std::string {
        try {
          ParseDevice(text);
          return "";
        } catch (const Error& e) {
          return e.what();
        }
      });
}

}  // namespace trail::cli
