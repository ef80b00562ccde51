#include "corpus/langid/fasttext_predict.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstring>

#include "core/error.h"

namespace trail::corpus::ft {
namespace {

constexpr std::string_view kEos = "</s>";
constexpr std::string_view kLabelPrefix = "__label__";

// fastText's std_log: the argument widened to double for the + 1e-5 and the log.
float StdLog(float x) { return static_cast<float>(std::log(double(x) + 1e-5)); }

bool ComparePairs(const std::pair<float, int32_t>& l, const std::pair<float, int32_t>& r) {
  return l.first > r.first;
}

// Adds (score, label) to the heap of the k best (a min-heap under ComparePairs), as fastText does.
void PushBest(int32_t k, float score, int32_t label, std::vector<std::pair<float, int32_t>>& heap) {
  heap.push_back({score, label});
  std::push_heap(heap.begin(), heap.end(), ComparePairs);
  if (int32_t(heap.size()) > k) {
    std::pop_heap(heap.begin(), heap.end(), ComparePairs);
    heap.pop_back();
  }
}

// A per-thread cache of unknown tokens' n-gram rows. Entries carry the predictor's serial
// number, so predictors never see each other's rows.
struct UnknownWordCache {
  static constexpr size_t kSlots = 1 << 13;
  struct Slot {
    uint64_t serial = 0;
    std::string token;
    std::vector<int32_t> rows;
  };
  std::vector<Slot> slots{kSlots};
};

std::atomic<uint64_t> next_serial{1};

// Longer unknown tokens (rare, and seldom repeated) are not cached: their rows are streamed.
constexpr size_t kMaxCachedToken = 48;

// The number of set bits, without the library call a build for baseline x86-64 (no popcnt
// instruction) makes of __builtin_popcountll: a lookup of the pruned index takes one.
uint32_t PopCount(uint64_t x) {
  x = x - ((x >> 1) & 0x5555555555555555ull);
  x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
  return static_cast<uint32_t>((x * 0x0101010101010101ull) >> 56);
}

bool IsDelimiter(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f' || c == '\0';
}

}  // namespace

uint32_t FnvHash(std::string_view s) {
  uint32_t h = 2166136261u;
  for (char c : s) h = (h ^ uint32_t(int8_t(c))) * 16777619u;
  return h;
}

Predictor::Predictor(Model model) : model_(std::move(model)), serial_(next_serial++) {
  const int32_t size = model_.nwords + model_.nlabels;
  size_t cap = 16;
  while (cap < 2 * size_t(size)) cap *= 2;
  slots_.assign(cap, WordSlot{});
  for (int32_t i = 0; i < size; ++i) {
    const uint32_t h = FnvHash(model_.words[size_t(i)]);
    size_t s = h & (cap - 1);
    while (slots_[s].id != -1 && model_.words[size_t(slots_[s].id)] != model_.words[size_t(i)])
      s = (s + 1) & (cap - 1);
    if (slots_[s].id == -1)
      slots_[s] = {h, i};  // a repeated entry: the first one is found, as in fastText
  }
  if (model_.pruneidx_size > 0) BuildKeptIndex();
  // Each word's rows: itself, then its n-grams (none for the end-of-sentence token).
  for (int32_t i = 0; i < model_.nwords; ++i) {
    subword_begin_.push_back(int64_t(subwords_.size()));
    subwords_.push_back(i);
    if (model_.words[size_t(i)] != kEos) {
      ForEachSubword(model_.words[size_t(i)], [&](int32_t r) { subwords_.push_back(r); });
    }
  }
  subword_begin_.push_back(int64_t(subwords_.size()));
  if (model_.args.loss == LossKind::kHierarchicalSoftmax) {
    // The Huffman tree over the label counts (labels are stored by descending count): leaves
    // 0..L-1, inner nodes L..2L-2, each joining the two smallest remaining counts.
    const int32_t L = model_.nlabels;
    std::vector<int64_t> count(size_t(2 * L - 1), int64_t(1e15));
    for (int32_t i = 0; i < L; ++i) count[size_t(i)] = model_.counts[size_t(model_.nwords + i)];
    tree_.assign(size_t(2 * L - 1), Node{});
    int32_t leaf = L - 1, node = L;
    for (int32_t i = L; i < 2 * L - 1; ++i) {
      int32_t mini[2] = {0, 0};
      for (int32_t& m : mini)
        m = (leaf >= 0 && count[size_t(leaf)] < count[size_t(node)]) ? leaf-- : node++;
      tree_[size_t(i)] = {mini[0], mini[1]};
      count[size_t(i)] = count[size_t(mini[0])] + count[size_t(mini[1])];
    }
  }
  log_threshold_ = StdLog(0.0f);
}

// The pruned index as a bitmap over buckets [0, top) (top: one past the largest kept bucket
// below `bucket`) with a running count per word. A file whose kept buckets are few and far apart
// keeps the hash map instead: a bitmap over them would not be bounded by the file's size.
void Predictor::BuildKeptIndex() {
  std::vector<std::pair<int32_t, int32_t>> kept;
  for (const auto& [bucket, row] : model_.pruneidx) {
    if (bucket >= 0 && bucket < model_.args.bucket)
      kept.push_back({bucket, row});  // others never hit
  }
  std::sort(kept.begin(), kept.end());
  const size_t words = kept.empty() ? 0 : (size_t(kept.back().first) + 64) / 64;
  use_bitmap_ = words <= 64 * kept.size() + 65536;
  if (!use_bitmap_) return;
  kept_words_.assign(words, KeptWord{});
  for (const auto& [bucket, row] : kept) {
    kept_words_[size_t(bucket) / 64].bits |= uint64_t(1) << (bucket % 64);
    kept_rows_.push_back(row);
  }
  for (size_t w = 1; w < words; ++w) {
    const KeptWord& prev = kept_words_[w - 1];
    kept_words_[w].before = prev.before + PopCount(prev.bits);
  }
}

int32_t Predictor::WordId(std::string_view w, uint32_t h) const {
  const size_t mask = slots_.size() - 1;
  for (size_t s = h & mask;; s = (s + 1) & mask) {
    const WordSlot& slot = slots_[s];
    if (slot.id == -1) return -1;
    if (slot.hash == h && model_.words[size_t(slot.id)] == w) return slot.id;
  }
}

int32_t Predictor::HashRow(int64_t bucket) const {
  if (model_.pruneidx_size == 0 || bucket < 0) return -1;
  if (model_.pruneidx_size > 0 && !use_bitmap_) {
    const auto it = model_.pruneidx.find(int32_t(bucket));
    if (it == model_.pruneidx.end()) return -1;
    bucket = it->second;
  } else if (model_.pruneidx_size > 0) {
    if (size_t(bucket) / 64 >= kept_words_.size()) return -1;
    const KeptWord& w = kept_words_[size_t(bucket) / 64];
    const uint64_t below = (uint64_t(1) << (bucket % 64)) - 1;
    if (!(w.bits >> (bucket % 64) & 1)) return -1;
    bucket = kept_rows_[w.before + PopCount(w.bits & below)];
  }
  return int32_t(model_.nwords + bucket);
}

// The character n-grams of "<" + token + ">": every run of minn..maxn code points, except the
// lone "<" and ">"; the FNV hash is extended byte by byte from each start.
template <class Add>
void Predictor::ForEachSubword(std::string_view token, Add&& add) const {
  const Args& a = model_.args;
  if (a.maxn <= 0 || a.bucket <= 0) return;
  thread_local std::string padded;
  padded.assign(1, '<').append(token).push_back('>');
  const char* s = padded.data();
  const size_t len = padded.size();
  // Buckets are gathered first, with their pruned-index words prefetched, then looked up in
  // order: the lookups' cache misses overlap instead of following one another.
  std::array<int32_t, 128> buckets;
  size_t gathered = 0;
  auto flush = [&] {
    for (size_t k = 0; k < gathered; ++k) {
      const int32_t row = HashRow(buckets[k]);
      if (row >= 0) add(row);
    }
    gathered = 0;
  };
  auto emit = [&](uint32_t h) {
    const int32_t b = int32_t(h % uint32_t(a.bucket));
    if (size_t(b) / 64 < kept_words_.size()) __builtin_prefetch(&kept_words_[size_t(b) / 64]);
    buckets[gathered++] = b;
    if (gathered == buckets.size()) flush();
  };
  const size_t minn = size_t(std::max(a.minn, 1)), maxn = size_t(a.maxn);
  if (std::all_of(token.begin(), token.end(), [](char c) { return (c & 0x80) == 0; })) {
    // ASCII: a code point is a byte, so the n-gram of n code points from i is s[i, i + n).
    for (size_t i = 0; i < len; ++i) {
      uint32_t h = 2166136261u;
      const size_t stop = std::min(len, i + maxn);
      for (size_t j = i; j < stop; ++j) {
        h = (h ^ uint32_t(int8_t(s[j]))) * 16777619u;
        const size_t n = j - i + 1;
        if (n >= minn && !(n == 1 && (i == 0 || j + 1 == len))) emit(h);
      }
    }
  } else {
    auto continuation = [](char c) { return (c & 0xC0) == 0x80; };
    for (size_t i = 0; i < len; ++i) {
      if (continuation(s[i])) continue;
      uint32_t h = 2166136261u;
      size_t j = i;
      for (size_t n = 1; j < len && n <= maxn; ++n) {
        h = (h ^ uint32_t(int8_t(s[j++]))) * 16777619u;
        while (j < len && continuation(s[j])) h = (h ^ uint32_t(int8_t(s[j++]))) * 16777619u;
        if (n >= minn && !(n == 1 && (i == 0 || j == len))) emit(h);
      }
    }
  }
  flush();
  if (padded.capacity() > (size_t{1} << 16)) std::string().swap(padded);
}

const std::vector<int32_t>& Predictor::CachedUnknownRows(std::string_view token, uint32_t h) const {
  thread_local UnknownWordCache cache;
  UnknownWordCache::Slot& slot = cache.slots[(h ^ (h >> 15)) & (UnknownWordCache::kSlots - 1)];
  if (slot.serial != serial_ || slot.token != token) {
    slot.serial = serial_;
    slot.token.assign(token);
    slot.rows.clear();
    ForEachSubword(token, [&](int32_t r) { slot.rows.push_back(r); });
  }
  return slot.rows;
}

namespace {

// x[j] += alpha · row[j] for j < n: per element one multiply, then one add (no fused
// multiply-add: the build forbids contraction), four lanes at a time.
void AddScaled(float* x, float alpha, const float* row, int64_t n) {
  typedef float V4 __attribute__((vector_size(16)));
  int64_t j = 0;
  for (; j + 4 <= n; j += 4) {
    V4 a, r;
    std::memcpy(&a, x + j, sizeof a);
    std::memcpy(&r, row + j, sizeof r);
    a = a + alpha * r;
    std::memcpy(x + j, &a, sizeof a);
  }
  for (; j < n; ++j) x[j] += alpha * row[j];
}

// Row r of a product-quantized matrix, decoded (each sub-vector's centroid, unscaled).
void DecodeRow(const Matrix& M, int64_t r, float* row) {
  const ProductQuantizer& pq = M.pq;
  const uint8_t* code = &M.codes[size_t(r) * size_t(pq.nsubq)];
  for (int32_t m = 0; m < pq.nsubq; ++m) {
    const int32_t d = m == pq.nsubq - 1 ? pq.lastdsub : pq.dsub;
    const float* c = pq.Centroid(m, code[m]);
    float* dst = row + int64_t(m) * pq.dsub;
    for (int32_t j = 0; j < d; ++j) dst[j] = c[j];
  }
}

// The running sum of input rows for lid.176's layout: 16 elements quantized as 8 pieces of 2.
// It lives in four 4-lane registers for the whole line instead of memory, and each row's
// pieces are read straight from the centroid table; per element the operations are still
// fastText's x[j] += alpha · c[j], one multiply then one add, rows in order.
class Dim16Sum {
 public:
  static bool Fits(const Matrix& M) {
    return M.quantized && M.n == 16 && M.pq.nsubq == 8 && M.pq.dsub == 2 && M.pq.lastdsub == 2;
  }
  explicit Dim16Sum(const Matrix& M) : M_(M), centroids_(M.pq.centroids.data()) {}
  void Add(int32_t r) {
    const uint8_t* code = &M_.codes[size_t(r) * 8];
    const float alpha = M_.Norm(r);
    x_[0] = x_[0] + alpha * Pieces(0, code);
    x_[1] = x_[1] + alpha * Pieces(1, code);
    x_[2] = x_[2] + alpha * Pieces(2, code);
    x_[3] = x_[3] + alpha * Pieces(3, code);
  }
  void Store(float* hidden) const { std::memcpy(hidden, x_, sizeof x_); }

