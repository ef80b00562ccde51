#include "audit/near_absence.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/error.h"
#include "core/le_bytes.h"

namespace trail::audit {
namespace {

using Json = nlohmann::ordered_json;

std::string Hex16(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

uint64_t FromHex16(const std::string& s, const std::string& where) {
  TRAIL_CHECK(s.size() == 16 && s.find_first_not_of("0123456789abcdefABCDEF") == std::string::npos,
              where, ": '", s, "' is not 16 hex digits");
  return std::stoull(s, nullptr, 16);
}

// The published band set: its header, and key i of band b on demand.
class RemoteBands {
 public:
  explicit RemoteBands(RemoteRun& remote) : remote_(remote) {
    const fetch::RemoteFile* f = remote.publication().Find(data::kBandSetPath);
    TRAIL_CHECK(f != nullptr, "the publication commits to no band keys (", data::kBandSetPath,
                "): publish it with --corpus-config to make near-absence proofs possible");
    const std::string fixed = remote.ReadRange(data::kBandSetPath, 0, data::kBandSetFixedBytes);
    const data::BandParams p =
        data::ParseBandParams(reinterpret_cast<const uint8_t*>(fixed.data()), data::kBandSetPath);
    const std::string head =
        remote.ReadRange(data::kBandSetPath, 0, data::BandSetHeaderBytes(p.bands));
    header_ = data::ParseBandSetHeader(reinterpret_cast<const uint8_t*>(head.data()), f->size,
                                       data::kBandSetPath);
  }
  const data::BandSetHeader& header() const { return header_; }
  uint64_t Key(uint32_t band, uint64_t i) {
    const uint64_t at = header_.KeyOffset(band, i);
    return GetU64(
        reinterpret_cast<const uint8_t*>(remote_.ReadRange(data::kBandSetPath, at, at + 8).data()));
  }
  std::string KeyHex(uint32_t band, uint64_t i, bool present) {
    return present ? Hex16(Key(band, i)) : "";
  }

 private:
  RemoteRun& remote_;
  data::BandSetHeader header_;
};

}  // namespace

Json NearAbsenceProofToJson(const NearAbsenceProof& p) {
  Json bands = Json::array();
  for (const BandExclusion& b : p.bands) {
    bands.push_back({{"key", Hex16(b.key)},
                     {"index", b.index},
                     {"before", b.before.empty() ? Json() : Json(b.before)},
                     {"after", b.after.empty() ? Json() : Json(b.after)}});
  }
  return {{"format", kDataProofFormat},
          {"kind", "near-absence"},
          {"publication", p.root},
          {"text", p.text},
          {"set", p.set},
          {"params",
           {{"ngram", p.params.ngram},
            {"bands", p.params.bands},
            {"rows", p.params.rows},
            {"seed", p.params.seed},
            {"threshold", p.params.threshold}}},
          {"bands", std::move(bands)},
          {"miss_probability", p.miss_probability}};
}

NearAbsenceProof ParseNearAbsenceProof(const std::string& text, const std::string& where) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
    TRAIL_CHECK(j.at("format") == kDataProofFormat && j.at("kind") == "near-absence", where,
                ": not a near-absence proof");
    NearAbsenceProof p;
    p.root = ToHex(DigestFromHex(j.at("publication").get<std::string>(), where + ": publication"));
    p.text = j.at("text").get<std::string>();
    p.set = j.at("set").get<std::string>();
    const auto& q = j.at("params");
    p.params = {q.at("ngram").get<uint32_t>(), q.at("bands").get<uint32_t>(),
                q.at("rows").get<uint32_t>(), q.at("seed").get<uint64_t>(),
                q.at("threshold").get<double>()};
    TRAIL_CHECK(p.params.bands >= 1 && p.params.rows >= 1 && p.params.ngram >= 1 &&
                    p.params.ngram <= 1024 &&
                    uint64_t{p.params.bands} * p.params.rows <= data::kMaxBandHashes,
                where, ": params out of range");
    TRAIL_CHECK(j.at("bands").is_array() && j.at("bands").size() == p.params.bands, where,
                ": needs one entry per band");
    for (const auto& b : j.at("bands")) {
      BandExclusion e;
      e.key = FromHex16(b.at("key").get<std::string>(), where);
      e.index = b.at("index").get<uint64_t>();
      for (auto [name, out] : {std::pair{"before", &e.before}, std::pair{"after", &e.after}}) {
        if (!b.at(name).is_null()) {
          *out = Hex16(FromHex16(b.at(name).get<std::string>(), where));
        }
      }
      p.bands.push_back(e);
    }
    p.miss_probability = j.at("miss_probability").get<double>();
    return p;
  } catch (const nlohmann::json::exception& e) {
    TRAIL_FAIL(where, ": not a near-absence proof (", e.what(), ")");
  }
}

