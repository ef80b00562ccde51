// Working on more data than memory holds: buffered append-only files, buffered sequential and
// positioned reads, and an external merge sort of fixed-size records under a byte budget. The
// corpus build spills documents, dedup keys and LSH band buckets through these, so its memory
// is bounded by its configured budget, not by the size of its input.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <queue>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace trail {

// Appends bytes through a buffer of a fixed size. Length-prefixed records: AppendRecord.
class SpillWriter {
 public:
  SpillWriter(const std::string& path, size_t buffer_bytes);
  ~SpillWriter();
  SpillWriter(const SpillWriter&) = delete;
  SpillWriter& operator=(const SpillWriter&) = delete;

  void Append(const void* data, size_t n);
  void AppendRecord(std::string_view record);  // u64 little-endian length, then the bytes
  uint64_t offset() const { return written_ + buf_.size(); }
  // Flushes and closes; with sync, also fsyncs (files a resumed build relies on).
  void Close(bool sync = false);

 private:
  void Flush();
  std::string path_;
  int fd_ = -1;
  std::string buf_;
  size_t cap_;
  uint64_t written_ = 0;
};

// Reads a file front to back through a fixed buffer.
class SpillReader {
 public:
  SpillReader(const std::string& path, size_t buffer_bytes);
  ~SpillReader();
  SpillReader(const SpillReader&) = delete;
  SpillReader& operator=(const SpillReader&) = delete;

  // Exactly n bytes, or false at a clean end of file (a partial read is an error).
  bool Read(void* out, size_t n);
  // A record's length is checked against the bytes left in the file before anything is
  // allocated: a damaged or forged length is an error, never a huge allocation.
  bool ReadRecord(std::string& record);
  uint64_t offset() const { return offset_; }

 private:
  bool Fill();
  std::string path_;
  int fd_ = -1;
  std::unique_ptr<char[]> buf_;  // not zeroed: filled before it is read
  size_t cap_, pos_ = 0, end_ = 0;
  uint64_t offset_ = 0, size_ = 0;  // size_: the file's, when opened
};

// Positioned reads (pread), safe from several threads at once.
class PositionalReader {
 public:
  explicit PositionalReader(const std::string& path);
  ~PositionalReader();
  PositionalReader(const PositionalReader&) = delete;
  PositionalReader& operator=(const PositionalReader&) = delete;
  void ReadAt(uint64_t offset, void* out, size_t n) const;
  // The record there; its length is checked against the file's size first.
  std::string ReadRecordAt(uint64_t offset) const;

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;  // the file's, when opened
};

// Sorts trivially copyable records by `Less` holding at most `budget_bytes` of them: a full
// buffer is sorted and written as a run; Drain merges the runs (and what is still buffered) in
// order. Equal records come out in the order they were added.
template <class T, class Less = std::less<T>>
class ExternalSorter {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  ExternalSorter(std::string dir, std::string name, size_t budget_bytes)
      : dir_(std::move(dir)),
        name_(std::move(name)),
        cap_(std::max<size_t>(1024, budget_bytes / sizeof(T))) {}
  ~ExternalSorter() {
    readers_.clear();
    for (const std::string& r : runs_) std::remove(r.c_str());
  }

  void Add(const T& x) {
    if (buf_.size() == cap_) Spill();
    buf_.push_back(x);
  }
  uint64_t size() const { return added_ + buf_.size(); }
  uint64_t spilled_bytes() const { return spilled_; }

  // Ends adding; Next then yields every record in order.
  void Finish() {
    if (runs_.empty()) {
      std::stable_sort(buf_.begin(), buf_.end(), Less());
      pos_ = 0;
      return;
    }
    Spill();
    std::vector<T>().swap(buf_);
    // One reader per run; their buffers share the budget.
    const size_t per_run = std::clamp<size_t>(cap_ * sizeof(T) / runs_.size(), 4096, 1 << 20);
    for (const std::string& r : runs_)
      readers_.push_back(std::make_unique<SpillReader>(r, per_run));
    for (size_t i = 0; i < readers_.size(); ++i) {
      T x;
      if (readers_[i]->Read(&x, sizeof(T))) heap_.push({x, i});
    }
  }
  bool Next(T& out) {
    if (readers_.empty()) {
      if (pos_ >= buf_.size()) return false;
      out = buf_[pos_++];
      return true;
    }
    if (heap_.empty()) {  // all merged: the runs go
      readers_.clear();
      for (const std::string& r : runs_) std::remove(r.c_str());
      runs_.clear();
      return false;
    }
    const Head h = heap_.top();
    heap_.pop();
    out = h.value;
    T x;
    if (readers_[h.run]->Read(&x, sizeof(T))) heap_.push({x, h.run});
    return true;
  }
  // Finish, then fn(const T&) for every record in order.
  template <class Fn>
  void Drain(Fn&& fn) {
    Finish();
    for (T x; Next(x);) fn(x);
  }

 private:
  void Spill() {
    if (buf_.empty()) return;
    std::stable_sort(buf_.begin(), buf_.end(), Less());
    runs_.push_back(dir_ + "/" + name_ + "-" + std::to_string(runs_.size()) + ".run");
    SpillWriter w(runs_.back(), 1 << 20);
    w.Append(buf_.data(), buf_.size() * sizeof(T));
    w.Close();
    spilled_ += buf_.size() * sizeof(T);
    added_ += buf_.size();
    buf_.clear();
  }

  struct Head {
    T value;
    size_t run;
  };
  struct Later {
    bool operator()(const Head& a, const Head& b) const {
      if (Less()(b.value, a.value)) return true;
      if (Less()(a.value, b.value)) return false;
      return a.run > b.run;  // runs were written in order: equal records keep it
    }
  };

  std::string dir_, name_;
  size_t cap_;
  std::vector<T> buf_;
  size_t pos_ = 0;
  std::vector<std::string> runs_;
  std::vector<std::unique_ptr<SpillReader>> readers_;
  std::priority_queue<Head, std::vector<Head>, Later> heap_;
  uint64_t added_ = 0, spilled_ = 0;
};

}  // namespace trail
