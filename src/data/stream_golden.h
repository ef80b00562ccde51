// The stream's golden digest: SHA-256 over the packed rows (and provenance) of fixed windows of
// a fixed synthetic corpus, under two recipes. The stream is integer arithmetic only, so every
// machine, ISA and build must produce the committed digest (goldens/stream.txt); `trail selftest`
// checks it.
#pragma once

#include <string>

namespace trail::data {

// The committed digest (the golden registry's "stream" case).
std::string CommittedStreamGoldenDigest();

// Writes the corpus into a temporary directory, computes the digest, removes the directory.
std::string ComputeStreamGoldenDigest();

}  // namespace trail::data
