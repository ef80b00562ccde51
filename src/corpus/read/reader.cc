#include "corpus/read/reader.h"

#include <simdjson.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>

#include "core/error.h"
#include "core/hash.h"
#include "core/utf8.h"
#include "corpus/read/extract.h"
#include "ingest/documents.h"

namespace trail::corpus {
namespace {

// Buffered reading of a (decompressed) file that tracks byte offsets and turns a read error
// (corrupt or truncated compressed data) into a message instead of an exception.
class Stream {
 public:
  explicit Stream(const std::string& path) : src_(ingest::OpenByteSource(path)) {}

  uint64_t offset() const { return base_ + pos_; }
  const std::string& error() const { return error_; }

  // The next line (with its '\n', if any) into `line`, at most `max` bytes of it kept; a longer
  // line is consumed to its end with *length and *sha over all of it. False at the end.
  bool ReadLine(std::string& line, uint64_t max, uint64_t* length, Sha256Hasher* sha) {
    line.clear();
    *length = 0;
    bool any = false;
    for (;;) {
      if (pos_ == buf_.size() && !Fill()) return any;
      any = true;
      const size_t nl = buf_.find('\n', pos_);
      const size_t end = nl == std::string::npos ? buf_.size() : nl + 1;
      const size_t n = end - pos_;
      if (sha) sha->Update(buf_.data() + pos_, n);
      if (line.size() < max) line.append(buf_, pos_, std::min<uint64_t>(n, max - line.size()));
      *length += n;
      pos_ = end;
      if (nl != std::string::npos) return true;
    }
  }

  // Exactly n bytes into `out` (kept only when n <= max; hashed either way). False when the
  // file ends (or fails) first; *got says how many were read.
  bool ReadExact(uint64_t n, uint64_t max, std::string& out, Sha256Hasher& sha, uint64_t* got) {
    out.clear();
    *got = 0;
    while (*got < n) {
      if (pos_ == buf_.size() && !Fill()) return false;
      const size_t take = static_cast<size_t>(std::min<uint64_t>(n - *got, buf_.size() - pos_));
      sha.Update(buf_.data() + pos_, take);
      if (n <= max) out.append(buf_, pos_, take);
      pos_ += take;
      *got += take;
    }
    return true;
  }

 private:
  bool Fill() {
    if (eof_) return false;
    base_ += buf_.size();
    buf_.resize(1 << 20);
    pos_ = 0;
    size_t got = 0;
    try {
      got = src_->Read(buf_.data(), buf_.size());
    } catch (const Error& e) {
      error_ = e.what();
      got = 0;
    }
    buf_.resize(got);
    if (got == 0) eof_ = true;
    return got > 0;
  }

  std::unique_ptr<ingest::ByteSource> src_;
  std::string buf_, error_;
  size_t pos_ = 0;
  uint64_t base_ = 0;
  bool eof_ = false;
};

void StripNewline(std::string& s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
}

bool Blank(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isspace(c); });
}

Quarantined Bad(const std::string& file, uint64_t offset, uint64_t line, uint64_t bytes,
                std::string reason, std::string detail, const std::string& held, std::string sha) {
  return {
      file,          offset, line, bytes, std::move(reason), std::move(detail), SampleBytes(held),
      std::move(sha)};
}

}  // namespace

std::string SampleBytes(const std::string& bytes, size_t max_bytes) {
  std::string out;
  size_t i = 0;
  const size_t n = std::min(bytes.size(), max_bytes);
  out.reserve(n);
  auto escape = [&](unsigned char c) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\x%02X", c);
    out += buf;
  };
  while (i < n) {
    const size_t ok = ValidUtf8Prefix(std::string_view(bytes).substr(i, n - i));
    // The valid stretch in runs between control characters (other than \n and \t).
    size_t run = i;
    for (size_t j = i; j < i + ok; ++j) {
      const unsigned char c = static_cast<unsigned char>(bytes[j]);
      if (c >= 0x20 || c == '\n' || c == '\t') continue;
      out.append(bytes, run, j - run);
      escape(c);
      run = j + 1;
    }
    out.append(bytes, run, i + ok - run);
    i += ok;
    if (i < n) escape(static_cast<unsigned char>(bytes[i++]));
  }
  return out;
}

