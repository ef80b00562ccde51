// Proofs about the training data of a published run (docs/audit.md, "Proofs about the training
// data"). A membership proof says: document tokens [a, b) of one document of a published shard
// are these tokens, and the run's published steps read them in exactly these windows. It holds
// no corpus bytes and no key material beyond the publication's root, so it is small enough to
// mail; the verifier checks it against the signed publication, fetching only what checking it
// reads (the run's small files, the manifest, the shards' headers and indexes, and the chunks of
// the stretch's tokens), and recomputes the readings from the stream's specification.
//
// Format "trail.data-proof.v1" (JSON, one source: MembershipProofToJson / ParseMembershipProof):
//   {"format": "trail.data-proof.v1", "kind": "membership",
//    "publication": the bundle's root (hex),
//    "document": {"source": name, "shard": its path in the bundle, "doc": index, "key": key},
//    "doc_tokens": [a, b], "tokens_sha256": SHA-256 of the ids [a, b) as 4-byte LE words,
//    "steps": the publication's steps,
//    "readings": [as `trail data find --json` writes them (data/find.h)]}
//
// An absence proof (kind "absence") says: no training document has exactly these tokens. The
// publication commits to the sorted set of the training documents' content hashes
// (data/document_set.h, kDocumentSetPath); the proof gives the tokens, their hash h, the set's
// size n and the index i with entry i-1 < h < entry i (either end may be absent: i = 0 or i = n),
// and those two entries:
//   {"format": "trail.data-proof.v1", "kind": "absence", "publication": root,
//    "tokens": [ids], "tokens_sha256": h, "set": kDocumentSetPath, "count": n, "index": i,
//    "before": entry i-1 or null, "after": entry i or null}
// The verifier fetches the set's header and the one or two chunks holding the two entries.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "audit/remote_run.h"
#include "data/find.h"

namespace trail::audit {

inline constexpr const char* kDataProofFormat = "trail.data-proof.v1";

struct MembershipProof {
  std::string root;
  std::string source, shard, key;  // shard: its path in the bundle
  uint64_t doc = 0;
  data::TokenRange tokens;
  std::string tokens_sha256;
  int64_t steps = 0;
  std::vector<data::Reading> readings;
};

nlohmann::ordered_json MembershipProofToJson(const MembershipProof& p);
// Throws trail::Error naming `where` and the field for a malformed proof.
MembershipProof ParseMembershipProof(const std::string& text, const std::string& where);

// The proof of `run` (a stretch found in the training documents of the local `stream`) against
// the publication at `bundle` (a directory or URL; only publication.json is read): its root, the
// shard's bundle path, the stretch's token hash, and its readings by the publication's steps.
// Throws when the publication's data manifest is not the stream's (`manifest_sha256`).
MembershipProof MakeMembershipProof(data::CanonicalStream& stream, const Digest& manifest_sha256,
                                    const data::SharedRun& run, const std::string& bundle);

struct AbsenceProof {
  std::string root;
  std::vector<uint32_t> tokens;
  std::string tokens_sha256, set;
  uint64_t count = 0, index = 0;
  std::string before, after;  // hex, "" when absent
};

nlohmann::ordered_json AbsenceProofToJson(const AbsenceProof& p);
AbsenceProof ParseAbsenceProof(const std::string& text, const std::string& where);
// The proof's kind ("membership", "absence" or "near-absence", audit/near_absence.h); throws
// naming `where` for anything else.
std::string DataProofKind(const std::string& text, const std::string& where);

// The absence proof of `tokens` against the publication at o.location, found by binary search
// over the committed set (a chunk per probe). Throws trail::Error when a training document has
// exactly these tokens (there is no absence to prove) or the publication commits to no set.
AbsenceProof MakeAbsenceProof(const std::vector<uint32_t>& tokens, const RemoteOptions& o);

struct ProofCheck {
  std::vector<std::string> problems;  // each names what is wrong; empty: the proof holds
  std::string root, signer, binding;
  uint64_t fetched_bytes = 0, bundle_bytes = 0;
  bool ok() const { return problems.empty(); }
};

// The check of a proof begun: the publication's root and size recorded; false (with the
// problem) when the proof is for another root. With `bind`, the publisher is bound first
// (PublisherError when refused) and the signer recorded.
bool BeginProofCheck(RemoteRun& remote, const std::string& root, bool bind, ProofCheck& c);
// ok, root, signer, binding, problems, fetched_bytes, bundle_bytes (`verify-proof --json`).
nlohmann::ordered_json ProofCheckToJson(const ProofCheck& c);

// Checks `p` against the publication at o.location (PublisherError, fetch::FetchError as an
// audit throws them): the root, the document and its key in the published shard, the hash of
// the published tokens [a, b), the steps, every reading recomputed from the stream (none
// missing, none added), and that the trajectory's record of each reading's step consumes its
// window.
ProofCheck VerifyMembershipProof(const MembershipProof& p, const RemoteOptions& o);
// Checks `p`: the root, the tokens' hash, the set's count, and that the published entries i-1
// and i are the proof's and enclose the hash.
ProofCheck VerifyAbsenceProof(const AbsenceProof& p, const RemoteOptions& o);

}  // namespace trail::audit
