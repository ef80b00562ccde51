#include "data/inspect.h"

#include <algorithm>
#include <cstdio>

#include "core/error.h"
#include "data/batch_schedule.h"
#include "data/batcher.h"
#include "data/packing.h"

namespace trail::data {
namespace {

WindowDocument DocumentOf(const CanonicalStream& s, const Segment& seg) {
  const SourceStream& src = s.source(seg.source);
  const ShardReader& sh = src.shard(seg.shard);
  const ShardRef& ref = s.manifest().sources[seg.source].shards[seg.shard];
  // A piece's BOS (prepend_bos) sits before its first chunk token: piece offset k > 0 is chunk
  // token k - 1.
  const uint64_t in_chunk = seg.piece_offset - (seg.piece_bos && seg.piece_offset > 0 ? 1 : 0);
  WindowDocument d;
  d.source = src.name(), d.shard = ref.path, d.doc = seg.doc;
  d.key = std::string(sh.doc_key(seg.doc));
  d.chunk = seg.chunk;
  d.doc_offset = ChunkStart(s.manifest().stream.chunking, seg.chunk) + in_chunk;
  d.piece_offset = seg.piece_offset, d.tokens = seg.length;
  d.starts_with_bos = seg.piece_bos && seg.piece_offset == 0;
  d.ends_with_eos = seg.ends_with_eos;
  d.draw_block = s.manifest().sources[seg.source].sampling != Sampling::kPermutation;
  d.pass = seg.pass, d.window_offset = seg.window_offset;
  return d;
}

// The first step of the phase `step` is in: phase 0 from step 0, then `phases` (ascending).
template <class Phase>
int64_t PhaseFrom(const std::vector<Phase>& phases, int64_t step) {
  int64_t from = 0;
  for (const Phase& p : phases) from = p.from_step <= step ? p.from_step : from;
  return from;
}

}  // namespace

// Printable text of some bytes: control characters and newlines escaped.
std::string PrintableBytes(const std::string& bytes) {
  std::string out;
  for (unsigned char c : bytes) {
    if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

WindowInspection InspectWindow(CanonicalStream& s, uint64_t w, const Decoder& decode) {
  RawWindow win;
  s.Window(w, win);
  const int64_t L = win.owner.seq_len;
  PackedBatch b;
  b.Resize(1, L);
  PackRow(win, s.manifest().stream.semantics, b, 0);
  auto text_of = [&](uint64_t from, uint64_t n) {
    std::vector<uint32_t> ids;
    for (uint64_t i = from; i < from + n; ++i) ids.push_back(static_cast<uint32_t>(win.tokens[i]));
    return PrintableBytes(decode(ids));
  };
  WindowInspection r;
  r.window = w, r.source = s.source(win.owner.source).name();
  r.source_window = win.owner.source_window, r.source_offset = win.owner.token_offset;
  r.seq_len = L, r.real_tokens = win.length, r.targets = b.target_tokens;
  for (const Segment& seg : win.segments) {
    r.documents.push_back(DocumentOf(s, seg));
    if (decode) r.documents.back().text = text_of(seg.window_offset, seg.length);
  }
  for (int64_t i = 0; i <= L; ++i) {
    WindowToken t;
    t.token = win.tokens[i], t.doc = win.doc[i], t.position = win.positions[i];
    t.real = i < win.length;
    if (decode) t.piece = text_of(static_cast<uint64_t>(i), 1);
    if (i < L) {
      t.has_label = true, t.label = b.labels[i], t.loss = b.loss_mask[i];
      t.attn_doc = b.doc_ids[i], t.key_valid = b.key_valid[i];
    }
    r.tokens.push_back(std::move(t));
  }
  // With phases: the step that consumes the window, and the phases that step is in.
  const StreamConfig& sc = s.manifest().stream;
  if (sc.mixture_phases.empty() && sc.seq_len_phases.empty()) return r;
  r.step = BatchSchedule(sc.schedule).StepOfWindow(w);
  if (!sc.mixture_phases.empty()) r.mixture_phase_from_step = PhaseFrom(sc.mixture_phases, *r.step);
  if (!sc.seq_len_phases.empty()) r.seq_len_phase_from_step = PhaseFrom(sc.seq_len_phases, *r.step);
  return r;
}

StepInspection InspectStep(CanonicalStream& s, int64_t step, int64_t K, int64_t rank) {
  Batcher batcher(s);
  const WindowRange range = batcher.schedule().StepWindows(step);
  const StreamConfig& sc = s.manifest().stream;
  StepInspection r;
  r.step = step, r.first_window = range.begin, r.end_window = range.end;
  r.seq_len = SeqLenAtStep(sc, step), r.tokens_before = ScheduledTokens(sc, 0, step);
  r.logical_ranks = K;
  for (int64_t k = 0; k < K; ++k) {
    if (rank >= 0 && k != rank) continue;
    RankInspection rk{k, {}};
    for (int64_t m = 0; m < batcher.NumMicroBatches(step, k, K); ++m) {
      PackedBatch b;
      batcher.MicroBatch(step, k, K, m, b);
      MicroBatchInspection mb;
      for (uint64_t w : b.windows) {
        mb.windows.push_back(w == kPaddingRow ? std::nullopt : std::optional<uint64_t>(w));
      }
      mb.input_tokens = b.input_tokens, mb.real_tokens = b.real_tokens;
      mb.target_tokens = b.target_tokens;
      r.input_tokens += b.input_tokens, r.target_tokens += b.target_tokens;
      rk.micro_batches.push_back(std::move(mb));
    }
    r.ranks.push_back(std::move(rk));
  }
  return r;
}

uint64_t WindowsBeforeStep(const Manifest& m, int64_t steps) {
  return BatchSchedule(m.stream.schedule).StepWindows(steps).begin;
}

namespace {

// Tokens read from each source by the windows [0, w): a source's windows cover its stream's
// tokens [0, offset] (neighbours share one), and a finite source stops at its end.
std::vector<uint64_t> TokensRead(const CanonicalStream& s, uint64_t w) {
  const std::vector<uint64_t> counts = s.mixture().CountsBefore(w);
  const std::vector<uint64_t> offsets = s.mixture().OffsetsBefore(w);
  std::vector<uint64_t> out(counts.size(), 0);
  for (size_t i = 0; i < counts.size(); ++i) {
    const uint64_t T = s.source(i).total_tokens();
    if (counts[i] > 0) out[i] = T == kUnlimited ? offsets[i] : std::min(offsets[i], T - 1);
  }
  return out;
}

// The windows within [0, W) of phase i of phases starting at steps `from` (ascending): from the
// first window of step from[i] to that of step from[i + 1], or to W for the last phase.
WindowRange Stretch(const BatchSchedule& schedule, const std::vector<int64_t>& from, size_t i,
                    uint64_t W) {
  const uint64_t start = std::min(W, schedule.StepWindows(from[i]).begin);
  const uint64_t end =
      i + 1 < from.size() ? std::min(W, schedule.StepWindows(from[i + 1]).begin) : W;
  return {start, end};
}

// Per mixture phase (phase 0: the target shares from step 0): where it starts, its normalized
// target shares and the measured token shares of its stretch within [0, W).
std::vector<MixturePhaseShares> PhaseShares(CanonicalStream& s, uint64_t W) {
  const Manifest& m = s.manifest();
  const BatchSchedule schedule(m.stream.schedule);
  std::vector<MixturePhase> phases = {{0, {}}};
  for (const SourceSpec& src : m.sources) phases[0].shares.push_back({src.name, src.target_share});
  phases.insert(phases.end(), m.stream.mixture_phases.begin(), m.stream.mixture_phases.end());
  std::vector<int64_t> from;
  for (const MixturePhase& p : phases) from.push_back(p.from_step);
  std::vector<MixturePhaseShares> out;
  for (size_t i = 0; i < phases.size(); ++i) {
    const auto [start, end] = Stretch(schedule, from, i, W);
    const std::vector<uint64_t> a = TokensRead(s, start), b = TokensRead(s, end);
    double total = 0;
    MixturePhaseShares p{phases[i].from_step, start, end - start, 0, {}, {}};
    for (const auto& [name, share] : phases[i].shares) total += share;
    for (size_t k = 0; k < m.sources.size(); ++k) p.tokens += b[k] - a[k];
    for (size_t k = 0; k < m.sources.size(); ++k) {
      double t = 0;
      for (const auto& [name, share] : phases[i].shares) t += name == m.sources[k].name ? share : 0;
      p.target_share.push_back({m.sources[k].name, t / total});
      p.measured_share.push_back(
          {m.sources[k].name, p.tokens > 0 ? double(b[k] - a[k]) / double(p.tokens) : 0.0});
    }
    out.push_back(std::move(p));
  }
  return out;
}

// Per sequence-length phase (phase 0: stream.seq_len from step 0): its first step and window,
// its length, and the windows and tokens of its stretch within [0, W).
std::vector<LengthPhaseTokens> LengthPhases(const CanonicalStream& s, uint64_t W) {
  const StreamConfig& sc = s.manifest().stream;
  const BatchSchedule schedule(sc.schedule);
  std::vector<SeqLenPhase> phases = {{0, sc.seq_len}};
  phases.insert(phases.end(), sc.seq_len_phases.begin(), sc.seq_len_phases.end());
  std::vector<int64_t> from;
  for (const SeqLenPhase& p : phases) from.push_back(p.from_step);
  std::vector<LengthPhaseTokens> out;
  for (size_t i = 0; i < phases.size(); ++i) {
    const auto [start, end] = Stretch(schedule, from, i, W);
    out.push_back({phases[i].from_step, phases[i].seq_len, start, end - start,
                   (end - start) * static_cast<uint64_t>(phases[i].seq_len)});
  }
  return out;
}

}  // namespace

SourceShareReport SourceShares(CanonicalStream& s, uint64_t W) {
  const Manifest& m = s.manifest();
  if (s.num_windows() != kUnlimited) W = std::min(W, s.num_windows());
  const std::vector<uint64_t> counts = s.mixture().CountsBefore(W);
  const std::vector<uint64_t> tokens = TokensRead(s, W);
  const std::vector<double> sched = s.mixture().ScheduledShares();
  double share_total = 0;
  for (const auto& src : m.sources) share_total += src.target_share;
  SourceShareReport r;
  r.windows = W, r.stream_windows = s.num_windows(), r.seq_len = m.stream.seq_len;
  for (uint64_t t : tokens) r.tokens += t;
  for (size_t i = 0; i < counts.size(); ++i) {
    const SourceStream& src = s.source(i);
    SourceShare row;
    row.source = src.name(), row.sampling = m.sources[i].sampling;
    row.target_share = m.sources[i].target_share / share_total;
    row.scheduled_share = sched[i];
    row.measured_share = r.tokens ? double(tokens[i]) / double(r.tokens) : 0.0;
    row.windows = counts[i], row.tokens = tokens[i], row.epoch_tokens = src.epoch_tokens();
    row.epochs = double(tokens[i] + (counts[i] ? 1 : 0)) / double(src.epoch_tokens());
    row.ended = s.mixture().EndedBefore(static_cast<uint32_t>(i), W);
    r.sources.push_back(std::move(row));
  }
  if (!m.stream.mixture_phases.empty()) r.mixture_phases = PhaseShares(s, W);
  if (!m.stream.seq_len_phases.empty()) r.seq_len_phases = LengthPhases(s, W);
  return r;
}

std::vector<ShardCheck> VerifyManifestShards(const Manifest& m) {
  std::vector<ShardCheck> out;
  auto check = [&](const std::string& what, const std::vector<ShardRef>& refs) {
    for (const ShardRef& ref : refs) {
      ShardCheck c{what, ""};
      try {
        OpenShards(m, {ref}, {});
      } catch (const Error& e) {
        c.error = e.what();
      }
      out.push_back(std::move(c));
    }
  };
  for (const auto& s : m.sources) check("train/" + s.name, s.shards);
  for (const auto& e : m.validation) check("validation/" + e.domain, e.shards);
  for (const auto& e : m.test) check("test/" + e.domain, e.shards);
  return out;
}

}  // namespace trail::data