void ReadJsonlRecords(const std::string& path, uint64_t max_record_bytes, const RecordFn& on_record,
                      const QuarantineFn& on_bad) {
  Stream in(path);
  simdjson::dom::parser parser;
  std::string line;
  uint64_t number = 0;
  for (;;) {
    const uint64_t offset = in.offset();
    uint64_t length = 0;
    Sha256Hasher sha;
    if (!in.ReadLine(line, max_record_bytes, &length, &sha)) break;
    ++number;
    const std::string digest = ToHex(sha.Finish());
    if (length > max_record_bytes) {
      on_bad(Bad(path, offset, number, length, "record_too_large",
                 "line of " + std::to_string(length) + " bytes exceeds max_record_bytes " +
                     std::to_string(max_record_bytes),
                 line, digest));
      continue;
    }
    const bool complete = !line.empty() && line.back() == '\n';
    if (!complete && !in.error().empty()) {  // the file broke off inside this line
      on_bad(Bad(path, offset, number, length, "unreadable", in.error(), line, digest));
      return;
    }
    StripNewline(line);
    if (Blank(line)) continue;
    simdjson::dom::element doc;
    const simdjson::padded_string padded(line);
    const auto err = parser.parse(padded).get(doc);
    if (err) {
      on_bad(Bad(path, offset, number, length,
                 err == simdjson::UTF8_ERROR ? "invalid_utf8" : "malformed_json",
                 simdjson::error_message(err), line, digest));
      continue;
    }
    simdjson::dom::object obj;
    if (doc.get_object().get(obj)) {
      on_bad(
          Bad(path, offset, number, length, "malformed_json", "not a JSON object", line, digest));
      continue;
    }
    RawRecord rec;
    rec.offset = offset, rec.line = number;
    std::string problem, reason = "missing_field";
    simdjson::dom::element id, text;
    if (obj["id"].get(id)) {
      problem = "no \"id\"";
    } else if (id.is_string()) {
      rec.id = std::string(id.get_string().value());
    } else if (id.is_int64() || id.is_uint64()) {
      rec.id = id.is_int64() ? std::to_string(int64_t(id)) : std::to_string(uint64_t(id));
    } else {
      problem = "\"id\" is neither a string nor an integer", reason = "bad_field";
    }
    if (problem.empty()) {
      if (obj["text"].get(text)) {
        problem = "no \"text\"";
      } else if (!text.is_string()) {
        problem = "\"text\" is not a string", reason = "bad_field";
      } else {
        rec.text = std::string(text.get_string().value());
      }
    }
    if (problem.empty() && rec.id.empty()) problem = "\"id\" is empty", reason = "bad_field";
    if (!problem.empty()) {
      on_bad(Bad(path, offset, number, length, reason, problem, line, digest));
      continue;
    }
    on_record(std::move(rec));
  }
  if (!in.error().empty()) {  // broke off at a line boundary: the rest could not be read
    on_bad(Bad(path, in.offset(), number + 1, 0, "unreadable", in.error(), "", ""));
  }
}

namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// "Name: value" lines up to a blank line, names lower-cased. False if the block never ends.
bool ParseHeaders(const std::string& block, size_t& pos, std::map<std::string, std::string>& out) {
  while (pos < block.size()) {
    size_t nl = block.find('\n', pos);
    if (nl == std::string::npos) return false;
    std::string line = block.substr(pos, nl - pos);
    pos = nl + 1;
    StripNewline(line);
    if (line.empty()) return true;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    out[Lower(line.substr(0, colon))] = value;
  }
  return false;
}

// Chunked transfer coding -> body; false if malformed.
bool Dechunk(const std::string& in, std::string& out) {
  out.clear();
  size_t pos = 0;
  for (;;) {
    const size_t nl = in.find('\n', pos);
    if (nl == std::string::npos) return false;
    const unsigned long long n = std::strtoull(in.c_str() + pos, nullptr, 16);
    pos = nl + 1;
    if (n == 0) return true;
    if (pos + n > in.size()) return false;
    out.append(in, pos, n);
    pos += n;
    if (in.compare(pos, 2, "\r\n") == 0)
      pos += 2;
    else if (in.compare(pos, 1, "\n") == 0)
      pos += 1;
  }
}

// The body of a WARC response block (an HTTP response: status line, headers, body), de-chunked;
// skip for a response that is not HTML; reason and detail when it cannot be used.
struct HttpBody {
  std::string body;
  bool skip = false;
  std::string reason, detail;
};

HttpBody HtmlOfResponse(const std::string& block) {
  HttpBody out;
  std::map<std::string, std::string> http;
  size_t bpos = block.find('\n');
  if (block.rfind("HTTP/", 0) != 0 || bpos == std::string::npos ||
      !ParseHeaders(block, ++bpos, http)) {
    out.reason = "warc_http", out.detail = "the block is not an HTTP response";
    return out;
  }
  const std::string http_type = Lower(http.count("content-type") ? http["content-type"] : "");
  if (!http_type.empty() && http_type.find("html") == std::string::npos) {
    out.skip = true;
    return out;
  }
  out.body = block.substr(bpos);
  if (Lower(http.count("transfer-encoding") ? http["transfer-encoding"] : "") == "chunked") {
    std::string plain;
    if (!Dechunk(out.body, plain)) {
      out.reason = "warc_http", out.detail = "malformed chunked body";
      return out;
    }
    out.body = std::move(plain);
  }
  const std::string enc = Lower(http.count("content-encoding") ? http["content-encoding"] : "");
  if (!enc.empty() && enc != "identity") {
    out.reason = "unsupported_encoding", out.detail = "Content-Encoding '" + enc + "'";
  }
  return out;
}

}  // namespace