data::BandParams PublishedBandParams(const RemoteOptions& o) {
  RemoteRun remote(o);
  return RemoteBands(remote).header().params;
}

NearAbsenceProof MakeNearAbsenceProof(const std::string& text, const std::vector<uint64_t>& keys,
                                      const RemoteOptions& o) {
  RemoteRun remote(o);
  RemoteBands set(remote);
  const data::BandSetHeader& h = set.header();
  TRAIL_CHECK(!keys.empty(), "the text has no word to shingle, so it has no band keys");
  TRAIL_CHECK(keys.size() == h.params.bands, "the text has ", keys.size(), " band keys for ",
              h.params.bands, " bands");
  NearAbsenceProof p;
  p.root = remote.publication().root;
  p.text = text;
  p.set = data::kBandSetPath;
  p.params = h.params;
  p.miss_probability = data::BandMissProbability(h.params.threshold, h.params);
  for (uint32_t b = 0; b < h.params.bands; ++b) {
    uint64_t lo = 0, hi = h.counts[b];  // the first key >= the text's
    while (lo < hi) {
      const uint64_t mid = lo + (hi - lo) / 2;
      if (set.Key(b, mid) < keys[b])
        lo = mid + 1;
      else
        hi = mid;
    }
    TRAIL_CHECK(lo == h.counts[b] || set.Key(b, lo) != keys[b], "a training document shares band ",
                b,
                " with this text: it is a candidate near duplicate, so its absence cannot be "
                "proved (`trail data find` shows the runs they share)");
    p.bands.push_back(
        {keys[b], lo, set.KeyHex(b, lo - 1, lo > 0), set.KeyHex(b, lo, lo < h.counts[b])});
  }
  return p;
}

ProofCheck VerifyNearAbsenceProof(const NearAbsenceProof& p, const std::vector<uint64_t>& keys,
                                  const RemoteOptions& o) {
  RemoteRun remote(o);
  ProofCheck c;
  if (!BeginProofCheck(remote, p.root, true, c)) return c;
  RemoteBands set(remote);
  const data::BandSetHeader& h = set.header();
  if (!(p.params == h.params)) {
    c.problems.push_back("the proof's parameters are not the ones the publication committed with");
    return c;
  }
  const double miss = data::BandMissProbability(h.params.threshold, h.params);
  if (std::abs(p.miss_probability - miss) > 1e-12 * std::max(1.0, miss)) {
    c.problems.push_back("the proof's miss_probability is not (1 - threshold^rows)^bands = " +
                         std::to_string(miss));
  }
  if (keys.size() != p.bands.size()) {
    c.problems.push_back("the proof's text has " + std::to_string(keys.size()) +
                         " band keys; the proof lists " + std::to_string(p.bands.size()));
    return c;
  }
  for (uint32_t b = 0; b < p.bands.size(); ++b) {
    const BandExclusion& e = p.bands[b];
    const std::string band = "band " + std::to_string(b);
    if (e.key != keys[b]) {
      c.problems.push_back(band + ": the proof's key is not the text's");
      continue;
    }
    if (e.index > h.counts[b]) {
      c.problems.push_back(band + ": index " + std::to_string(e.index) + " past its " +
                           std::to_string(h.counts[b]) + " keys");
      continue;
    }
    const bool has_before = e.index > 0, has_after = e.index < h.counts[b];
    const std::string before = set.KeyHex(b, e.index - 1, has_before);
    const std::string after = set.KeyHex(b, e.index, has_after);
    if (before != e.before || after != e.after) {
      c.problems.push_back(band + ": the published keys on either side of index " +
                           std::to_string(e.index) + " are not the proof's");
    } else if ((has_before && !(set.Key(b, e.index - 1) < e.key)) ||
               (has_after && !(e.key < set.Key(b, e.index)))) {
      c.problems.push_back(band + ": the published keys do not enclose the text's key: a " +
                           "training document shares this band with it");
    }
  }
  c.fetched_bytes = remote.totals().fetched_bytes;
  return c;
}

}  // namespace trail::audit
