#include "data/find_index.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>

#include "core/error.h"
#include "core/le_bytes.h"
#include "core/mix.h"

namespace trail::data {
namespace {

constexpr char kMagic[9] = "TRLFIND1";
constexpr char kTrailer[9] = "TRLFEND1";
constexpr uint32_t kVersion = 1;
constexpr size_t kHeaderBytes = 128, kDocBytes = 40, kGramBytes = 16, kTrailerBytes = 40;

struct GramEntry {
  uint64_t hash;
  uint32_t doc, offset;
  auto operator<=>(const GramEntry&) const = default;
};
struct DocEntry {
  Digest hash;
  uint64_t doc;
  auto operator<=>(const DocEntry&) const = default;
};

// Writes bytes to the file and to the running hash of the trailer.
struct HashedWriter {
  AtomicFile& file;
  Sha256Hasher hash;
  void Write(const void* p, size_t n) {
    file.Write(p, n);
    hash.Update(p, n);
  }
};

std::string Header(const FindIndexOptions& opt, uint64_t docs, uint64_t grams, const Digest& m) {
  std::string h(kMagic, 8);
  AppendU32(h, kVersion);
  AppendU32(h, opt.gram);
  AppendU32(h, opt.window);
  AppendU32(h, 0);
  AppendU64(h, docs);
  AppendU64(h, grams);
  h.append(reinterpret_cast<const char*>(m.data()), m.size());
  h.resize(kHeaderBytes, '\0');
  return h;
}

}  // namespace

uint64_t GramHash(const uint32_t* tokens, uint32_t n) {
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (uint32_t i = 0; i < n; ++i) x = Mix64(x ^ tokens[i]);
  return x;
}

std::vector<uint32_t> WinnowedGrams(std::span<const uint32_t> tokens, uint32_t n, uint32_t w) {
  std::vector<uint32_t> out;
  if (n == 0 || w == 0 || tokens.size() < n) return out;
  const size_t grams = tokens.size() - n + 1;
  std::vector<uint64_t> h(grams);
  for (size_t i = 0; i < grams; ++i) h[i] = GramHash(tokens.data() + i, n);
  // A monotone queue: indices of increasing hashes; equal hashes leave only the rightmost.
  std::deque<size_t> q;
  for (size_t j = 0; j < grams; ++j) {
    while (!q.empty() && h[q.back()] >= h[j]) q.pop_back();
    q.push_back(j);
    if (q.front() + w <= j) q.pop_front();
    // Window [j - w + 1, j] is complete from j = w - 1 on; a short document has one window.
    const bool complete = j + 1 >= w || j + 1 == grams;
    if (complete && (out.empty() || out.back() != q.front())) {
      out.push_back(static_cast<uint32_t>(q.front()));
    }
  }
  return out;
}

Digest TokensHash(std::span<const uint32_t> tokens) {
  Sha256Hasher h;
  h.Update(tokens.data(), tokens.size() * 4);  // little-endian host (core/le_bytes.h)
  return h.Finish();
}

DocumentNumbers::DocumentNumbers(const CanonicalStream& stream) {
  starts_.push_back(0);
  for (uint32_t i = 0; i < stream.num_sources(); ++i) {
    for (uint32_t j = 0; j < stream.source(i).num_shards(); ++j) {
      shards_.push_back({i, j});
      starts_.push_back(starts_.back() + stream.source(i).shard(j).num_docs());
    }
  }
}

DocumentRef DocumentNumbers::Ref(uint64_t number) const {
  TRAIL_CHECK(number < size(), "document number ", number, " is past the ", size(),
              " training documents");
  const size_t k = std::upper_bound(starts_.begin(), starts_.end(), number) - starts_.begin() - 1;
  return {shards_[k].first, shards_[k].second, number - starts_[k]};
}

std::vector<uint32_t> DocumentTokens(const CanonicalStream& stream, const DocumentRef& ref) {
  const ShardReader& sh = stream.source(ref.source).shard(ref.shard);
  const DocRecord rec = sh.doc(ref.doc);
  std::vector<int32_t> raw(rec.length);
  sh.CopyTokens(rec.token_start, rec.length, raw.data());
  return {raw.begin(), raw.end()};
}

FindIndexSummary BuildFindIndex(CanonicalStream& stream, const Digest& manifest_sha256,
                                const std::string& path, const FindIndexOptions& opt) {
  TRAIL_CHECK(opt.gram >= 1 && opt.window >= 1, "find index: gram and window must be >= 1");
  const auto t0 = std::chrono::steady_clock::now();
  const DocumentNumbers numbers(stream);
  TRAIL_CHECK(numbers.size() < (uint64_t{1} << 32), "find index: ", numbers.size(),
              " documents; the format numbers at most 2^32 - 1");
  FindIndexSummary sum;
  std::vector<DocEntry> docs;
  std::vector<GramEntry> grams;
  for (uint64_t g = 0; g < numbers.size(); ++g) {
    const std::vector<uint32_t> toks = DocumentTokens(stream, numbers.Ref(g));
    docs.push_back({TokensHash(toks), g});
    for (uint32_t off : WinnowedGrams(toks, opt.gram, opt.window)) {
      grams.push_back({GramHash(toks.data() + off, opt.gram), static_cast<uint32_t>(g), off});
    }
    sum.tokens += toks.size();
  }
  std::sort(docs.begin(), docs.end());
  std::sort(grams.begin(), grams.end());
  AtomicFile file(path);
  HashedWriter out{file, {}};
  const std::string header = Header(opt, docs.size(), grams.size(), manifest_sha256);
  out.Write(header.data(), header.size());
  for (const DocEntry& d : docs) {
    uint8_t rec[kDocBytes];
    std::memcpy(rec, d.hash.data(), 32);
    PutU64(rec + 32, d.doc);
    out.Write(rec, sizeof rec);
  }
  for (const GramEntry& e : grams) {
    uint8_t rec[kGramBytes];
    PutU64(rec, e.hash);
    PutU32(rec + 8, e.doc);
    PutU32(rec + 12, e.offset);
    out.Write(rec, sizeof rec);
  }
  const Digest trailer = out.hash.Finish();
  file.Write(kTrailer, 8);
  file.Write(trailer.data(), trailer.size());
  sum.bytes = file.size();
  file.Commit();
  sum.documents = docs.size();
  sum.grams = grams.size();
  sum.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return sum;
}

FindIndex::FindIndex(const std::string& path, const Digest& manifest_sha256) : file_(path) {
  const uint8_t* p = file_.data();
  const size_t size = file_.size();
  const std::string rebuild = "; rebuild it with `trail data index`";
  TRAIL_CHECK(size >= kHeaderBytes + kTrailerBytes && std::memcmp(p, kMagic, 8) == 0, path,
              ": not a trail find index", rebuild);
  TRAIL_CHECK(GetU32(p + 8) == kVersion, path, ": find index version ", GetU32(p + 8),
              " (this trail reads ", kVersion, ")", rebuild);
  gram_ = GetU32(p + 12);
  window_ = GetU32(p + 16);
  num_docs_ = GetU64(p + 24);
  num_grams_ = GetU64(p + 32);
  TRAIL_CHECK(gram_ >= 1 && window_ >= 1 && num_docs_ < (uint64_t{1} << 32) &&
                  num_grams_ < (uint64_t{1} << 40),
              path, ": bad find index header", rebuild);
  const uint64_t body = kHeaderBytes + num_docs_ * kDocBytes + num_grams_ * kGramBytes;
  TRAIL_CHECK(size == body + kTrailerBytes, path, ": ", size, " bytes where the header says ",
              body + kTrailerBytes, " (truncated or extended)", rebuild);
  TRAIL_CHECK(
      std::memcmp(p + body, kTrailer, 8) == 0 &&
          Sha256({p, static_cast<size_t>(body)}) == *reinterpret_cast<const Digest*>(p + body + 8),
      path, ": the find index's trailing SHA-256 does not match its bytes (damaged)", rebuild);
  TRAIL_CHECK(std::memcmp(p + 40, manifest_sha256.data(), 32) == 0, path,
              ": built for another data manifest (its SHA-256 differs)", rebuild);
  docs_ = p + kHeaderBytes;
  grams_ = docs_ + num_docs_ * kDocBytes;
}

std::vector<uint64_t> FindIndex::DocumentsWithHash(const Digest& h) const {
  uint64_t lo = 0, hi = num_docs_;
  while (lo < hi) {  // the first record with hash >= h
    const uint64_t mid = lo + (hi - lo) / 2;
    if (std::memcmp(docs_ + mid * kDocBytes, h.data(), 32) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  std::vector<uint64_t> out;
  for (; lo < num_docs_ && std::memcmp(docs_ + lo * kDocBytes, h.data(), 32) == 0; ++lo) {
    out.push_back(GetU64(docs_ + lo * kDocBytes + 32));
  }
  return out;
}

std::vector<FindIndex::GramHit> FindIndex::GramsWithHash(uint64_t h, size_t limit,
                                                         bool* truncated) const {
  uint64_t lo = 0, hi = num_grams_;
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (GetU64(grams_ + mid * kGramBytes) < h)
      lo = mid + 1;
    else
      hi = mid;
  }
  std::vector<GramHit> out;
  for (; lo < num_grams_ && GetU64(grams_ + lo * kGramBytes) == h; ++lo) {
    if (out.size() == limit) {
      *truncated = true;
      break;
    }
    out.push_back({GetU32(grams_ + lo * kGramBytes + 8), GetU32(grams_ + lo * kGramBytes + 12)});
  }
  return out;
}

}  // namespace trail::data
