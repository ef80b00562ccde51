#include "data/mixture.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace trail::data {

MixtureSchedule::Phase MixtureSchedule::BuildPhase(const std::vector<double>& shares,
                                                   const std::vector<bool>& active) {
  const size_t S = shares.size();
  const uint64_t P = kMixturePeriod;
  double total = 0;
  for (size_t s = 0; s < S; ++s) {
    if (active[s]) total += shares[s];
  }
  Phase ph;
  ph.counts.assign(S, 0);
  // Largest remainder: floor first, then hand the rest out by descending remainder.
  std::vector<std::pair<double, size_t>> rem;
  uint64_t given = 0;
  for (size_t s = 0; s < S; ++s) {
    if (!active[s] || shares[s] <= 0) continue;
    const double exact = shares[s] / total * static_cast<double>(P);
    ph.counts[s] = static_cast<uint32_t>(std::floor(exact));
    given += ph.counts[s];
    rem.push_back({exact - std::floor(exact), s});
  }
  std::stable_sort(rem.begin(), rem.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t i = 0; given < P; i = (i + 1) % rem.size(), ++given) ++ph.counts[rem[i].second];
  // Every source with a positive share appears at least once per period.
  for (const auto& [r, s] : rem) {
    if (ph.counts[s] > 0) continue;
    auto big = std::max_element(ph.counts.begin(), ph.counts.end());
    --*big;
    ph.counts[s] = 1;
  }

  ph.slot_source.resize(P);
  ph.slot_rank.resize(P);
  ph.slots.assign(S, {});
  std::vector<uint64_t> given_to(S, 0);
  std::vector<size_t> order;
  for (size_t s = 0; s < S; ++s) {
    if (ph.counts[s] > 0) order.push_back(s);
  }
  for (uint64_t r = 0; r < P; ++r) {
    size_t best = order[0];
    int64_t best_deficit = INT64_MIN;
    for (size_t s : order) {
      const int64_t deficit =
          static_cast<int64_t>((r + 1) * ph.counts[s]) - static_cast<int64_t>(P * given_to[s]);
      if (deficit > best_deficit) {
        best_deficit = deficit;
        best = s;
      }
    }
    ph.slot_source[r] = static_cast<uint16_t>(best);
    ph.slot_rank[r] = static_cast<uint32_t>(given_to[best]);
    ph.slots[best].push_back(static_cast<uint32_t>(r));
    ++given_to[best];
  }
  return ph;
}

namespace {

void CheckShares(const std::vector<double>& shares, size_t S) {
  TRAIL_CHECK(shares.size() == S, "mixture: ", shares.size(), " shares for ", S, " sources");
  for (size_t s = 0; s < S; ++s) {
    TRAIL_CHECK(std::isfinite(shares[s]) && shares[s] >= 0, "mixture: bad share for source ", s);
  }
}

void CheckPlan(const MixturePlan& plan) {
  const size_t S = plan.shares.size();
  TRAIL_CHECK(S >= 1 && S == plan.source_tokens.size() && S <= 65535, "mixture: bad source list");
  CheckShares(plan.shares, S);
  for (size_t u = 0; u < plan.later_shares.size(); ++u) {
    CheckShares(plan.later_shares[u].shares, S);
    TRAIL_CHECK(plan.later_shares[u].start > (u == 0 ? 0 : plan.later_shares[u - 1].start),
                "mixture: share phases must start at increasing windows after window 0");
  }
  TRAIL_CHECK(!plan.lengths.empty() && plan.lengths[0].start == 0,
              "mixture: the first length phase must start at window 0");
  for (size_t v = 0; v < plan.lengths.size(); ++v) {
    TRAIL_CHECK(plan.lengths[v].seq_len >= 1, "mixture: length phase ", v, " has no tokens");
    TRAIL_CHECK(v == 0 || plan.lengths[v].start > plan.lengths[v - 1].start,
                "mixture: length phases must start at increasing windows");
  }
}

}  // namespace

