// How the corpus build shares its memory budget. Only one of these is large at any time:
// documents in flight through the per-document stages, a sort buffer, a batch of texts for PII
// and decontamination or for verifying candidate pairs. The budget decides where chunks end
// and how runs are merged, never what the build outputs.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace trail::corpus {

struct Budget {
  uint64_t total;
  // Raw bytes read per chunk: the chunk holds them, the normalized text, rule values and the
  // encoding being written (about 4x), plus what the stages allocate per worker.
  uint64_t chunk() const { return std::max<uint64_t>(256 << 10, total / 10); }
  // A sorter is drained into the next one (hashes into duplicates, bands into pairs): two
  // sort buffers can be full at once.
  uint64_t sort() const { return total / 10; }
  size_t write_buffer() const {
    return static_cast<size_t>(std::clamp<uint64_t>(total / 64, 64 << 10, 1 << 20));
  }
  // Texts for PII and decontamination: each is copied up to twice while redacted and cut.
  uint64_t batch() const { return std::max<uint64_t>(256 << 10, total / 16); }
  // Shingle sets take ~8 bytes per word, about 1.5x the text.
  uint64_t verify_batch() const { return std::max<uint64_t>(256 << 10, total / 16); }
  // Merging document runs holds a read buffer and one record per run: at most this many runs
  // are merged at once (more are first merged in groups).
  size_t merge_fan_in() const {
    return static_cast<size_t>(std::max<uint64_t>(4, total / 16 / (64 << 10)));
  }
  size_t run_buffer(size_t runs) const {
    return static_cast<size_t>(
        std::clamp<uint64_t>(total / 32 / std::max<size_t>(1, runs), 16 << 10, 1 << 20));
  }
  int64_t sqlite_cache_kib() const { return static_cast<int64_t>(total / 32 / 1024); }
};

}  // namespace trail::corpus