 private:
  typedef float V4 __attribute__((vector_size(16)));
  typedef float V2 __attribute__((vector_size(8)));
  // Elements 4q..4q+3: the centroids of pieces 2q and 2q+1, each at (m · 256 + code[m]) · 2
  // (two 8-byte loads joined in a register: not through memory, where a 16-byte load of two
  // 8-byte stores stalls).
  V4 Pieces(int q, const uint8_t* code) const {
    V2 lo, hi;
    std::memcpy(&lo, centroids_ + (size_t(2 * q) * 256 + code[2 * q]) * 2, 8);
    std::memcpy(&hi, centroids_ + (size_t(2 * q + 1) * 256 + code[2 * q + 1]) * 2, 8);
    return __builtin_shufflevector(lo, hi, 0, 1, 2, 3);
  }
  const Matrix& M_;
  const float* centroids_;
  V4 x_[4] = {};
};

}  // namespace

// fastText adds row by row, x[j] += alpha · c[j] (dense rows: x[j] += value); the decoded row
// is the same c, so each element sees the same operations in the same order.
void Predictor::AddInputRow(int32_t r, float* x, float* row) const {
  const Matrix& M = model_.input;
  const int64_t dim = M.n;
  if (!M.quantized) {
    const float* d = &M.dense[size_t(r) * size_t(dim)];
    for (int64_t j = 0; j < dim; ++j) x[j] += d[j];
    return;
  }
  DecodeRow(M, r, row);
  AddScaled(x, M.Norm(r), row, dim);
}

template <class Add>
void Predictor::ForEachFeature(std::string_view line, bool newline_is_space, Add&& add) const {
  const bool word_ngrams = model_.args.word_ngrams > 1;
  thread_local std::vector<int32_t> hashes;
  hashes.clear();
  auto delimiter = [&](char c) { return IsDelimiter(c) && (newline_is_space || c != '\n'); };
  size_t pos = 0;
  for (bool last = false; !last;) {
    while (pos < line.size() && delimiter(line[pos])) ++pos;
    size_t end = pos;
    while (end < line.size() && !IsDelimiter(line[end])) ++end;
    std::string_view token = line.substr(pos, end - pos);
    if (token.empty()) token = kEos, last = true;  // the newline (or the end) ends the line
    pos = end;
    const uint32_t h = FnvHash(token);
    const int32_t wid = WordId(token, h);
    const bool is_word =
        wid >= 0 ? wid < model_.nwords : token.substr(0, kLabelPrefix.size()) != kLabelPrefix;
    if (is_word) {
      if (wid >= 0 && model_.args.maxn <= 0) {
        add(wid);
      } else if (wid >= 0) {
        for (int64_t i = subword_begin_[size_t(wid)]; i < subword_begin_[size_t(wid) + 1]; ++i)
          add(subwords_[size_t(i)]);
      } else if (token != kEos) {
        if (token.size() > kMaxCachedToken) {
          ForEachSubword(token, add);
        } else {
          for (int32_t r : CachedUnknownRows(token, h)) add(r);
        }
      }
      if (word_ngrams) hashes.push_back(int32_t(h));
    }
    if (token == kEos) break;  // fastText ends the line at the first "</s>", even one in the text
  }
  const int32_t n = model_.args.word_ngrams;
  for (size_t i = 0; i < hashes.size(); ++i) {
    uint64_t h = uint64_t(int64_t(hashes[i]));  // sign-extended, as fastText widens int32 to uint64
    for (size_t j = i + 1; j < hashes.size() && j < i + size_t(n); ++j) {
      h = h * 116049371 + uint64_t(int64_t(hashes[j]));
      const int32_t row = HashRow(int32_t(h % uint64_t(model_.args.bucket)));
      if (row >= 0) add(row);
    }
  }
  // A long document's list is not kept by the thread once it is done.
  if (hashes.capacity() > (size_t{1} << 16)) std::vector<int32_t>().swap(hashes);
}

float Predictor::DotOutputRow(const float* x, int64_t row) const {
  const Matrix& M = model_.output;
  float res = 0.0f;
  if (!M.quantized) {
    const float* r = &M.dense[size_t(row) * size_t(M.n)];
    for (int64_t j = 0; j < M.n; ++j) res += r[j] * x[j];
    TRAIL_CHECK(!std::isnan(res), "fastText model: NaN in the output layer");
    return res;
  }
  const uint8_t* code = &M.codes[size_t(row) * size_t(M.pq.nsubq)];
  for (int32_t m = 0; m < M.pq.nsubq; ++m) {
    const float* c = M.pq.Centroid(m, code[m]);
    const int32_t d = m == M.pq.nsubq - 1 ? M.pq.lastdsub : M.pq.dsub;
    const float* xm = x + int64_t(m) * M.pq.dsub;
    for (int32_t j = 0; j < d; ++j) res += xm[j] * c[j];
  }
  return res * M.Norm(row);
}

void Predictor::Dfs(int32_t k, int32_t node, float score, const float* hidden,
                    std::vector<std::pair<float, int32_t>>& heap) const {
  if (score < log_threshold_) return;
  if (int32_t(heap.size()) == k && score < heap.front().first) return;
  const Node& t = tree_[size_t(node)];
  if (t.left == -1 && t.right == -1) {
    PushBest(k, score, node, heap);
    return;
  }
  float f = DotOutputRow(hidden, node - model_.nlabels);
  f = static_cast<float>(1. / (1.0f + std::exp(-f)));  // exp of a float, 1 + it in float
  Dfs(k, t.left, score + StdLog(static_cast<float>(1.0 - double(f))), hidden, heap);
  Dfs(k, t.right, score + StdLog(f), hidden, heap);
}

std::vector<Prediction> Predictor::Predict(std::string_view line, int32_t k) const {
  return PredictRows(line, false, k);
}

std::vector<Prediction> Predictor::PredictText(std::string_view text, int32_t k) const {
  return PredictRows(text, true, k);
}

std::vector<Prediction> Predictor::PredictRows(std::string_view line, bool newline_is_space,
                                               int32_t k) const {
  TRAIL_CHECK(k >= 1, "fastText prediction: k must be at least 1");
  std::vector<float> hidden(size_t(model_.args.dim), 0.0f), decoded(hidden.size());
  int64_t rows = 0;
  if (Dim16Sum::Fits(model_.input)) {
    Dim16Sum sum(model_.input);
    ForEachFeature(line, newline_is_space, [&](int32_t r) {
      sum.Add(r);
      ++rows;
    });
    sum.Store(hidden.data());
  } else {
    ForEachFeature(line, newline_is_space, [&](int32_t r) {
      AddInputRow(r, hidden.data(), decoded.data());
      ++rows;
    });
  }
  if (rows == 0) return {};
  const float scale = static_cast<float>(1.0 / double(rows));
  for (float& x : hidden) x *= scale;
  std::vector<std::pair<float, int32_t>> heap;
  heap.reserve(size_t(k) + 1);
  if (model_.args.loss == LossKind::kHierarchicalSoftmax) {
    Dfs(k, 2 * model_.nlabels - 2, 0.0f, hidden.data(), heap);
  } else {
    std::vector<float> out(size_t(model_.nlabels));
    for (int32_t i = 0; i < model_.nlabels; ++i) out[size_t(i)] = DotOutputRow(hidden.data(), i);
    float max = out[0], z = 0.0f;
    for (float v : out) max = std::max(v, max);
    for (float& v : out)
      z +=
          (v = static_cast<float>(std::exp(double(v - max))));  // exp(double), as fastText calls it
    for (float& v : out) v /= z;
    for (int32_t i = 0; i < model_.nlabels; ++i) {
      const float p = out[size_t(i)];
      if (p < 0.0f) continue;  // below the threshold 0
      if (int32_t(heap.size()) == k && StdLog(p) < heap.front().first) continue;
      PushBest(k, StdLog(p), i, heap);
    }
  }
  std::sort_heap(heap.begin(), heap.end(), ComparePairs);
  std::vector<Prediction> out;
  for (const auto& [score, label] : heap) out.push_back({std::exp(score), label});
  return out;
}

}  // namespace trail::corpus::ft
