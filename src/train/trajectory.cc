#include "train/trajectory.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_util.h"
#include "core/json_read.h"

namespace trail::train {
namespace {

std::string Bits(float f) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08x", std::bit_cast<uint32_t>(f));
  return buf;
}

std::string Num(float f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", double(f));
  return buf;
}

std::string Quoted(const std::string& s) { return "\"" + s + "\""; }
std::string QuotedHexOrNull(bool present, const Digest& d) {
  return present ? Quoted(ToHex(d)) : "null";
}

// The keys a reader of the state needs (RecordedStateOf), written once.
constexpr const char* kWindowsKey = "windows";
constexpr const char* kParamsKey = "params";
constexpr const char* kOptimKey = "optim";

constexpr const char* kDataMeaning = " (the step read other data than the run trained on)";
constexpr const char* kComputeMeaning = " (the forward or backward computation differs)";
constexpr const char* kUpdateMeaning = " (the update differs)";

// clang-format off
const TrajectoryField kFields[] = {
  {"step", [](const StepResult& r) { return std::to_string(r.step); }, 0, ""},
  {kWindowsKey, [](const StepResult& r) {
     return "[" + std::to_string(r.window_begin) + "," + std::to_string(r.window_end) + "]"; },
   1, kDataMeaning},
  {"tokens", [](const StepResult& r) { return std::to_string(r.tokens_before); }, 2, ""},
  {"targets", [](const StepResult& r) { return std::to_string(r.target_tokens); }, 3, kDataMeaning},
  {"lr", [](const StepResult& r) { return Num(r.lr); }, -1, ""},
  {"lr_bits", [](const StepResult& r) { return Quoted(Bits(r.lr)); }, 5, ""},
  {"loss", [](const StepResult& r) { return Num(r.loss); }, -1, ""},
  {"loss_bits", [](const StepResult& r) { return Quoted(Bits(r.loss)); }, 6, kComputeMeaning},
  {"z_loss_bits", [](const StepResult& r) { return Quoted(Bits(r.z_loss)); }, 7, ""},
  {"grad_norm", [](const StepResult& r) { return Num(r.grad_norm); }, -1, ""},
  {"grad_norm_bits", [](const StepResult& r) { return Quoted(Bits(r.grad_norm)); }, 8,
   kComputeMeaning},
  {"clip_bits", [](const StepResult& r) { return Quoted(Bits(r.clip_coef)); }, 10, ""},
  {"skipped", [](const StepResult& r) {
     return r.skipped() ? Quoted(SkipReasonName(r.skip)) : std::string("null"); }, 11, ""},
  {"batch", [](const StepResult& r) { return Quoted(ToHex(r.batch_hash)); }, 4, kDataMeaning},
  {"grads", [](const StepResult& r) { return Quoted(ToHex(r.grads_hash)); }, 9, kComputeMeaning},
  {kParamsKey, [](const StepResult& r) { return QuotedHexOrNull(r.state_hashed, r.params_hash); },
   12, kUpdateMeaning},
  {kOptimKey, [](const StepResult& r) { return QuotedHexOrNull(r.state_hashed, r.optim_hash); },
   13, kUpdateMeaning},
  {"chain", nullptr, 14, " (every recorded field matches but the record's bytes differ)"},
};
// clang-format on

}  // namespace

std::span<const TrajectoryField> TrajectoryFields() { return kFields; }

RecordedState RecordedStateOf(const TrajectoryRecord& record) {
  const std::string where = StrCat("trajectory record of step ", record.step);
  RecordedState s;
  try {
    const nlohmann::json j = nlohmann::json::parse(record.line);
    s.window_cursor = JsonInteger<uint64_t>(j.at(kWindowsKey).at(1), where + ": windows");
    const nlohmann::json &p = j.at(kParamsKey), &o = j.at(kOptimKey);
    TRAIL_CHECK(p.is_null() == o.is_null(), where, ": params and optim must both be null or not");
    if (!p.is_null()) s.params = p.get<std::string>(), s.optim = o.get<std::string>();
  } catch (const nlohmann::json::exception& e) {
    TRAIL_FAIL(where, ": malformed: ", e.what());
  }
  return s;
}

const TrajectoryField* FindTrajectoryField(const std::string& key) {
  for (const TrajectoryField& f : kFields) {
    if (key == f.key) return &f;
  }
  return nullptr;
}

