#include "corpus/pipeline/doc_runs.h"

#include "core/le_bytes.h"

namespace trail::corpus {

DocRunMerge::DocRunMerge(const std::vector<std::string>& runs, size_t buffer_bytes) {
  for (const std::string& r : runs)
    readers_.push_back(std::make_unique<SpillReader>(r, buffer_bytes));
  for (uint32_t i = 0; i < readers_.size(); ++i) Pull(i);
}

void DocRunMerge::Pull(uint32_t run) {
  Head h;
  h.run = run;
  h.offset = readers_[run]->offset();
  if (!readers_[run]->ReadRecord(h.bytes)) return;
  // The key is the record's first field: length, then bytes.
  const uint64_t n =
      h.bytes.size() >= 8 ? GetU64(reinterpret_cast<const uint8_t*>(h.bytes.data())) : 0;
  h.key = h.bytes.substr(8, n);
  heap_.push(std::move(h));
}

bool DocRunMerge::Next(Item& item) {
  if (heap_.empty()) return false;
  Head h = std::move(const_cast<Head&>(heap_.top()));
  heap_.pop();
  Pull(h.run);
  item.doc = DecodeDocRecord(h.bytes);
  item.run = h.run;
  item.offset = h.offset;
  item.repeated = any_ && h.key == last_key_;
  item.first_file = last_file_;
  if (!item.repeated) {
    last_key_ = std::move(h.key);
    last_file_ = item.doc.file_index;
    any_ = true;
  }
  return true;
}

}  // namespace trail::corpus
