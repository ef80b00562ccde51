#include "train/trajectory.h"

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


}  // namespace

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
  std::string s = "{\"step\":" + std::to_string(r.step) + ",\"windows\":[" +
                  std::to_string(r.window_begin) + "," + std::to_string(r.window_end) + "]" +
                  ",\"tokens\":" + std::to_string(r.tokens_before) +
                  ",\"targets\":" + std::to_string(r.target_tokens) +
                  ",\"lr\":" + Num(r.lr) + ",\"lr_bits\":\"" + Bits(r.lr) + "\"" +
                  ",\"loss\":" + Num(r.loss) + ",\"loss_bits\":\"" + Bits(r.loss) + "\"" +
                  ",\"z_loss_bits\":\"" + Bits(r.z_loss) + "\"" +
                  ",\"grad_norm\":" + Num(r.grad_norm) + ",\"grad_norm_bits\":\"" +
                  Bits(r.grad_norm) + "\"" + ",\"clip_bits\":\"" + Bits(r.clip_coef) + "\"" +
                  ",\"skipped\":" + (r.skipped ? "\"" + r.skip_reason + "\"" : "null") +
                  ",\"batch\":\"" + ToHex(r.batch_hash) + "\"" + ",\"grads\":\"" +
                  ToHex(r.grads_hash) + "\"" + ",\"params\":" + (r.state_hashed ? "\"" + ToHex(r.params_hash) + "\"" : "null") +
                  ",\"optim\":" + (r.state_hashed ? "\"" + ToHex(r.optim_hash) + "\"" : "null") +
                  "}";
  return s;
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
  for (const char* key : {"step", "windows", "tokens", "targets", "batch", "lr_bits", "loss_bits",
                          "z_loss_bits", "grad_norm_bits", "grads", "clip_bits", "skipped",
                          "params", "optim", "chain"}) {
    const nlohmann::json x = a.value(key, nlohmann::json()), y = b.value(key, nlohmann::json());
    if (x != y) return {key, x.dump(), y.dump()};
  }
  return {"the record", expected, actual};
}

std::string FirstDifference(const std::string& expected, const std::string& actual) {
  const RecordDifference d = DifferingField(expected, actual);
  if (d.field.empty()) return "";
  return d.field + " (expected " + d.expected + ", got " + d.actual + ")";
}

}  // namespace trail::train
