// The HTTP(S) source on libcurl: one connection, kept alive between requests; a request for a
// byte range sends "Range: bytes=a-b" and accepts only 206 with exactly that Content-Range (and
// the published total) or 200 with exactly the published size, from which it takes the range.
// Every answer is bounded by its request: a 206 body is read up to the range's length and no
// further, a 200 body up to the range's end (the bytes before the range are dropped as they
// arrive, and a range that starts beyond kMaxSkippedBytes is refused), an error page not at all;
// a Content-Length beyond those bounds is refused before any body byte is read. Failures that
// may pass (no connection, a dropped or stalled transfer, 429 and 5xx) are retried with doubling
// waits; the rest (404, a wrong range or size) fail at once.
#include "fetch/source.h"

#include "fetch/content_range.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <thread>

#if TRAIL_HAVE_CURL
#include <curl/curl.h>
#endif

namespace trail::fetch {

#if !TRAIL_HAVE_CURL
std::unique_ptr<Source> OpenHttpSource(const std::string& base_url, const SourceOptions&) {
  throw FetchError(base_url + ": this build of trail has no HTTP support (libcurl); fetch the " +
                   "bundle with another tool and pass its directory");
}
#else
namespace {

// A failure worth another try.
struct Transient {
  std::string what;
};

// A whole-file answer to a range request is read only up to the range's end, and refused when
// the range starts further in than this (the bytes before it would be read and dropped).
constexpr uint64_t kMaxSkippedBytes = 256u << 20;

// What one request asked for, and the answer's body as it arrives. The bounds are set when the
// first body byte arrives (the last answer's status and headers are known then).
struct Transfer {
  // The request: a range of a file of file_size bytes, or (ranged false) a whole file of at
  // most max_bytes.
  bool ranged = false;
  uint64_t offset = 0, length = 0, file_size = 0, max_bytes = 0;
  // The answer.
  long status = 0;                         // the last answer's (after redirects)
  std::optional<uint64_t> content_length;  // the last answer's, when it gives one
  std::string content_range, body;
  // The bounds: body bytes [keep_begin, keep_end) are kept, none beyond `cap` is read.
  bool bounded = false;
  uint64_t keep_begin = 0, keep_end = 0, cap = 0, received = 0;
  bool over_cap = false, stopped = false;
  std::string refusal;  // why the body was refused before it was read ("" : it was not)
  FetchError::Kind refusal_kind = FetchError::Kind::kUnavailable;
};

// Sets the bounds of t's body from its status and Content-Length; "" when it may be read.
std::string SetBounds(Transfer& t) {
  t.bounded = true;
  const bool ok = t.status == 200 || t.status == 206;
  if (!ok) return "";  // an error page: not read (cap 0); the status says what went wrong
  if (!t.ranged) {
    t.keep_end = t.cap = t.max_bytes;
    if (t.content_length && *t.content_length > t.max_bytes) {
      return "the server announces " + std::to_string(*t.content_length) +
             " bytes, beyond the limit of " + std::to_string(t.max_bytes);
    }
    return "";
  }
  if (t.status == 206) {
    t.keep_end = t.cap = t.length;
    if (t.content_length && *t.content_length != t.length) {
      return "asked for " + std::to_string(t.length) + " bytes, the server announces a range of " +
             std::to_string(*t.content_length);
    }
    return "";
  }
  if (t.content_length && *t.content_length != t.file_size) {
    t.refusal_kind = FetchError::Kind::kNotPublished;
    return "the server's file is " + std::to_string(*t.content_length) + " bytes, not the " +
           std::to_string(t.file_size) + " the publication lists";
  }
  if (t.offset > kMaxSkippedBytes) {
    return "the server ignores byte ranges (HTTP 200 for a range starting at byte " +
           std::to_string(t.offset) + "), and a whole-file answer is read at most " +
           std::to_string(kMaxSkippedBytes) + " bytes ahead of the range";
  }
  t.keep_begin = t.offset, t.keep_end = t.offset + t.length, t.cap = t.file_size;
  return "";
}

size_t OnBody(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const uint64_t got = size * n;
  if (!t->bounded) t->refusal = SetBounds(*t);
  if (!t->refusal.empty()) return 0;  // aborts the transfer
  // A whole file for a range is read up to the range's end, whatever follows it; any other
  // answer must stay within its cap.
  const bool whole_for_range = t->ranged && t->status == 200;
  if (!whole_for_range && t->received + got > t->cap) {
    t->over_cap = true;  // never hold more than the request allows
    return 0;
  }
  const uint64_t from = std::max(t->received, t->keep_begin);
  const uint64_t to = std::min(t->received + got, t->keep_end);
  if (from < to) t->body.append(data + (from - t->received), to - from);
  t->received += got;
  if (whole_for_range && t->received >= t->keep_end) {
    t->stopped = true;  // the range is complete: the rest of the answer is not read
    return 0;
  }
  return got;
}

// The value of header `name` (lowercase) when `line` is "Name: value", else nullopt.
std::optional<std::string> HeaderValue(const std::string& line, const std::string& name) {
  if (line.size() <= name.size() || line[name.size()] != ':') return std::nullopt;
  for (size_t i = 0; i < name.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(line[i])) != name[i]) return std::nullopt;
  }
  std::string v = line.substr(name.size() + 1);
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.front()))) v.erase(0, 1);
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back()))) v.pop_back();
  return v;
}

