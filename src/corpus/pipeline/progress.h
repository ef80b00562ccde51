// Progress of a corpus build on the terminal: per stage, documents done of total, input MB/s
// and ETA, printed at most once a second from whichever worker thread crosses the second.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <algorithm>
#include <string>

namespace trail::corpus {

class StageProgress {
 public:
  // total: documents the stage will look at; bytes: their input bytes (for MB/s).
  StageProgress(std::string stage, uint64_t total, uint64_t bytes, bool enabled)
      : stage_(std::move(stage)),
        total_(total),
        bytes_(bytes),
        enabled_(enabled),
        start_(Clock::now()) {}

  void Tick() {
    const uint64_t done = done_.fetch_add(1, std::memory_order_relaxed) + 1;
    if (!enabled_) return;
    const int64_t now = Millis();
    int64_t last = last_print_ms_.load(std::memory_order_relaxed);
    if (now - last < 1000 || !last_print_ms_.compare_exchange_strong(last, now)) return;
    Print(done, false);
  }
  // The stage's closing line (only when progress was shown for it).
  void Finish() {
    if (enabled_ && last_print_ms_.load() > 0) Print(done_.load(), true);
  }

 private:
  using Clock = std::chrono::steady_clock;
  int64_t Millis() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start_).count();
  }
  void Print(uint64_t done, bool final) const {
    const double s = std::max(1e-3, double(Millis()) / 1000.0);
    const double frac = total_ ? double(done) / double(total_) : 1.0;
    const double mbs = double(bytes_) * frac / 1e6 / s;
    const double eta = frac > 0 ? s * (1.0 - frac) / frac : 0.0;
    std::fprintf(stderr, "  [%s] %llu/%llu documents (%.0f%%), %.1f MB/s, %s %.0fs\n",
                 stage_.c_str(), (unsigned long long)done, (unsigned long long)total_, 100.0 * frac,
                 mbs, final ? "took" : "ETA", final ? s : eta);
  }

  std::string stage_;
  uint64_t total_, bytes_;
  bool enabled_;
  Clock::time_point start_;
  std::atomic<uint64_t> done_{0};
  std::atomic<int64_t> last_print_ms_{0};
};

// Progress over input bytes, for work whose document count is not known up front (reading
// and the per-document stages, chunk by chunk). Called from one thread.
class ByteProgress {
 public:
  ByteProgress(std::string stage, uint64_t total_bytes, bool enabled)
      : stage_(std::move(stage)), total_(total_bytes), enabled_(enabled), start_(Clock::now()) {}
  void Update(uint64_t done_bytes) {
    done_ = std::min(done_bytes, total_);
    if (!enabled_) return;
    const double s = Seconds();
    if (s - last_print_ < 1.0) return;
    last_print_ = s;
    Print(false);
  }
  void Finish() {
    if (enabled_ && last_print_ > 0) Print(true);
  }

 private:
  using Clock = std::chrono::steady_clock;
  double Seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  void Print(bool final) const {
    const double s = std::max(1e-3, Seconds());
    const double frac = total_ ? double(done_) / double(total_) : 1.0;
    const double eta = frac > 0 ? s * (1.0 - frac) / frac : 0.0;
    std::fprintf(stderr, "  [%s] %.1f/%.1f MB (%.0f%%), %.1f MB/s, %s %.0fs\n", stage_.c_str(),
                 double(done_) / 1e6, double(total_) / 1e6, 100.0 * frac, double(done_) / 1e6 / s,
                 final ? "took" : "ETA", final ? s : eta);
  }
  std::string stage_;
  uint64_t total_, done_ = 0;
  bool enabled_;
  Clock::time_point start_;
  double last_print_ = 0;
};

}  // namespace trail::corpus
