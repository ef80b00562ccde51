// The read stage of the corpus build: a source's files in order, each record as a raw
// document with its key. Keys are "<source>/<id>" for JSONL and WARC records and
// "<source>/<path below the source's common directory>[:<8-digit fortune index>]" for whole
// files, HTML pages and fortune records. Bad records are quarantined, never fatal; a missing
// file is a configuration error and is.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "core/task_files.h"
#include "corpus/pipeline/config.h"
#include "corpus/read/reader.h"

namespace trail::corpus {

struct RawDoc {
  std::string key;
  uint32_t file_index;  // into the build's list of every source's files, in config order
  uint64_t offset;      // of the record in its file
  std::string raw;
  bool html = false;  // raw is HTML: the per-document stages extract its text first
};

// Reads the files of source `index` (whose first file has build file index `first_file`) that
// lie in `range`; keys are the same as when every file is read. on_file_done gets each file's
// size after its last record; warc_skipped counts WARC records of other types.
void ReadSource(const CorpusConfig& cfg, size_t index, uint32_t first_file, FileRange range,
                const std::function<void(RawDoc&&)>& on_doc, const QuarantineFn& on_bad,
                uint64_t& warc_skipped, const std::function<void(uint64_t)>& on_file_done);

// i as eight decimal digits ("00000042"): fortune indices, document runs, shard numbers.
std::string Padded(uint64_t i);

}  // namespace trail::corpus