Digest GenesisHash(const std::string& recipe_sha, const std::string& manifest_sha,
                   const Digest& initial_params) {
  Sha256Hasher h;
  const std::string tag = "trail.trajectory.v1";
  h.Update(tag.data(), tag.size());
  h.Update(recipe_sha.data(), recipe_sha.size());
  h.Update(manifest_sha.data(), manifest_sha.size());
  const std::string p = ToHex(initial_params);
  h.Update(p.data(), p.size());
  return h.Finish();
}

std::string TrajectoryBody(const StepResult& r) {
  std::string s = "{";
  for (const TrajectoryField& f : TrajectoryFields()) {
    if (f.value == nullptr) continue;
    if (s.size() > 1) s += ",";
    s += "\"" + std::string(f.key) + "\":" + f.value(r);
  }
  return s + "}";
}

std::string TrajectoryLine(const std::string& body, const Digest& chain) {
  return body.substr(0, body.size() - 1) + ",\"chain\":\"" + ToHex(chain) + "\"}";
}

Digest ChainNext(const Digest& prev, const std::string& body) {
  Sha256Hasher h;
  h.Update(prev.data(), prev.size());
  h.Update(body.data(), body.size());
  return h.Finish();
}

std::vector<TrajectoryRecord> ReadChainedPrefix(const std::string& path, const Digest* genesis,
                                                std::string* problem, uint64_t* complete_bytes) {
  const std::string text = ReadFileToString(path);
  std::vector<TrajectoryRecord> out;
  size_t pos = 0;
  Digest prev = genesis ? *genesis : Digest{};
  problem->clear();
  // Each check below ends the prefix with a description of the first record that fails it.
  auto stop = [&](auto&&... why) {
    *problem = StrCat(path, ":", out.size() + 1, ": ", why...);
    return out;
  };
  while (pos < text.size()) {
    const size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) break;  // torn last line
    TrajectoryRecord rec;
    rec.line = text.substr(pos, nl - pos);
    try {
      const nlohmann::json j = nlohmann::json::parse(rec.line);
      rec.step = JsonInteger<int64_t>(j.at("step"), "step");
      rec.chain = DigestFromHex(j.at("chain").get<std::string>(), "chain");
    } catch (const std::exception& e) {
      return stop("malformed trajectory record: ", e.what());
    }
    const int64_t want = out.empty() ? (genesis ? 0 : rec.step) : out.back().step + 1;
    if (rec.step != want) return stop("step ", rec.step, " where step ", want, " belongs");
    const size_t cut = rec.line.rfind(",\"chain\":");
    if (cut == std::string::npos) return stop("record has no chain");
    const std::string body = rec.line.substr(0, cut) + "}";
    if ((genesis != nullptr || !out.empty()) && ChainNext(prev, body) != rec.chain) {
      return stop("chained hash of step ", rec.step,
                  " does not match its record (the trajectory was altered)");
    }
    prev = rec.chain;
    out.push_back(std::move(rec));
    pos = nl + 1;
  }
  if (complete_bytes) *complete_bytes = pos;
  return out;
}

std::vector<TrajectoryRecord> ReadTrajectory(const std::string& path, const Digest* genesis,
                                             uint64_t* complete_bytes) {
  std::string problem;
  std::vector<TrajectoryRecord> out = ReadChainedPrefix(path, genesis, &problem, complete_bytes);
  TRAIL_CHECK(problem.empty(), problem);
  return out;
}

RecordDifference DifferingField(const std::string& expected, const std::string& actual) {
  if (expected == actual) return {};
  nlohmann::json a, b;
  try {
    a = nlohmann::json::parse(expected), b = nlohmann::json::parse(actual);
  } catch (const nlohmann::json::exception&) {
    return {"the record", expected, actual};
  }
  std::vector<const TrajectoryField*> order;
  for (const TrajectoryField& f : kFields) {
    if (f.compare_order >= 0) order.push_back(&f);
  }
  std::sort(order.begin(), order.end(), [](const TrajectoryField* x, const TrajectoryField* y) {
    return x->compare_order < y->compare_order;
  });
  for (const TrajectoryField* f : order) {
    const nlohmann::json x = a.value(f->key, nlohmann::json()),
                         y = b.value(f->key, nlohmann::json());
    if (x != y) return {f->key, x.dump(), y.dump()};
  }
  return {"the record", expected, actual};
}

std::string FirstDifference(const std::string& expected, const std::string& actual) {
  const RecordDifference d = DifferingField(expected, actual);
  if (d.field.empty()) return "";
  return d.field + " (expected " + d.expected + ", got " + d.actual + ")";
}

}  // namespace trail::train
