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

// 1. Piece counts: every document pre-tokenized (invalid UTF-8 bytes count as pieces of one
// byte), per thread, then summed.
PieceCounts CountPieces(const std::vector<std::string>& docs, const Pretokenizer& pretok,
                        const TrainOptions& opt, TrainStats& st) {
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
  return counts;
}

// Words in a fixed order (by bytes), so nothing depends on hash-map iteration order.
std::vector<Word> WordsInByteOrder(const PieceCounts& counts) {
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
  return words;
}

// 2. Merges, greedily: the most frequent adjacent pair (ties: the smallest left token's bytes,
// then the right's) becomes a new token, until merges_wanted or a count below min_frequency.
class MergeLearner {
 public:
  MergeLearner(std::vector<Word> words, std::vector<std::string>& tokens)
      : words_(std::move(words)), tokens_(tokens), heap_(Worse{&tokens}) {
    for (uint32_t wi = 0; wi < words_.size(); ++wi) {
      const Word& w = words_[wi];
      for (size_t i = 0; i + 1 < w.syms.size(); ++i) {
        const uint64_t k = PairKey(w.syms[i], w.syms[i + 1]);
        pair_count_[k] += static_cast<int64_t>(w.count);
        auto& list = pair_words_[k];
        if (list.empty() || list.back() != wi) list.push_back(wi);
      }
    }
    for (const auto& [k, c] : pair_count_) heap_.push({c, k});
  }

  std::vector<BpeModel::Merge> Learn(uint32_t merges_wanted, uint64_t min_frequency) {
    std::vector<BpeModel::Merge> merges;
    while (merges.size() < merges_wanted && !heap_.empty()) {
      const Entry top = heap_.top();
      heap_.pop();
      const auto it = pair_count_.find(top.key);
      const int64_t current = it == pair_count_.end() ? 0 : it->second;
      if (current != top.count) {  // stale: requeue with the current count
        if (current > 0) heap_.push({current, top.key});
        continue;
      }
      if (current < static_cast<int64_t>(min_frequency)) break;
      const uint32_t a = static_cast<uint32_t>(top.key >> 32);
      const uint32_t b = static_cast<uint32_t>(top.key & 0xffffffff);
      const uint32_t t = static_cast<uint32_t>(tokens_.size());
      tokens_.push_back(tokens_[a] + tokens_[b]);
      merges.push_back({a, b, static_cast<uint32_t>(merges.size()), t});
      Apply(top.key, a, b, t);
    }
    return merges;
  }

 private:
  struct Entry {
    int64_t count;
    uint64_t key;
  };
  // Max-heap on (count, then smallest (left bytes, right bytes)); stale entries are re-checked.
  struct Worse {
    const std::vector<std::string>* tokens;
    bool operator()(const Entry& a, const Entry& b) const {
      if (a.count != b.count) return a.count < b.count;
      const std::string& al = (*tokens)[a.key >> 32];
      const std::string& bl = (*tokens)[b.key >> 32];
      if (al != bl) return al > bl;
      return (*tokens)[a.key & 0xffffffff] > (*tokens)[b.key & 0xffffffff];
    }
  };

  // Every word holding the pair (a, b): its pairs removed, merged left to right, added back.
  void Apply(uint64_t key, uint32_t a, uint32_t b, uint32_t t) {
    touched_.clear();
    std::vector<uint32_t> where = std::move(pair_words_[key]);
    pair_words_.erase(key);
    for (uint32_t wi : where) {
      Word& w = words_[wi];
      bool has = false;
      for (size_t i = 0; i + 1 < w.syms.size(); ++i)
        has = has || (w.syms[i] == a && w.syms[i + 1] == b);
      if (!has) continue;
      const int64_t c = static_cast<int64_t>(w.count);
      for (size_t i = 0; i + 1 < w.syms.size(); ++i) {
        const uint64_t k = PairKey(w.syms[i], w.syms[i + 1]);
        pair_count_[k] -= c;
        touched_.insert(k);
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
        pair_count_[k] += c;
        touched_.insert(k);
        auto& list = pair_words_[k];
        if (list.empty() || list.back() != wi) list.push_back(wi);
      }
    }
    for (uint64_t k : touched_) {
      const auto pc = pair_count_.find(k);
      if (pc != pair_count_.end() && pc->second > 0 && k != key) heap_.push({pc->second, k});
    }
  }

  std::vector<Word> words_;
  std::vector<std::string>& tokens_;
  std::unordered_map<uint64_t, int64_t> pair_count_;
  std::unordered_map<uint64_t, std::vector<uint32_t>> pair_words_;
  std::priority_queue<Entry, std::vector<Entry>, Worse> heap_;
  std::unordered_set<uint64_t> touched_;
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
  const PieceCounts counts = CountPieces(docs, pretok, opt, st);
  for (const std::string& d : docs) st.bytes += d.size();
  st.documents = docs.size();
  st.unique_pieces = counts.size();

  std::vector<std::string> tokens(256);
  for (int b = 0; b < 256; ++b) tokens[b] = std::string(1, static_cast<char>(b));
  const uint32_t merges_wanted = opt.vocab_size - 256 - static_cast<uint32_t>(opt.specials.size());
  MergeLearner learner(WordsInByteOrder(counts), tokens);
  const std::vector<BpeModel::Merge> merges = learner.Learn(merges_wanted, opt.min_frequency);
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
