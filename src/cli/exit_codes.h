// The exit status of every `trail` command (docs/architecture.md, "Errors"; docs/audit.md,
// "Exit status" for the codes of commands that fetch a publication).
#pragma once

namespace trail::cli {

inline constexpr int kExitFound = 1;  // the command ran and found a problem (a step differs, ...)
inline constexpr int kExitUsage = 2;  // bad usage: a flag missing, malformed or out of range
inline constexpr int kExitError = 3;  // an error: unreadable or malformed input (a publication too)
inline constexpr int kExitFetch = 4;  // a publication's bytes could not be fetched
inline constexpr int kExitNotPublished = 5;  // bytes were served that are not the published ones
inline constexpr int kExitPublisher = 6;     // the publication is not the run's trainer's

}  // namespace trail::cli