// A Content-Length: its value, or UINT64_MAX when it is not a number below 10^19 (larger than
// any bound, so refused).
uint64_t ParseLength(const std::string& v) {
  uint64_t len = 0;
  if (v.empty() || v.size() > 19) return UINT64_MAX;
  for (char c : v) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return UINT64_MAX;
    len = len * 10 + static_cast<uint64_t>(c - '0');
  }
  return len;
}

size_t OnHeader(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::string line(data, size * n);
  if (line.rfind("HTTP/", 0) == 0) {  // a new answer (after a redirect or a 100 Continue)
    t->content_range.clear();
    t->content_length.reset();
    const size_t sp = line.find(' ');
    t->status = sp == std::string::npos ? 0 : std::atol(line.c_str() + sp + 1);
  } else if (auto v = HeaderValue(line, "content-range")) {
    t->content_range = *v;
  } else if (auto len = HeaderValue(line, "content-length")) {
    t->content_length = ParseLength(*len);
  }
  return size * n;
}

class HttpSource : public Source {
 public:
  HttpSource(std::string base, const SourceOptions& o) : base_(std::move(base)), o_(o) {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
    curl_ = curl_easy_init();
    if (curl_ == nullptr) throw FetchError("libcurl could not start a session");
  }
  ~HttpSource() override { curl_easy_cleanup(curl_); }

  std::string Read(const std::string& path, uint64_t offset, uint64_t length,
                   uint64_t file_size) override {
    return WithRetries(path, [&] { return ReadRange(path, offset, length, file_size); });
  }

  std::string ReadSmall(const std::string& path, uint64_t max_bytes) override {
    return WithRetries(path, [&] {
      Transfer t;
      t.max_bytes = max_bytes;
      const long status = Perform(path, "", t);
      if (status != 200) throw FetchError(Describe(path) + ": HTTP " + std::to_string(status));
      return std::move(t.body);
    });
  }

  std::string Describe(const std::string& path) const override { return base_ + "/" + path; }

 private:
  template <class Fn>
  std::string WithRetries(const std::string& path, Fn fn) {
    double wait = o_.first_backoff_s;
    for (int attempt = 0;; ++attempt) {
      try {
        return fn();
      } catch (const Transient& e) {
        if (attempt >= o_.retries) {
          throw FetchError(Describe(path) + ": " + e.what + " (gave up after " +
                           std::to_string(attempt + 1) + " tries)");
        }
        std::this_thread::sleep_for(std::chrono::duration<double>(wait));
        wait *= 2;
      }
    }
  }

