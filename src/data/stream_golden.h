// The stream's golden digest: SHA-256 over the packed rows (and provenance) of fixed windows of
// a fixed synthetic corpus, under two recipes ("stream"), and the same with a BOS before every
// document ("stream_bos"). The stream is integer arithmetic only, so every machine, ISA and build
// must produce the committed digests (goldens/stream.txt); `trail selftest` checks them.
#pragma once

#include <string>
#include <vector>

namespace trail::data {

std::vector<std::string> StreamGoldenNames();  // "stream", "stream_bos"

// The committed digest (the golden registry's "stream" set).
std::string CommittedStreamGoldenDigest(const std::string& name = "stream");

// Writes the corpus into a temporary directory, computes the digest, removes the directory.
std::string ComputeStreamGoldenDigest(const std::string& name = "stream");

}  // namespace trail::data
