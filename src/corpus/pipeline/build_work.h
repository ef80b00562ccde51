// The corpus build's work directory, <out>/.work: document runs (the resume checkpoints) and
// scratch files. It belongs to one build — the same config text, stage versions, memory budget
// (which decides where chunks end) and input bytes, hashed into its fingerprint — and any other
// build clears it. A document run docs-NNNNN.run is reused only when its .meta names this
// fingerprint, its chunk number and document count, and the run's bytes still hash to the
// SHA-256 the meta recorded.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "corpus/pipeline/config.h"
#include "corpus/pipeline/doc_stages.h"

namespace trail::corpus {

// The versions of the stages' behaviour, recorded in the lineage; a change invalidates resumes.
// read2: HTML is extracted on the workers, so chunks (cut by raw bytes) end elsewhere than
// read1's; near2: band hashes are computed per document and kept in the document runs. The
// documents' verdicts and texts are unchanged.
inline constexpr const char* kStageVersions =
    "read2 trail-html-1 normalize1 language1 quality1 exact1 near2 pii1 decontam1 split1";

std::string InputFingerprint(const CorpusConfig& cfg, uint64_t budget_bytes);

// Removes an earlier build's outputs (report.json first, so a failed build leaves none; shards;
// quarantine.jsonl), clears a work directory of another fingerprint, and removes the scratch
// files of an interrupted build (everything but finished document runs). Returns the work
// directory's path.
std::string PrepareWorkDirectory(const std::string& out_dir, const std::string& fingerprint);
// The part of that for any directory of document runs (also a read task's,
// pipeline/task_records.h): clears it when it holds another fingerprint, else removes everything
// but finished runs.
void PrepareRunDirectory(const std::string& dir, const std::string& fingerprint);

std::string DocRunPath(const std::string& work, size_t chunk);
bool DocRunIsValid(const std::string& run, const std::string& fingerprint, size_t chunk,
                   size_t documents);
// Writes the chunk as a document run in key order (a repeated key keeps its read order), with
// its meta; texts of dropped documents are not written. The run is not fsynced: its SHA-256 in
// the meta is checked before any reuse, so a run a power loss tore is recomputed, never trusted.
void WriteDocRun(std::vector<PendingDoc>& chunk, const std::string& run,
                 const std::string& fingerprint, size_t chunk_index, size_t write_buffer);

}  // namespace trail::corpus