uint64_t MixtureSchedule::WindowsLeft(uint32_t s, uint64_t used, uint64_t offset,
                                      int64_t seq_len) const {
  const uint64_t T = source_tokens_[s], L = static_cast<uint64_t>(seq_len);
  if (T == kUnlimited) return kUnlimited;
  if (T <= 1) return used == 0 ? 1 : 0;  // a one-token source still gives one (padded) window
  return offset >= T - 1 ? 0 : (T - 1 - offset + L - 1) / L;
}

MixtureSchedule::MixtureSchedule(const MixturePlan& plan) : source_tokens_(plan.source_tokens) {
  CheckPlan(plan);
  const size_t S = plan.shares.size();
  std::vector<SharePhase> share_phases = {{0, plan.shares}};
  share_phases.insert(share_phases.end(), plan.later_shares.begin(), plan.later_shares.end());
  std::vector<uint64_t> used(S, 0), offset(S, 0);
  uint64_t start = 0;
  for (size_t u = 0, v = 0;;) {
    while (u + 1 < share_phases.size() && share_phases[u + 1].start <= start) ++u;
    while (v + 1 < plan.lengths.size() && plan.lengths[v + 1].start <= start) ++v;
    const std::vector<double>& shares = share_phases[u].shares;
    const int64_t L = plan.lengths[v].seq_len;
    std::vector<bool> active(S);
    std::vector<uint64_t> left(S);
    bool any = false;
    for (size_t s = 0; s < S; ++s) {
      left[s] = WindowsLeft(static_cast<uint32_t>(s), used[s], offset[s], L);
      any |= (active[s] = left[s] > 0 && shares[s] > 0);
    }
    TRAIL_CHECK(any || start > 0, "mixture: no source has a positive share and data");
    if (!any) {  // every source of this share phase has ended
      end_ = start;
      return;
    }
    Phase ph = BuildPhase(shares, active);
    ph.start = start;
    ph.seq_len = L;
    ph.base = used;
    ph.offset = offset;
    // The phase ends at the next share or length phase, or right after the window that uses up
    // the first finite source, whichever comes first.
    uint64_t len = kUnlimited;
    if (u + 1 < share_phases.size()) len = share_phases[u + 1].start - start;
    if (v + 1 < plan.lengths.size()) len = std::min(len, plan.lengths[v + 1].start - start);
    for (size_t s = 0; s < S; ++s) {
      if (ph.counts[s] == 0 || left[s] == kUnlimited) continue;
      const uint64_t m = left[s] - 1;  // 0-based index (in the phase) of its last window
      len = std::min(len, (m / ph.counts[s]) * kMixturePeriod + ph.slots[s][m % ph.counts[s]] + 1);
    }
    phases_.push_back(std::move(ph));
    if (len == kUnlimited) return;
    const Phase& done = phases_.back();
    for (size_t s = 0; s < S; ++s) {
      const uint64_t n = CountInPhase(done, static_cast<uint32_t>(s), len);
      used[s] += n;
      offset[s] += n * static_cast<uint64_t>(L);
    }
    start += len;
  }
}

uint64_t MixtureSchedule::CountInPhase(const Phase& ph, uint32_t s, uint64_t local) const {
  if (ph.counts[s] == 0) return 0;
  const uint64_t full = local / kMixturePeriod, rest = local % kMixturePeriod;
  const auto& sl = ph.slots[s];
  return full * ph.counts[s] +
         static_cast<uint64_t>(std::lower_bound(sl.begin(), sl.end(), rest) - sl.begin());
}

const MixtureSchedule::Phase& MixtureSchedule::PhaseOf(uint64_t w) const {
  TRAIL_CHECK(w < end_, "window ", w, " is past the end of the stream (", end_,
              " windows: every source without replacement has ended)");
  auto it = std::upper_bound(phases_.begin(), phases_.end(), w,
                             [](uint64_t v, const Phase& p) { return v < p.start; });
  return *(it - 1);
}

