#include "data/inspect.h"

#include <algorithm>
#include <cstdio>

#include "core/error.h"
#include "data/batch_schedule.h"
#include "data/batcher.h"
#include "data/packing.h"

namespace trail::data {
namespace {

Json SegmentJson(const CanonicalStream& s, const Segment& seg) {
  const SourceStream& src = s.source(seg.source);
  const ShardReader& sh = src.shard(seg.shard);
  const ShardRef& ref = s.manifest().sources[seg.source].shards[seg.shard];
  // A piece's BOS (prepend_bos) sits before its first chunk token: piece offset k > 0 is chunk
  // token k - 1.
  const uint64_t in_chunk = seg.piece_offset - (seg.piece_bos && seg.piece_offset > 0 ? 1 : 0);
  return Json{
      {"source", src.name()},
      {"shard", ref.path},
      {"doc", seg.doc},
      {"key", std::string(sh.doc_key(seg.doc))},
      {"chunk", seg.chunk},
      {"doc_offset", ChunkStart(s.manifest().stream.chunking, seg.chunk) + in_chunk},
      {"piece_offset", seg.piece_offset},
      {"tokens", seg.length},
      {"starts_with_bos", seg.piece_bos && seg.piece_offset == 0},
      {"ends_with_eos", seg.ends_with_eos},
      {s.manifest().sources[seg.source].sampling == Sampling::kPermutation ? "epoch" : "draw_block",
       seg.pass},
      {"window_offset", seg.window_offset}};
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

Json InspectWindow(CanonicalStream& s, uint64_t w, const Decoder& decode) {
  RawWindow win;
  s.Window(w, win);
  const int64_t L = win.owner.seq_len;
  PackedBatch b;
  b.Resize(1, L);
  PackRow(win, s.manifest().stream.semantics, b, 0);
  Json docs = Json::array();
  for (const Segment& seg : win.segments) docs.push_back(SegmentJson(s, seg));
  auto text_of = [&](int64_t from, int64_t n) {
    std::vector<uint32_t> ids;
    for (int64_t i = from; i < from + n; ++i) ids.push_back(static_cast<uint32_t>(win.tokens[i]));
    return decode(ids);
  };
  if (decode) {
    for (size_t i = 0; i < docs.size(); ++i) {
      docs[i]["text"] = PrintableBytes(text_of(static_cast<int64_t>(win.segments[i].window_offset),
                                               static_cast<int64_t>(win.segments[i].length)));
    }
  }
  Json tokens = Json::array();
  for (int64_t i = 0; i <= L; ++i) {
    Json t{{"token", win.tokens[i]},
           {"doc", win.doc[i]},
           {"position", win.positions[i]},
           {"real", i < win.length}};
    if (decode) t["piece"] = PrintableBytes(text_of(i, 1));
    if (i < L) {
      t["label"] = b.labels[i];
      t["loss"] = b.loss_mask[i];
      t["attn_doc"] = b.doc_ids[i];
      t["key_valid"] = b.key_valid[i];
    }
    tokens.push_back(t);
  }
  Json out{{"window", w},
           {"source", s.source(win.owner.source).name()},
           {"source_window", win.owner.source_window},
           {"source_offset", win.owner.token_offset},
           {"seq_len", L},
           {"real_tokens", win.length},
           {"targets", b.target_tokens},
           {"documents", docs},
           {"tokens", tokens}};
  // With phases: the step that consumes the window, and the phases that step is in.
  const StreamConfig& sc = s.manifest().stream;
  if (sc.mixture_phases.empty() && sc.seq_len_phases.empty()) return out;
  const int64_t step = BatchSchedule(sc.schedule).StepOfWindow(w);
  out["step"] = step;
  if (!sc.mixture_phases.empty()) {
    int64_t from = 0;
    for (const MixturePhase& p : sc.mixture_phases) from = p.from_step <= step ? p.from_step : from;
    out["mixture_phase_from_step"] = from;
  }
  if (!sc.seq_len_phases.empty()) {
    int64_t from = 0;
    for (const SeqLenPhase& p : sc.seq_len_phases) from = p.from_step <= step ? p.from_step : from;
    out["seq_len_phase_from_step"] = from;
  }
  return out;
}

Json InspectStep(CanonicalStream& s, int64_t step, int64_t K, int64_t rank) {
  Batcher batcher(s);
  const WindowRange r = batcher.schedule().StepWindows(step);
  Json ranks = Json::array();
  int64_t step_input = 0, step_targets = 0;
  for (int64_t k = 0; k < K; ++k) {
    if (rank >= 0 && k != rank) continue;
    Json micro = Json::array();
    for (int64_t m = 0; m < batcher.NumMicroBatches(step, k, K); ++m) {
      PackedBatch b;
      batcher.MicroBatch(step, k, K, m, b);
      Json wins = Json::array();
      for (uint64_t w : b.windows) {
        if (w == kPaddingRow) {
          wins.push_back(nullptr);
        } else {
          wins.push_back(w);
        }
      }
      micro.push_back(Json{{"windows", wins},
                           {"B_input", b.input_tokens},
                           {"real_tokens", b.real_tokens},
                           {"B_target", b.target_tokens}});
      step_input += b.input_tokens;
      step_targets += b.target_tokens;
    }
    ranks.push_back(Json{{"rank", k}, {"micro_batches", micro}});
  }
  const StreamConfig& sc = s.manifest().stream;
  const Json out{{"step", step},
                 {"windows", Json::array({r.begin, r.end})},
                 {"seq_len", SeqLenAtStep(sc, step)},
                 {"tokens_before", ScheduledTokens(sc, 0, step)},
                 {"logical_ranks", K},
                 {"B_input", step_input},
                 {"B_target", step_targets},
                 {"ranks", ranks}};
  return out;
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
Json PhaseShares(CanonicalStream& s, uint64_t W) {
  const Manifest& m = s.manifest();
  const BatchSchedule schedule(m.stream.schedule);
  std::vector<MixturePhase> phases = {{0, {}}};
  for (const SourceSpec& src : m.sources) phases[0].shares.push_back({src.name, src.target_share});
  phases.insert(phases.end(), m.stream.mixture_phases.begin(), m.stream.mixture_phases.end());
  std::vector<int64_t> from;
  for (const MixturePhase& p : phases) from.push_back(p.from_step);
  Json out = Json::array();
  for (size_t i = 0; i < phases.size(); ++i) {
    const auto [start, end] = Stretch(schedule, from, i, W);
    const std::vector<uint64_t> a = TokensRead(s, start), b = TokensRead(s, end);
    double total = 0;
    uint64_t read = 0;
    for (const auto& [name, share] : phases[i].shares) total += share;
    for (size_t k = 0; k < m.sources.size(); ++k) read += b[k] - a[k];
    Json target = Json::object(), measured = Json::object();
    for (size_t k = 0; k < m.sources.size(); ++k) {
      double t = 0;
      for (const auto& [name, share] : phases[i].shares) t += name == m.sources[k].name ? share : 0;
      target[m.sources[k].name] = t / total;
      measured[m.sources[k].name] = read > 0 ? double(b[k] - a[k]) / double(read) : 0.0;
    }
    out.push_back(Json{{"from_step", phases[i].from_step},
                       {"start_window", start},
                       {"windows", end - start},
                       {"tokens", read},
                       {"target_share", target},
                       {"measured_share", measured}});
  }
  return out;
}

// Per sequence-length phase (phase 0: stream.seq_len from step 0): its first step and window,
// its length, and the windows and tokens of its stretch within [0, W).
Json LengthPhases(const CanonicalStream& s, uint64_t W) {
  const StreamConfig& sc = s.manifest().stream;
  const BatchSchedule schedule(sc.schedule);
  std::vector<SeqLenPhase> phases = {{0, sc.seq_len}};
  phases.insert(phases.end(), sc.seq_len_phases.begin(), sc.seq_len_phases.end());
  std::vector<int64_t> from;
  for (const SeqLenPhase& p : phases) from.push_back(p.from_step);
  Json out = Json::array();
  for (size_t i = 0; i < phases.size(); ++i) {
    const auto [start, end] = Stretch(schedule, from, i, W);
    out.push_back(Json{{"from_step", phases[i].from_step},
                       {"seq_len", phases[i].seq_len},
                       {"start_window", start},
                       {"windows", end - start},
                       {"tokens", (end - start) * static_cast<uint64_t>(phases[i].seq_len)}});
  }
  return out;
}

}  // namespace

Json SourceShares(CanonicalStream& s, uint64_t W) {
  const Manifest& m = s.manifest();
  if (s.num_windows() != kUnlimited) W = std::min(W, s.num_windows());
  const std::vector<uint64_t> counts = s.mixture().CountsBefore(W);
  const std::vector<uint64_t> tokens = TokensRead(s, W);
  const std::vector<double> sched = s.mixture().ScheduledShares();
  double share_total = 0;
  for (const auto& src : m.sources) share_total += src.target_share;
  uint64_t total = 0;
  for (uint64_t t : tokens) total += t;
  Json rows = Json::array();
  for (size_t i = 0; i < counts.size(); ++i) {
    const SourceStream& src = s.source(i);
    const double epochs = double(tokens[i] + (counts[i] ? 1 : 0)) / double(src.epoch_tokens());
    rows.push_back(
        Json{{"source", src.name()},
             {"sampling",
              m.sources[i].sampling == Sampling::kPermutation ? "permutation" : "replacement"},
             {"target_share", m.sources[i].target_share / share_total},
             {"scheduled_share", sched[i]},
             {"measured_share", total ? double(tokens[i]) / double(total) : 0.0},
             {"windows", counts[i]},
             {"tokens", tokens[i]},
             {"epoch_tokens", src.epoch_tokens()},
             {"epochs", epochs},
             {"ended", s.mixture().EndedBefore(static_cast<uint32_t>(i), W)}});
  }
  Json out{
      {"windows", W},
      {"stream_windows", s.num_windows() == kUnlimited ? Json("unlimited") : Json(s.num_windows())},
      {"seq_len", m.stream.seq_len},
      {"tokens", total},
      {"sources", rows}};
  if (!m.stream.mixture_phases.empty()) out["mixture_phases"] = PhaseShares(s, W);
  if (!m.stream.seq_len_phases.empty()) out["seq_len_phases"] = LengthPhases(s, W);
  return out;
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
