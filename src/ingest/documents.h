// Reading documents from JSONL in the dolma schema ({"id": ..., "text": ..., "source": ...,
// other fields ignored}), plain or compressed (.gz with zlib, .zst with zstd, by suffix).
// A malformed line is an error naming the file and line.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace trail::ingest {

struct Document {
  std::string id, text, source;
  uint64_t line = 0;  // 1-based line in its file
};

// Bytes of a file, decompressed as its suffix says.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual size_t Read(char* buf, size_t n) = 0;  // 0 at the end
};
std::unique_ptr<ByteSource> OpenByteSource(const std::string& path);

// Parses one JSONL record; errors name path:line.
void ParseDocument(const std::string& record, const std::string& path, uint64_t line,
                   Document& doc);

class DocumentReader {
 public:
  explicit DocumentReader(std::string path);
  // Reads the next document; false at the end of the file. Blank lines are skipped.
  bool Next(Document& doc);
  // The next non-blank line as it is (to parse elsewhere, e.g. on worker threads).
  bool NextRecord(std::string& text, uint64_t& line);
  // Skips lines up to and including line `n` (to resume after a known position).
  void SkipToLine(uint64_t n);
  uint64_t line() const { return line_; }
  const std::string& path() const { return path_; }

 private:
  bool NextLine(std::string& line);

  std::string path_;
  std::unique_ptr<ByteSource> src_;
  std::string buf_;
  size_t pos_ = 0;
  bool eof_ = false;
  uint64_t line_ = 0;
};

// How ReadDocumentTexts reads a file: dolma JSONL (each record's "text"), a whole file as one
// document, or by suffix (".jsonl", ".jsonl.gz", ".jsonl.zst" are JSONL, anything else text).
enum class DocumentFormat { kBySuffix, kJsonl, kText };
DocumentFormat ParseDocumentFormat(const std::string& name);  // auto | jsonl | text
bool HasJsonlSuffix(const std::string& path);

// The texts of every document of the files, in order (e.g. a tokenizer's training corpus).
std::vector<std::string> ReadDocumentTexts(const std::vector<std::string>& files,
                                           DocumentFormat format);

}  // namespace trail::ingest