WindowOwner MixtureSchedule::Owner(uint64_t w) const {
  const Phase& ph = PhaseOf(w);
  const uint64_t local = w - ph.start;
  const uint64_t slot = local % kMixturePeriod;
  WindowOwner o;
  o.source = ph.slot_source[slot];
  o.source_window =
      ph.base[o.source] + (local / kMixturePeriod) * ph.counts[o.source] + ph.slot_rank[slot];
  o.token_offset = ph.offset[o.source] +
                   (o.source_window - ph.base[o.source]) * static_cast<uint64_t>(ph.seq_len);
  o.seq_len = ph.seq_len;
  return o;
}

int64_t MixtureSchedule::SeqLenAt(uint64_t w) const { return PhaseOf(w).seq_len; }

void MixtureSchedule::Before(uint64_t w, std::vector<uint64_t>& counts,
                             std::vector<uint64_t>& offsets) const {
  const size_t S = phases_[0].counts.size();
  counts.assign(S, 0);
  offsets.assign(S, 0);
  if (w == 0) return;
  w = std::min(w, end_);
  const Phase& ph = PhaseOf(w - 1);
  for (size_t s = 0; s < S; ++s) {
    const uint64_t n = CountInPhase(ph, static_cast<uint32_t>(s), w - ph.start);
    counts[s] = ph.base[s] + n;
    offsets[s] = ph.offset[s] + n * static_cast<uint64_t>(ph.seq_len);
  }
}

std::vector<uint64_t> MixtureSchedule::CountsBefore(uint64_t w) const {
  std::vector<uint64_t> counts, offsets;
  Before(w, counts, offsets);
  return counts;
}

std::vector<uint64_t> MixtureSchedule::OffsetsBefore(uint64_t w) const {
  std::vector<uint64_t> counts, offsets;
  Before(w, counts, offsets);
  return offsets;
}

std::vector<uint64_t> MixtureSchedule::WindowsReading(uint32_t s, uint64_t begin, uint64_t end,
                                                      uint64_t window_limit) const {
  std::vector<uint64_t> out;
  window_limit = std::min(window_limit, end_);
  for (size_t i = 0; i < phases_.size() && begin < end; ++i) {
    const Phase& ph = phases_[i];
    if (ph.start >= window_limit) break;
    const uint64_t n_s = ph.counts[s];
    if (n_s == 0) continue;
    const uint64_t phase_end = i + 1 < phases_.size() ? phases_[i + 1].start : end_;
    const uint64_t windows = CountInPhase(ph, s, std::min(phase_end, window_limit) - ph.start);
    const uint64_t L = static_cast<uint64_t>(ph.seq_len), off = ph.offset[s];
    // Phase-local window t reads [off + tL, off + tL + L]: it meets [begin, end) when
    // off + tL < end and off + tL + L >= begin.
    if (end <= off || windows == 0) continue;
    const uint64_t t_lo = begin > off + L ? (begin - off - 1) / L : 0;  // ceil((begin-off-L)/L)
    const uint64_t t_hi = std::min(windows - 1, (end - 1 - off) / L);
    for (uint64_t t = t_lo; t <= t_hi; ++t) {
      out.push_back(ph.start + (t / n_s) * kMixturePeriod + ph.slots[s][t % n_s]);
    }
  }
  return out;
}

bool MixtureSchedule::EndedBefore(uint32_t s, uint64_t w) const {
  std::vector<uint64_t> counts, offsets;
  Before(w, counts, offsets);
  return WindowsLeft(s, counts[s], offsets[s], 1) ==
         0;  // whether tokens are left does not depend on L
}

std::vector<double> MixtureSchedule::ScheduledShares() const { return ScheduledSharesAt(0); }

std::vector<double> MixtureSchedule::ScheduledSharesAt(uint64_t w) const {
  std::vector<double> out;
  for (uint32_t c : PhaseOf(w).counts) out.push_back(static_cast<double>(c) / kMixturePeriod);
  return out;
}

}  // namespace trail::data
