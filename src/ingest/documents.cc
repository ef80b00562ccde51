#include "ingest/documents.h"

#include <zlib.h>
#include <zstd.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/error.h"
#include "core/file_util.h"

namespace trail::ingest {
namespace {

bool EndsWith(const std::string& s, const char* suffix) {
  const std::string x(suffix);
  return s.size() >= x.size() && s.compare(s.size() - x.size(), x.size(), x) == 0;
}

class PlainSource : public ByteSource {
 public:
  explicit PlainSource(const std::string& path) : f_(std::fopen(path.c_str(), "rb")), path_(path) {
    TRAIL_CHECK(f_ != nullptr, path, ": cannot open");
  }
  ~PlainSource() override { std::fclose(f_); }
  size_t Read(char* buf, size_t n) override {
    const size_t got = std::fread(buf, 1, n, f_);
    TRAIL_CHECK(got > 0 || !std::ferror(f_), path_, ": read error");
    return got;
  }

 private:
  FILE* f_;
  std::string path_;
};

class GzipSource : public ByteSource {
 public:
  explicit GzipSource(const std::string& path) : f_(gzopen(path.c_str(), "rb")), path_(path) {
    TRAIL_CHECK(f_ != nullptr, path, ": cannot open");
    gzbuffer(f_, 1 << 17);
  }
  ~GzipSource() override { gzclose(f_); }
  size_t Read(char* buf, size_t n) override {
    const int got = gzread(f_, buf, static_cast<unsigned>(n));
    if (got > 0) return static_cast<size_t>(got);  // an error after these bytes shows next call
    int err = Z_OK;
    const char* msg = gzerror(f_, &err);
    TRAIL_CHECK(got == 0 && (err == Z_OK || err == Z_STREAM_END), path_,
                ": corrupt or truncated gzip data: ", msg);
    return 0;
  }

 private:
  gzFile f_;
  std::string path_;
};

class ZstdSource : public ByteSource {
 public:
  explicit ZstdSource(const std::string& path)
      : raw_(path), ctx_(ZSTD_createDStream()), in_buf_(ZSTD_DStreamInSize()), path_(path) {
    ZSTD_initDStream(ctx_);
  }
  ~ZstdSource() override { ZSTD_freeDStream(ctx_); }
  size_t Read(char* buf, size_t n) override {
    ZSTD_outBuffer out{buf, n, 0};
    while (out.pos == 0) {
      if (in_.pos == in_.size) {
        const size_t got = raw_.Read(in_buf_.data(), in_buf_.size());
        if (got == 0) {
          TRAIL_CHECK(last_ret_ == 0, path_, ": truncated zstd data");
          return 0;
        }
        in_ = {in_buf_.data(), got, 0};
      }
      last_ret_ = ZSTD_decompressStream(ctx_, &out, &in_);
      TRAIL_CHECK(!ZSTD_isError(last_ret_), path_,
                  ": corrupt zstd data: ", ZSTD_getErrorName(last_ret_));
    }
    return out.pos;
  }

 private:
  PlainSource raw_;
  ZSTD_DStream* ctx_;
  std::vector<char> in_buf_;
  ZSTD_inBuffer in_{nullptr, 0, 0};
  size_t last_ret_ = 0;
  std::string path_;
};

}  // namespace

std::unique_ptr<ByteSource> OpenByteSource(const std::string& path) {
  if (EndsWith(path, ".gz")) return std::make_unique<GzipSource>(path);
  if (EndsWith(path, ".zst")) return std::make_unique<ZstdSource>(path);
  return std::make_unique<PlainSource>(path);
}

DocumentReader::DocumentReader(std::string path)
    : path_(std::move(path)), src_(OpenByteSource(path_)) {}

bool DocumentReader::NextLine(std::string& line) {
  line.clear();
  while (true) {
    const size_t nl = buf_.find('\n', pos_);
    if (nl != std::string::npos) {
      line.append(buf_, pos_, nl - pos_);
      pos_ = nl + 1;
      ++line_;
      return true;
    }
    line.append(buf_, pos_, std::string::npos);
    buf_.clear();
    pos_ = 0;
    if (eof_) {
      if (line.empty()) return false;
      ++line_;
      return true;
    }
    buf_.resize(1 << 20);
    const size_t got = src_->Read(buf_.data(), buf_.size());
    buf_.resize(got);
    if (got == 0) eof_ = true;
  }
}

void DocumentReader::SkipToLine(uint64_t n) {
  std::string line;
  while (line_ < n && NextLine(line)) {
  }
  TRAIL_CHECK(line_ == n, path_, ": has only ", line_, " lines, cannot resume after line ", n);
}

bool DocumentReader::NextRecord(std::string& text, uint64_t& line) {
  while (NextLine(text)) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    line = line_;
    return true;
  }
  return false;
}

bool DocumentReader::Next(Document& doc) {
  std::string record;
  uint64_t line = 0;
  if (!NextRecord(record, line)) return false;
  ParseDocument(record, path_, line, doc);
  return true;
}

void ParseDocument(const std::string& record, const std::string& path, uint64_t line,
                   Document& doc) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(record);
  } catch (const nlohmann::json::exception& e) {
    TRAIL_FAIL(path, ":", line, ": not valid JSON: ", e.what());
  }
  TRAIL_CHECK(j.is_object(), path, ":", line, ": a document is a JSON object");
  const auto text = j.find("text");
  TRAIL_CHECK(text != j.end() && text->is_string(), path, ":", line,
              ": missing string field 'text'");
  const auto id = j.find("id");
  TRAIL_CHECK(id != j.end() && (id->is_string() || id->is_number_integer()), path, ":", line,
              ": missing field 'id' (string or integer)");
  doc.id = id->is_string() ? id->get<std::string>() : std::to_string(id->get<int64_t>());
  doc.text = text->get<std::string>();
  const auto source = j.find("source");
  doc.source = source != j.end() && source->is_string() ? source->get<std::string>() : "";
  doc.line = line;
}

DocumentFormat ParseDocumentFormat(const std::string& name) {
  if (name == "auto") return DocumentFormat::kBySuffix;
  if (name == "jsonl") return DocumentFormat::kJsonl;
  TRAIL_CHECK(name == "text", "document format '", name, "' is not auto, jsonl or text");
  return DocumentFormat::kText;
}

bool HasJsonlSuffix(const std::string& path) {
  for (const char* suffix : {".jsonl", ".jsonl.gz", ".jsonl.zst"}) {
    const std::string_view sv(suffix);
    if (path.size() >= sv.size() && path.compare(path.size() - sv.size(), sv.size(), sv) == 0) {
      return true;
    }
  }
  return false;
}

std::vector<std::string> ReadDocumentTexts(const std::vector<std::string>& files,
                                           DocumentFormat format) {
  std::vector<std::string> docs;
  for (const std::string& f : files) {
    const bool jsonl = format == DocumentFormat::kJsonl ||
                       (format == DocumentFormat::kBySuffix && HasJsonlSuffix(f));
    if (jsonl) {
      DocumentReader reader(f);
      Document d;
      while (reader.Next(d)) docs.push_back(std::move(d.text));
    } else {
      docs.push_back(ReadFileToString(f));
    }
  }
  return docs;
}

}  // namespace trail::ingest
