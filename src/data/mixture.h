// Interleaving of sources: which source owns global window w, which of that source's windows
// it is and where in the source's token stream it starts. Each window holds tokens of one source
// only, and every window of a length phase carries L new tokens, so within a length phase the
// token share of a source equals its window share.
//
// Shares are quantized to integer counts n_s over a period of P = 65536 windows (largest
// remainder; a source with a positive share gets at least one slot), so the scheduled share is
// n_s/P, within 0.5/P of the normalized target. Inside a period, slot r goes to the source with
// the largest deficit (r+1)*n_s - P*c_s (c_s: slots given so far; ties to the lower index),
// which keeps every prefix within one window of its ideal count (a low-discrepancy
// interleave): over any W windows a source's count differs from W*n_s/P by less than 1 + S.
//
// A schedule phase has constant shares, active sources and window length. A new one starts at
// window 0, at every share phase (data annealing: new shares), at every length phase (the
// sequence-length curriculum: a new L), and right after the window that uses up a finite
// source (the remaining sources, shares renormalized). Each source continues with its next
// window and its next tokens: a window of length L at source offset o covers the source's
// tokens [o, o + L], and the source's next window starts at o + L (neighbours share one token,
// so every token after the first is a target exactly once). A finite source of T tokens has
// windows while o < T - 1 (one window if T <= 1). When no source with a positive share in the
// current share phase has windows left, the stream ends.
#pragma once

#include <cstdint>
#include <vector>

namespace trail::data {

inline constexpr uint64_t kMixturePeriod = 65536;
inline constexpr uint64_t kUnlimited = UINT64_MAX;

struct WindowOwner {
  uint32_t source = 0;
  uint64_t source_window = 0;  // index among this source's windows
  uint64_t token_offset = 0;   // the window's first token in the source's stream
  int64_t seq_len = 0;         // L: the window holds tokens [token_offset, token_offset + L]
};

// From global window `start` on, draw the sources with `shares` (per source, >= 0).
struct SharePhase {
  uint64_t start = 0;
  std::vector<double> shares;
};

// From global window `start` on, windows hold seq_len + 1 tokens.
struct LengthPhase {
  uint64_t start = 0;
  int64_t seq_len = 0;
};

struct MixturePlan {
  std::vector<double> shares;            // per source, >= 0 (normalized here)
  std::vector<uint64_t> source_tokens;   // per source: its stream's tokens, or kUnlimited
  std::vector<SharePhase> later_shares;  // share phases after window 0 (starts ascending)
  std::vector<LengthPhase> lengths;      // the first at window 0; starts ascending
};

class MixtureSchedule {
 public:
  explicit MixtureSchedule(const MixturePlan& plan);

  uint64_t num_windows() const { return end_; }  // kUnlimited for an endless stream
  WindowOwner Owner(uint64_t w) const;
  int64_t SeqLenAt(uint64_t w) const;  // L of window w
  // Windows of each source among global windows [0, w).
  std::vector<uint64_t> CountsBefore(uint64_t w) const;
  // Per source, the offset in its stream where its first window at or after w starts: the
  // tokens the windows [0, w) advanced it by (for a finite source, up to L - 1 past its end).
  std::vector<uint64_t> OffsetsBefore(uint64_t w) const;
  // The global windows below `window_limit` that read any of source s's stream tokens
  // [begin, end) (a window at offset o reads [o, o + L]), ascending: the inverse of Owner.
  std::vector<uint64_t> WindowsReading(uint32_t s, uint64_t begin, uint64_t end,
                                       uint64_t window_limit) const;
  // Whether source s has no windows left after the global windows [0, w).
  bool EndedBefore(uint32_t s, uint64_t w) const;
  // Scheduled share of each source in the first phase (n_s / P).
  std::vector<double> ScheduledShares() const;
  // The same in the phase that holds window w.
  std::vector<double> ScheduledSharesAt(uint64_t w) const;

 private:
  struct Phase {
    uint64_t start = 0;                        // first global window of the phase
    int64_t seq_len = 0;                       // L of its windows
    std::vector<uint32_t> counts;              // n_s per source (0 if inactive)
    std::vector<uint64_t> base;                // windows of each source before the phase
    std::vector<uint64_t> offset;              // stream offset of each source at the phase start
    std::vector<uint16_t> slot_source;         // [P]
    std::vector<uint32_t> slot_rank;           // [P] index of the slot among its source's slots
    std::vector<std::vector<uint32_t>> slots;  // per source, its slot positions in the period
  };
  static Phase BuildPhase(const std::vector<double>& shares, const std::vector<bool>& active);
  uint64_t CountInPhase(const Phase& ph, uint32_t s, uint64_t local) const;
  const Phase& PhaseOf(uint64_t w) const;
  uint64_t WindowsLeft(uint32_t s, uint64_t used, uint64_t offset, int64_t seq_len) const;
  // Per source, its windows among [0, w) and the stream offset they advanced it to.
  void Before(uint64_t w, std::vector<uint64_t>& counts, std::vector<uint64_t>& offsets) const;

  std::vector<uint64_t> source_tokens_;
  std::vector<Phase> phases_;
  uint64_t end_ = kUnlimited;
};

}  // namespace trail::data
