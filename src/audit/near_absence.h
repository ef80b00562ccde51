// A near-absence proof (docs/audit.md, "Proofs about the training data"): no training document
// is a near duplicate of a text, in the corpus factory's sense. The publication commits to the
// sorted LSH band keys of every training document, band by band (data/band_set.h); the proof
// gives the text, the factory's parameters, and for every band the text's key k, the index i of
// the first published key above it and the keys at i - 1 and i, which enclose k. So no training
// document shares a band with the text: one whose Jaccard similarity to it is s would have
// escaped every band with probability (1 - s^rows)^bands (3.6e-4 at s = 0.8 with 20 × 5).
//
//   {"format": "trail.data-proof.v1", "kind": "near-absence", "publication": root,
//    "text": the normalized text, "set": kBandSetPath,
//    "params": {"ngram", "bands", "rows", "seed", "threshold"},
//    "bands": [{"key": 16 hex, "index": i, "before": 16 hex or null, "after": 16 hex or null}],
//    "miss_probability": (1 - threshold^rows)^bands}
//
// The text's band keys come from the corpus layer (corpus/dedup/band_commitment.h), which this
// layer does not reach: the caller computes them with the proof's parameters and passes them in.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "audit/data_proof.h"
#include "data/band_set.h"

namespace trail::audit {

struct BandExclusion {
  uint64_t key = 0, index = 0;
  std::string before, after;  // 16 hex digits, "" when absent
};

struct NearAbsenceProof {
  std::string root, text, set;
  data::BandParams params;
  std::vector<BandExclusion> bands;
  double miss_probability = 0;
};

nlohmann::ordered_json NearAbsenceProofToJson(const NearAbsenceProof& p);
NearAbsenceProof ParseNearAbsenceProof(const std::string& text, const std::string& where);

// The parameters the publication at o.location committed its band keys with; throws when it
// commits to none (published without the corpus build's configuration).
data::BandParams PublishedBandParams(const RemoteOptions& o);

// The proof for `text` whose band keys (computed with PublishedBandParams) are `keys`. Throws
// when a training document shares a band with the text (a candidate near duplicate: there is no
// absence to prove) or the text has no band keys.
NearAbsenceProof MakeNearAbsenceProof(const std::string& text, const std::vector<uint64_t>& keys,
                                      const RemoteOptions& o);

// Checks `p`; `keys` are p.text's band keys recomputed by the caller with p.params.
ProofCheck VerifyNearAbsenceProof(const NearAbsenceProof& p, const std::vector<uint64_t>& keys,
                                  const RemoteOptions& o);

}  // namespace trail::audit
