// The files a job in tasks exchanges, on arbitrary bytes: each phase reads what earlier tasks
// wrote, and a task's outputs may be damaged or forged (a manifest can be resealed by anyone).
// The input is read as every kind in turn — a document run (records of DecodeDocRecord), a
// token run (DecodeTokenDoc), a quarantine file (DecodeQuarantined), a near task's pairs file
// (ClustersFromPairs) and a sealed manifest — and each must be read or refused with
// trail::Error, never crash or allocate beyond the file's size.
#include "core/spill.h"
#include "core/task_files.h"
#include "corpus/pipeline/doc_record.h"
#include "corpus/dedup/near_dedup_runs.h"
#include "fuzz/fuzz_input.h"
#include "ingest/token_batches.h"

namespace {

template <class Decode>
void EachRecord(const std::string& path, Decode&& decode) {
  trail::fuzz::Refused([&] {
    trail::SpillReader r(path, 1 << 12);
    for (std::string rec; r.ReadRecord(rec);) decode(rec);
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trail;
  const std::string path = fuzz::WriteScratch("task-file", fuzz::AsText(data, size));
  EachRecord(path, [](const std::string& rec) {
    const corpus::DocRecord d = corpus::DecodeDocRecord(rec);
    if (d.key.size() + d.text.size() > rec.size())
      fuzz::Violated("a record decoded to more than it holds");
  });
  EachRecord(path, [](const std::string& rec) {
    const ingest::TokenDoc d = ingest::DecodeTokenDoc(rec);
    if (4 * d.ids.size() > rec.size())
      fuzz::Violated("a token run record decoded to more ids than it holds");
  });
  EachRecord(path, [](const std::string& rec) { (void)corpus::DecodeQuarantined(rec); });
  fuzz::Refused([&] {
    const corpus::NearDedupRunsResult r = corpus::ClustersFromPairs({path});
    if (r.verified > r.candidates || r.candidates > size / sizeof(corpus::CandidatePair)) {
      fuzz::Violated("more pairs than the file holds");
    }
    for (const auto& [doc, root] : r.root_of) {
      if (root > doc) fuzz::Violated("a cluster's root is not its smallest ordinal");
    }
  });
  (void)ReadSealedManifest(path);  // null when it is not one: never throws
  return 0;
}
