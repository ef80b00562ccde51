// One document as the per-document stages (read, normalize, language, quality) leave it: the
// unit the corpus build spills to disk, sorts by key and streams through the cross-document
// stages. The encoding is private to a build (its work directory), not an exchange format.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "corpus/pipeline/drop_reason.h"
#include "corpus/langid/langid.h"
#include "corpus/read/normalize.h"
#include "corpus/read/reader.h"

namespace trail::corpus {

struct DocRecord {
  std::string key;            // "source/id": unique after the read stage
  uint32_t source_index = 0;  // into the config's sources
  uint32_t file_index = 0;    // into the build's list of input files
  uint64_t offset = 0, raw_bytes = 0;
  std::string raw_sha256;    // of the raw text (hex), for a quarantined repeated key
  std::string raw_sample;    // SampleBytes(raw), likewise
  std::string text;          // normalized text; empty once dropped
  std::string content_hash;  // exact-dedup key of the normalized text
  Drop drop;                 // the verdict (kept by default)
  std::string drop_stage;    // the stage that dropped it ("" while kept)
  NormalizeStats norm;
  LanguageGuess lang;
  std::string rules_json;       // the quality rules' [[value, pass], ...] ("" if not run)
  std::vector<uint64_t> bands;  // LSH band hashes of a kept text (near_dedup.h), else empty
};

// Appends the record's encoding to *out.
void EncodeDocRecord(const DocRecord& d, std::string* out);
// Throws trail::Error on a record that does not decode exactly.
DocRecord DecodeDocRecord(std::string_view bytes);

// A quarantined record in the same encoding (a read task's quarantine.bin): every byte of its
// strings kept, so the final phase lists it exactly as a one-process build would.
void EncodeQuarantined(const Quarantined& q, std::string* out);
Quarantined DecodeQuarantined(std::string_view bytes);

}  // namespace trail::corpus
