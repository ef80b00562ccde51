// The HTTP(S) source on libcurl: one connection, kept alive between requests; a request for a
// byte range sends "Range: bytes=a-b" and accepts only 206 with exactly that Content-Range (and
// the published total) or 200 with exactly the published size, from which it takes the range;
// no answer may grow beyond the bytes the publication says it holds. Failures that may pass
// (no connection, a dropped or stalled transfer, 429 and 5xx) are retried with doubling waits;
// the rest (404, a wrong range or size) fail at once.
#include "fetch/source.h"

#include "fetch/content_range.h"

#include <chrono>
#include <mutex>
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

struct Transfer {
  std::string body, content_range;
  uint64_t cap = 0;
  bool over_cap = false;
};

size_t OnBody(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  if (t->body.size() + size * n > t->cap) {
    t->over_cap = true;
    return 0;  // aborts the transfer: never hold more than the publication allows
  }
  t->body.append(data, size * n);
  return size * n;
}

size_t OnHeader(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::string line(data, size * n);
  if (line.rfind("HTTP/", 0) == 0) t->content_range.clear();  // a new answer (after a redirect)
  static const std::string kName = "content-range:";
  if (line.size() > kName.size()) {
    std::string head = line.substr(0, kName.size());
    for (char& c : head) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (head == kName) {
      t->content_range = line.substr(kName.size());
      while (!t->content_range.empty() &&
             std::isspace(static_cast<unsigned char>(t->content_range.front()))) {
        t->content_range.erase(0, 1);
      }
      while (!t->content_range.empty() &&
             std::isspace(static_cast<unsigned char>(t->content_range.back()))) {
        t->content_range.pop_back();
      }
    }
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
      t.cap = max_bytes;
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
    t.cap = file_size;  // a server that ignores the range sends the whole file, no more
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
    if (status == 200) {  // the server ignored the range: the whole file, of its published size
      if (t.body.size() != file_size) {
        throw FetchError(Describe(path) + ": the server sent " + std::to_string(t.body.size()) +
                         " bytes for the whole file, not the " + std::to_string(file_size) +
                         " the publication lists");
      }
      return t.body.substr(offset, length);
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
    if (t.over_cap) {
      throw FetchError(url + ": the server sent more than the " + std::to_string(t.cap) +
                       " bytes the publication allows");
    }
    if (rc != CURLE_OK) throw Transient{curl_easy_strerror(rc)};
    long status = 0;
    curl_easy_getinfo(curl_, CURLINFO_RESPONSE_CODE, &status);
    if (status == 429 || status >= 500) throw Transient{"HTTP " + std::to_string(status)};
    if (status == 404 || status == 410) {
      throw FetchError(url + ": not found (HTTP " + std::to_string(status) + ")");
    }
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