void ReadWarcRecords(const std::string& path, uint64_t max_record_bytes, const RecordFn& on_record,
                     const QuarantineFn& on_bad, uint64_t* skipped, bool extract_html) {
  Stream in(path);
  constexpr uint64_t kMaxHeaderLine = 1 << 16;
  std::string line, pending, block;
  bool have_pending = false;
  uint64_t pending_offset = 0;
  // Skips lines up to the next "WARC/1." line (kept as pending); returns the bytes skipped.
  auto resync = [&]() {
    uint64_t bytes = 0, length = 0;
    while (in.ReadLine(line, kMaxHeaderLine, &length, nullptr)) {
      if (line.rfind("WARC/1.", 0) == 0) {
        pending = line, pending_offset = in.offset() - length, have_pending = true;
        break;
      }
      bytes += length;
    }
    return bytes;
  };
  for (;;) {
    uint64_t offset = in.offset(), length = 0;
    if (have_pending) {
      line = pending, offset = pending_offset, have_pending = false;
    } else if (!in.ReadLine(line, kMaxHeaderLine, &length, nullptr)) {
      break;
    }
    if (Blank(line)) continue;
    if (line.rfind("WARC/1.", 0) != 0) {
      // Not a record start: quarantine everything up to the next "WARC/" line.
      const std::string first = line;
      const uint64_t bytes = first.size() + resync();
      on_bad(Bad(path, offset, 0, bytes, "warc_header", "expected a WARC/1.x version line", first,
                 ""));
      continue;
    }
    // Header lines up to the blank line.
    std::string headers = line;
    bool ended = false;
    while (in.ReadLine(line, kMaxHeaderLine, &length, nullptr)) {
      headers += line;
      if (Blank(line)) {
        ended = true;
        break;
      }
    }
    std::map<std::string, std::string> h;
    size_t hpos = headers.find('\n') + 1;
    if (!ended || !ParseHeaders(headers, hpos, h)) {
      on_bad(Bad(path, offset, 0, headers.size(), "warc_truncated",
                 in.error().empty() ? "the file ends inside a record's headers" : in.error(),
                 headers, ""));
      break;
    }
    const std::string cl = h.count("content-length") ? h["content-length"] : "";
    // At most 18 digits: a larger length cannot be a real record (and would overflow).
    if (cl.empty() || cl.size() > 18 || cl.find_first_not_of("0123456789") != std::string::npos) {
      const uint64_t bytes = headers.size() + resync();  // the block cannot be delimited
      on_bad(Bad(path, offset, 0, bytes, "warc_header",
                 "missing or invalid Content-Length '" + cl + "'", headers, ""));
      continue;
    }
    const uint64_t n = std::stoull(cl);
    Sha256Hasher sha;
    sha.Update(headers.data(), headers.size());
    uint64_t got = 0;
    const bool full = in.ReadExact(n, max_record_bytes, block, sha, &got);
    const std::string digest = ToHex(sha.Finish());
    if (!full) {
      on_bad(Bad(path, offset, 0, headers.size() + got, "warc_truncated",
                 "Content-Length " + cl + " but only " + std::to_string(got) + " bytes follow" +
                     (in.error().empty() ? "" : " (" + in.error() + ")"),
                 headers, digest));
      break;
    }
    if (n > max_record_bytes) {
      on_bad(Bad(path, offset, 0, headers.size() + n, "record_too_large",
                 "block of " + cl + " bytes exceeds max_record_bytes", headers, digest));
      continue;
    }
    const std::string type = Lower(h.count("warc-type") ? h["warc-type"] : "");
    const std::string ctype = Lower(h.count("content-type") ? h["content-type"] : "");
    if (type != "response" || ctype.find("application/http") == std::string::npos) {
      ++*skipped;
      continue;
    }
    HttpBody http = HtmlOfResponse(block);
    if (http.skip) {
      ++*skipped;
      continue;
    }
    if (!http.reason.empty()) {
      on_bad(Bad(path, offset, 0, headers.size() + n, http.reason, http.detail, block, digest));
      continue;
    }
    std::string body = std::move(http.body);
    RawRecord rec;
    rec.offset = offset;
    std::string id = h.count("warc-record-id") ? h["warc-record-id"] : "";
    if (id.size() >= 2 && id.front() == '<' && id.back() == '>') id = id.substr(1, id.size() - 2);
    rec.id = !id.empty() ? id : (h.count("warc-target-uri") ? h["warc-target-uri"] : "");
    rec.text = extract_html ? ExtractHtml(body).text : std::move(body);
    on_record(std::move(rec));
  }
}

}  // namespace trail::corpus
