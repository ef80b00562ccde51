// Interleaving of sources: which source owns global window w, and which of that source's
// windows it is. Each window holds tokens of one source only, and every window carries L new
// tokens, so the token share of a source equals its window share.
//
// Shares are quantized to integer counts n_s over a period of P = 65536 windows (largest
// remainder; a source with a positive share gets at least one slot), so the scheduled share is
// n_s/P, within 0.5/P of the normalized target. Inside a period, slot r goes to the source with
// the largest deficit (r+1)*n_s - P*c_s (c_s: slots given so far; ties to the lower index),
// which keeps every prefix within one window of its ideal count (a low-discrepancy
// interleave): over any W windows a source's count differs from W*n_s/P by less than 1 + S.
//
// A source with finitely many windows drops out when they are used up; the schedule then
// starts a new phase over the remaining sources with their shares renormalized. Share phases
// (data annealing) start a new phase at a given global window with new shares; each source
// continues with its next window. When no source with a positive share in the current share
// phase has windows left, the stream ends.
#pragma once

#include <cstdint>
#include <vector>

namespace trail::data {

inline constexpr uint64_t kMixturePeriod = 65536;
inline constexpr uint64_t kUnlimited = UINT64_MAX;

struct WindowOwner {
  uint32_t source = 0;
  uint64_t source_window = 0;  // index among this source's windows
};

// From global window `start` on, draw the sources with `shares` (per source, >= 0).
struct SharePhase {
  uint64_t start = 0;
  std::vector<double> shares;
};

class MixtureSchedule {
 public:
  // shares: per source, >= 0 (normalized here); windows: per source, kUnlimited or a count.
  MixtureSchedule(const std::vector<double>& shares, const std::vector<uint64_t>& windows);
  // The same with later share phases (starts ascending, > 0).
  MixtureSchedule(const std::vector<double>& shares, const std::vector<uint64_t>& windows,
                  const std::vector<SharePhase>& later);

  uint64_t num_windows() const { return end_; }  // kUnlimited for an endless stream
  WindowOwner Owner(uint64_t w) const;
  // Windows of each source among global windows [0, w).
  std::vector<uint64_t> CountsBefore(uint64_t w) const;
  // Scheduled share of each source in the first phase (n_s / P).
  std::vector<double> ScheduledShares() const;
  // The same in the phase that holds window w.
  std::vector<double> ScheduledSharesAt(uint64_t w) const;

 private:
  struct Phase {
    uint64_t start = 0;                       // first global window of the phase
    std::vector<uint32_t> counts;             // n_s per source (0 if inactive)
    std::vector<uint64_t> base;               // windows of each source before the phase
    std::vector<uint16_t> slot_source;        // [P]
    std::vector<uint32_t> slot_rank;          // [P] index of the slot among its source's slots
    std::vector<std::vector<uint32_t>> slots; // per source, its slot positions in the period
  };
  static Phase BuildPhase(const std::vector<double>& shares, const std::vector<bool>& active);
  uint64_t CountInPhase(const Phase& ph, uint32_t s, uint64_t local) const;
  const Phase& PhaseOf(uint64_t w) const;

  std::vector<Phase> phases_;
  uint64_t end_ = kUnlimited;
};

}  // namespace trail::data