  std::string ReadRange(const std::string& path, uint64_t offset, uint64_t length,
                        uint64_t file_size) {
    if (length == 0) return {};
    Transfer t;
    t.ranged = true, t.offset = offset, t.length = length, t.file_size = file_size;
    const uint64_t last = offset + length - 1;
    const std::string range = std::to_string(offset) + "-" + std::to_string(last);
    const long status = Perform(path, range, t);
    if (status == 206) {
      CheckContentRange(path, t.content_range, offset, last, file_size);
      if (t.body.size() != length) {
        throw Transient{"a range of " + std::to_string(t.body.size()) + " bytes, not " +
                        std::to_string(length)};
      }
      return std::move(t.body);
    }
    if (status == 200) {  // the server ignored the range: the whole file, read to the range's end
      if (t.body.size() != length) {
        throw FetchError(Describe(path) + ": the server's whole file ended after " +
                             std::to_string(t.received) + " bytes, before bytes " + range +
                             " of the " + std::to_string(file_size) + " the publication lists",
                         FetchError::Kind::kNotPublished);
      }
      return std::move(t.body);
    }
    throw FetchError(Describe(path) + ": HTTP " + std::to_string(status) + " for bytes " + range);
  }

  void CheckContentRange(const std::string& path, const std::string& header, uint64_t first,
                         uint64_t last, uint64_t size) {
    const std::optional<ContentRange> r = ParseContentRange(header);
    if (!r || r->first != first || r->last != last || (r->total && *r->total != size)) {
      throw FetchError(Describe(path) + ": asked for bytes " + std::to_string(first) + "-" +
                       std::to_string(last) + " of " + std::to_string(size) +
                       ", the server answered Content-Range '" + header + "'");
    }
  }

  // One request; returns the HTTP status, or throws Transient / FetchError.
  long Perform(const std::string& path, const std::string& range, Transfer& t) {
    const std::string url = Describe(path);
    curl_easy_reset(curl_);
    curl_easy_setopt(curl_, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl_, CURLOPT_FOLLOWLOCATION, 1L);  // hubs redirect to their CDN
    curl_easy_setopt(curl_, CURLOPT_MAXREDIRS, 5L);
    curl_easy_setopt(curl_, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl_, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl_, CURLOPT_CONNECTTIMEOUT, static_cast<long>(o_.connect_timeout_s));
    curl_easy_setopt(curl_, CURLOPT_LOW_SPEED_LIMIT, 1024L);
    curl_easy_setopt(curl_, CURLOPT_LOW_SPEED_TIME, static_cast<long>(o_.stall_timeout_s));
    curl_easy_setopt(curl_, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl_, CURLOPT_USERAGENT, "trail-audit/1");
    if (!range.empty()) curl_easy_setopt(curl_, CURLOPT_RANGE, range.c_str());
    curl_easy_setopt(curl_, CURLOPT_WRITEFUNCTION, OnBody);
    curl_easy_setopt(curl_, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(curl_, CURLOPT_HEADERFUNCTION, OnHeader);
    curl_easy_setopt(curl_, CURLOPT_HEADERDATA, &t);
    const CURLcode rc = curl_easy_perform(curl_);
    if (!t.refusal.empty()) throw FetchError(url + ": " + t.refusal, t.refusal_kind);
    long status = 0;
    curl_easy_getinfo(curl_, CURLINFO_RESPONSE_CODE, &status);
    if (status == 0) status = t.status;
    if (status == 0) throw Transient{curl_easy_strerror(rc)};  // no answer at all
    if (status == 429 || status >= 500) throw Transient{"HTTP " + std::to_string(status)};
    if (status == 404 || status == 410) {
      throw FetchError(url + ": not found (HTTP " + std::to_string(status) + ")");
    }
    if (status != 200 && status != 206) return status;  // its body unread: the caller says why
    if (t.over_cap) {
      throw FetchError(url + ": the server sent more than the " + std::to_string(t.cap) +
                       " bytes asked for");
    }
    if (rc != CURLE_OK && !t.stopped) throw Transient{curl_easy_strerror(rc)};
    return status;
  }

  std::string base_;
  SourceOptions o_;
  CURL* curl_ = nullptr;
};

}  // namespace

std::unique_ptr<Source> OpenHttpSource(const std::string& base_url, const SourceOptions& o) {
  return std::make_unique<HttpSource>(base_url, o);
}
#endif

}  // namespace trail::fetch
