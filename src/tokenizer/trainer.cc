#include "tokenizer/trainer.h"

#include <algorithm>
#include <atomic>
#include <queue>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "core/error.h"
#include "tokenizer/loaders.h"

namespace trail::tok {
namespace {

using PieceCounts = std::unordered_map<std::string, uint64_t, StringHash, std::equal_to<>>;

inline uint64_t PairKey(uint32_t a, uint32_t b) { return (uint64_t{a} << 32) | b; }

struct Word {
  std::vector<uint32_t> syms;
  uint64_t count;
};

}  // namespace

std::string NamedPattern(const std::string& name) {
  const char* encoding = name == "gpt2"     ? "r50k_base"
                         : name == "cl100k" ? "cl100k_base"
                         : name == "o200k"  ? "o200k_base"
                                            : nullptr;
  if (encoding == nullptr) return name;  // a regular expression of the caller's
  return FindTiktokenEncoding(encoding)->pattern;
}

std::unique_ptr<Tokenizer> TrainBpe(const std::vector<std::string>& docs, const TrainOptions& opt,
                                    TrainStats* stats) {
  TRAIL_CHECK(opt.vocab_size >= 256 + opt.specials.size(), "vocab_size ", opt.vocab_size,
              " leaves no room for the 256 byte tokens and ", opt.specials.size(),
              " special tokens");
  const Pretokenizer pretok(opt.pattern);
  TrainStats st;

  // 1. Piece counts, per thread then summed.
  const int threads = std::max(1, opt.threads);
  std::vector<PieceCounts> partial(threads);
  std::vector<uint64_t> piece_total(threads, 0);
  std::atomic<size_t> next{0};
  auto count = [&](int t) {
    for (size_t i; (i = next.fetch_add(1)) < docs.size();) {
      std::string_view text = docs[i];
      while (!text.empty()) {
        const size_t ok = ValidUtf8Prefix(text);
        std::string scratch;
        const std::string_view valid = opt.normalization == Normalization::kNfc
                                           ? ToNfc(text.substr(0, ok), scratch)
                                           : text.substr(0, ok);
        pretok.Split(valid, [&](std::string_view p) {
          ++partial[t][std::string(p)];
          ++piece_total[t];
        });
        if (ok == text.size()) break;
        ++partial[t][std::string(text.substr(ok, 1))];
        ++piece_total[t];
        text.remove_prefix(ok + 1);
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(count, t);
  count(0);
  for (auto& th : pool) th.join();
  PieceCounts counts = std::move(partial[0]);
  for (int t = 1; t < threads; ++t) {
    for (auto& [k, v] : partial[t]) counts[k] += v;
  }
  for (uint64_t n : piece_total) st.pieces += n;
  for (const std::string& d : docs) st.bytes += d.size();
  st.documents = docs.size();
  st.unique_pieces = counts.size();

  // Words in a fixed order (by bytes), so nothing depends on hash-map iteration order.
  std::vector<std::pair<std::string, uint64_t>> sorted(counts.begin(), counts.end());
  std::sort(sorted.begin(), sorted.end());
  std::vector<Word> words;
  words.reserve(sorted.size());
  for (const auto& [piece, c] : sorted) {
    Word w;
    w.count = c;
    for (unsigned char b : piece) w.syms.push_back(b);
    words.push_back(std::move(w));
  }

  std::vector<std::string> tokens(256);
  for (int b = 0; b < 256; ++b) tokens[b] = std::string(1, static_cast<char>(b));
  std::unordered_map<uint64_t, int64_t> pair_count;
  std::unordered_map<uint64_t, std::vector<uint32_t>> pair_words;
  for (uint32_t wi = 0; wi < words.size(); ++wi) {
    const Word& w = words[wi];
    for (size_t i = 0; i + 1 < w.syms.size(); ++i) {
      const uint64_t k = PairKey(w.syms[i], w.syms[i + 1]);
      pair_count[k] += static_cast<int64_t>(w.count);
      auto& list = pair_words[k];
      if (list.empty() || list.back() != wi) list.push_back(wi);
    }
  }
  // Max-heap on (count, then smallest (left bytes, right bytes)); stale entries are re-checked.
  struct Entry {
    int64_t count;
    uint64_t key;
  };
  auto worse = [&](const Entry& a, const Entry& b) {
    if (a.count != b.count) return a.count < b.count;
    const std::string& al = tokens[a.key >> 32];
    const std::string& bl = tokens[b.key >> 32];
    if (al != bl) return al > bl;
    return tokens[a.key & 0xffffffff] > tokens[b.key & 0xffffffff];
  };
  std::priority_queue<Entry, std::vector<Entry>, decltype(worse)> heap(worse);
  for (const auto& [k, c] : pair_count) heap.push({c, k});

  const uint32_t merges_wanted =
      opt.vocab_size - 256 - static_cast<uint32_t>(opt.specials.size());
  std::vector<BpeModel::Merge> merges;
  std::unordered_set<uint64_t> touched;
  while (merges.size() < merges_wanted && !heap.empty()) {
    const Entry top = heap.top();
    heap.pop();
    const auto it = pair_count.find(top.key);
    const int64_t current = it == pair_count.end() ? 0 : it->second;
    if (current != top.count) {  // stale: requeue with the current count
      if (current > 0) heap.push({current, top.key});
      continue;
    }
    if (current < static_cast<int64_t>(opt.min_frequency)) break;
    const uint32_t a = static_cast<uint32_t>(top.key >> 32);
    const uint32_t b = static_cast<uint32_t>(top.key & 0xffffffff);
    const uint32_t t = static_cast<uint32_t>(tokens.size());
    tokens.push_back(tokens[a] + tokens[b]);
    merges.push_back({a, b, static_cast<uint32_t>(merges.size()), t});
    touched.clear();
    std::vector<uint32_t> where = std::move(pair_words[top.key]);
    pair_words.erase(top.key);
    for (uint32_t wi : where) {
      Word& w = words[wi];
      bool has = false;
      for (size_t i = 0; i + 1 < w.syms.size(); ++i) has = has || (w.syms[i] == a && w.syms[i + 1] == b);
      if (!has) continue;
      const int64_t c = static_cast<int64_t>(w.count);
      // Remove the word's pairs, merge left to right, add its pairs back.
      for (size_t i = 0; i + 1 < w.syms.size(); ++i) {
        const uint64_t k = PairKey(w.syms[i], w.syms[i + 1]);
        pair_count[k] -= c;
        touched.insert(k);
      }
      std::vector<uint32_t> merged;
      merged.reserve(w.syms.size());
      for (size_t i = 0; i < w.syms.size(); ++i) {
        if (i + 1 < w.syms.size() && w.syms[i] == a && w.syms[i + 1] == b) {
          merged.push_back(t);
          ++i;
        } else {
          merged.push_back(w.syms[i]);
        }
      }
      w.syms = std::move(merged);
      for (size_t i = 0; i + 1 < w.syms.size(); ++i) {
        const uint64_t k = PairKey(w.syms[i], w.syms[i + 1]);
        pair_count[k] += c;
        touched.insert(k);
        auto& list = pair_words[k];
        if (list.empty() || list.back() != wi) list.push_back(wi);
      }
    }
    for (uint64_t k : touched) {
      const auto pc = pair_count.find(k);
      if (pc != pair_count.end() && pc->second > 0 && k != top.key) heap.push({pc->second, k});
    }
  }
  st.merges = merges.size();

  BpeModel model(tokens, /*ignore_merges=*/false);
  for (const BpeModel::Merge& m : merges) model.AddMerge(m.left, m.right, m.rank, m.merged);
  model.Finalize();
  std::vector<SpecialToken> specials;
  for (const std::string& s : opt.specials) {
    specials.push_back({s, static_cast<uint32_t>(tokens.size() + specials.size())});
  }
  if (stats != nullptr) *stats = st;
  return std::make_unique<Tokenizer>(opt.name, opt.pattern, std::move(model), specials,
                                     opt.normalization);
}

}  // namespace trail::tok
