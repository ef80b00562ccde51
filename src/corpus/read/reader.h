// Reading a source's raw records without ever stopping on a bad one: JSONL in the dolma schema
// (parsed with simdjson; plain, .gz or .zst) and WARC (.warc, .warc.gz) with HTML responses.
// Every record is either handed on as a document or *quarantined* with its reason — the file,
// byte offset, size, a sample and the SHA-256 of its bytes — so nothing is lost silently and
// the build continues.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace trail::corpus {

struct RawRecord {
  std::string id;       // the record's own id (JSONL "id", WARC-Record-ID)
  std::string text;     // the document text (HTML already reduced to its main text for WARC)
  uint64_t offset = 0;  // byte offset of the record in the (decompressed) file
  uint64_t line = 0;    // JSONL: 1-based line
};

struct Quarantined {
  std::string file;
  uint64_t offset = 0, line = 0, bytes = 0;
  // malformed_json, invalid_utf8, missing_field, bad_field, record_too_large, unreadable,
  // warc_header, warc_truncated, warc_http, unsupported_encoding
  std::string reason;
  std::string detail;
  std::string sample;  // the first bytes, invalid UTF-8 escaped as \xNN
  std::string sha256;  // of every byte of the record (empty when it could not be read)
};

using RecordFn = std::function<void(RawRecord&&)>;
using QuarantineFn = std::function<void(Quarantined&&)>;

// Lines longer than max_record_bytes are quarantined without being held in memory.
void ReadJsonlRecords(const std::string& path, uint64_t max_record_bytes, const RecordFn& on_record,
                      const QuarantineFn& on_bad);

// WARC/1.0 and 1.1: "response" records whose block is an HTTP response with an HTML body become
// documents (text extracted as for html sources, or the HTML itself with extract_html false,
// for the caller to extract on its worker threads); other record types are skipped and counted
// in *skipped. A corrupt record is quarantined and reading resumes at the next "WARC/" line.
void ReadWarcRecords(const std::string& path, uint64_t max_record_bytes, const RecordFn& on_record,
                     const QuarantineFn& on_bad, uint64_t* skipped, bool extract_html = true);

// Printable sample of bytes: valid UTF-8 kept, other bytes as \xNN, at most max_bytes input.
std::string SampleBytes(const std::string& bytes, size_t max_bytes = 160);

}  // namespace trail::corpus
