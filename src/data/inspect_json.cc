// The JSON forms of data/inspect.h's reports: what `trail data inspect --json` and `trail data
// stats --json` print.
#include "data/inspect.h"

namespace trail::data {
namespace {

Json ToJson(const WindowDocument& d) {
  Json j{{"source", d.source},
         {"shard", d.shard},
         {"doc", d.doc},
         {"key", d.key},
         {"chunk", d.chunk},
         {"doc_offset", d.doc_offset},
         {"piece_offset", d.piece_offset},
         {"tokens", d.tokens},
         {"starts_with_bos", d.starts_with_bos},
         {"ends_with_eos", d.ends_with_eos},
         {d.draw_block ? "draw_block" : "epoch", d.pass},
         {"window_offset", d.window_offset}};
  if (d.text) j["text"] = *d.text;
  return j;
}

Json ToJson(const WindowToken& t) {
  Json j{{"token", t.token}, {"doc", t.doc}, {"position", t.position}, {"real", t.real}};
  if (t.piece) j["piece"] = *t.piece;
  if (t.has_label) {
    j["label"] = t.label, j["loss"] = t.loss, j["attn_doc"] = t.attn_doc;
    j["key_valid"] = t.key_valid;
  }
  return j;
}

Json SharesJson(const std::vector<std::pair<std::string, double>>& shares) {
  Json j = Json::object();
  for (const auto& [name, share] : shares) j[name] = share;
  return j;
}

}  // namespace

Json ToJson(const WindowInspection& r) {
  Json docs = Json::array(), tokens = Json::array();
  for (const WindowDocument& d : r.documents) docs.push_back(ToJson(d));
  for (const WindowToken& t : r.tokens) tokens.push_back(ToJson(t));
  Json j{{"window", r.window},
         {"source", r.source},
         {"source_window", r.source_window},
         {"source_offset", r.source_offset},
         {"seq_len", r.seq_len},
         {"real_tokens", r.real_tokens},
         {"targets", r.targets},
         {"documents", docs},
         {"tokens", tokens}};
  if (r.step) j["step"] = *r.step;
  if (r.mixture_phase_from_step) j["mixture_phase_from_step"] = *r.mixture_phase_from_step;
  if (r.seq_len_phase_from_step) j["seq_len_phase_from_step"] = *r.seq_len_phase_from_step;
  return j;
}

Json ToJson(const StepInspection& r) {
  Json ranks = Json::array();
  for (const RankInspection& rk : r.ranks) {
    Json micro = Json::array();
    for (const MicroBatchInspection& mb : rk.micro_batches) {
      Json windows = Json::array();
      for (const std::optional<uint64_t>& w : mb.windows) {
        windows.push_back(w ? Json(*w) : Json(nullptr));
      }
      micro.push_back(Json{{"windows", windows},
                           {"B_input", mb.input_tokens},
                           {"real_tokens", mb.real_tokens},
                           {"B_target", mb.target_tokens}});
    }
    ranks.push_back(Json{{"rank", rk.rank}, {"micro_batches", micro}});
  }
  return Json{{"step", r.step},
              {"windows", Json::array({r.first_window, r.end_window})},
              {"seq_len", r.seq_len},
              {"tokens_before", r.tokens_before},
              {"logical_ranks", r.logical_ranks},
              {"B_input", r.input_tokens},
              {"B_target", r.target_tokens},
              {"ranks", ranks}};
}

Json ToJson(const SourceShareReport& r) {
  Json rows = Json::array();
  for (const SourceShare& s : r.sources) {
    rows.push_back(
        Json{{"source", s.source},
             {"sampling", s.sampling == Sampling::kPermutation ? "permutation" : "replacement"},
             {"target_share", s.target_share},
             {"scheduled_share", s.scheduled_share},
             {"measured_share", s.measured_share},
             {"windows", s.windows},
             {"tokens", s.tokens},
             {"epoch_tokens", s.epoch_tokens},
             {"epochs", s.epochs},
             {"ended", s.ended}});
  }
  Json j{{"windows", r.windows},
         {"stream_windows",
          r.stream_windows == kUnlimited ? Json("unlimited") : Json(r.stream_windows)},
         {"seq_len", r.seq_len},
         {"tokens", r.tokens},
         {"sources", rows}};
  if (!r.mixture_phases.empty()) {
    Json phases = Json::array();
    for (const MixturePhaseShares& p : r.mixture_phases) {
      phases.push_back(Json{{"from_step", p.from_step},
                            {"start_window", p.start_window},
                            {"windows", p.windows},
                            {"tokens", p.tokens},
                            {"target_share", SharesJson(p.target_share)},
                            {"measured_share", SharesJson(p.measured_share)}});
    }
    j["mixture_phases"] = phases;
  }
  if (!r.seq_len_phases.empty()) {
    Json phases = Json::array();
    for (const LengthPhaseTokens& p : r.seq_len_phases) {
      phases.push_back(Json{{"from_step", p.from_step},
                            {"seq_len", p.seq_len},
                            {"start_window", p.start_window},
                            {"windows", p.windows},
                            {"tokens", p.tokens}});
    }
    j["seq_len_phases"] = phases;
  }
  return j;
}

}  // namespace trail::data
