// A corpus build's document runs — each a file of DocRecords sorted by key, the runs numbered
// in the order their documents were read — merged back into one stream in key order.
#pragma once

#include <cstdint>
#include <memory>
#include <queue>
#include <string>
#include <vector>

#include "corpus/pipeline/doc_record.h"
#include "core/spill.h"

namespace trail::corpus {

// Where each document's record is: ordinal -> run, offset (and its text size, to size batches).
struct Location {
  uint64_t offset;
  uint32_t run;
  uint32_t text_bytes;  // saturated at 4 GiB - 1
};
static_assert(sizeof(Location) == 16);

// A document (its ordinal in key order) and its exact-dup survivor; files of these are sorted
// by ordinal.
struct ExactDup {
  uint32_t ord, survivor;
  bool operator<(const ExactDup& o) const { return ord < o.ord; }
};

class DocRunMerge {
 public:
  // Each run is read through its own buffer of buffer_bytes.
  DocRunMerge(const std::vector<std::string>& runs, size_t buffer_bytes);

  struct Item {
    DocRecord doc;
    uint32_t run = 0;
    uint64_t offset = 0;      // of the record in its run (PositionalReader::ReadRecordAt)
    bool repeated = false;    // the key was yielded before: the first read stays
    uint32_t first_file = 0;  // when repeated: the file the kept record came from
  };
  // The next record in (key, read) order; false at the end.
  bool Next(Item& item);

 private:
  struct Head {
    std::string key;
    uint32_t run;
    uint64_t offset;
    std::string bytes;
  };
  struct Later {
    bool operator()(const Head& a, const Head& b) const {
      return a.key != b.key ? a.key > b.key : a.run > b.run;
    }
  };
  void Pull(uint32_t run);

  std::vector<std::unique_ptr<SpillReader>> readers_;
  std::priority_queue<Head, std::vector<Head>, Later> heap_;
  std::string last_key_;
  uint32_t last_file_ = 0;
  bool any_ = false;
};

}  // namespace trail::corpus
