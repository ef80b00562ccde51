// Native inference for fastText supervised models (corpus/langid/fasttext_model.h), giving the
// labels and probabilities libfasttext's FastText::predictLine gives, bit for bit (same float
// operations in the same order), without its per-line stream, string and hash-map work.
//
// The line is cut into tokens at ' ', '\t', '\v', '\f', '\r', '\0' (a newline ends it), followed
// by the end-of-sentence token "</s>". A token that is a dictionary word contributes its row and
// its character n-grams' rows as the dictionary lists them; another token contributes the
// n-grams of "<" + token + ">" (UTF-8 code points of minn..maxn, hashed with 32-bit FNV-1a over
// signed bytes, mod bucket, through the pruned index when the model is quantized); tokens that
// start with "__label__" are dropped; word n-grams (wordNgrams > 1) hash the tokens' FNV values.
// hidden = Σ rows (in that order, each row decoded from its product-quantizer codes times its
// norm) × float(1.0 / count). Hierarchical softmax walks the Huffman tree of the label counts
// depth first, pruning by the k-th best log-score; softmax scores every label. Scores are
// exp(log(p + 1e-5)) as libfasttext reports them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "corpus/langid/fasttext_model.h"

namespace trail::corpus::ft {

struct Prediction {
  float score = 0;    // probability as libfasttext reports it
  int32_t label = 0;  // index among the labels
};

class Predictor {
 public:
  explicit Predictor(Model model);

  // The k best labels of one line (no newline inside), best first; none for a line with no
  // features. Thread-safe.
  std::vector<Prediction> Predict(std::string_view line, int32_t k) const;
  // The same for a text whose newlines ('\n', '\r') count as spaces: Predict of the text with
  // them replaced, without making that copy.
  std::vector<Prediction> PredictText(std::string_view text, int32_t k) const;
  const std::string& Label(int32_t i) const { return model_.words[size_t(model_.nwords + i)]; }
  int32_t num_labels() const { return model_.nlabels; }

 private:
  struct Node {
    int32_t left = -1, right = -1;
  };
  void BuildKeptIndex();
  std::vector<Prediction> PredictRows(std::string_view line, bool newline_is_space,
                                      int32_t k) const;
  // Calls add(row) for each feature row of a line, in the order they are summed (no list of
  // them is made: a long document has millions).
  template <class Add>
  void ForEachFeature(std::string_view line, bool newline_is_space, Add&& add) const;
  int32_t WordId(std::string_view w, uint32_t h) const;
  // The rows of a short token that is not a dictionary word (its n-grams), through a
  // per-thread direct-mapped cache: most tokens of a document are such words and they repeat.
  // Valid until the thread's next call.
  const std::vector<int32_t>& CachedUnknownRows(std::string_view token, uint32_t h) const;
  // Calls add(row) for the kept rows of the character n-grams of "<" + token + ">".
  template <class Add>
  void ForEachSubword(std::string_view token, Add&& add) const;
  int32_t HashRow(int64_t bucket) const;  // the row of an n-gram bucket, -1 if pruned
  // hidden += row r of the input matrix (decoded into `decoded`, dim floats, and scaled by its
  // norm when quantized).
  void AddInputRow(int32_t r, float* hidden, float* decoded) const;
  float DotOutputRow(const float* hidden, int64_t row) const;
  void Dfs(int32_t k, int32_t node, float score, const float* hidden,
           std::vector<std::pair<float, int32_t>>& heap) const;

  Model model_;
  // Open addressing by FNV hash: a word's id (-1: empty) and its hash, so a probe that meets
  // another word is told apart without reading that word.
  struct WordSlot {
    uint32_t hash = 0;
    int32_t id = -1;
  };
  std::vector<WordSlot> slots_;
  std::vector<int64_t> subword_begin_;  // per word: its rows in subwords_
  std::vector<int32_t> subwords_;
  // The pruned n-gram index (bucket -> row) as a bitmap of kept buckets with a running count
  // per 64-bit word: row = kept_rows_[rank of the bucket among kept ones]. ~0.5 MB for lid.176,
  // so it stays in cache where a hash map or a dense 2M-entry table would not; a word and its
  // count side by side, so a lookup reads one cache line before the row.
  struct KeptWord {
    uint64_t bits = 0;
    uint32_t before = 0;  // kept buckets in the words before this one
  };
  std::vector<KeptWord> kept_words_;
  std::vector<int32_t> kept_rows_;
  bool use_bitmap_ = false;
  std::vector<Node> tree_;   // hierarchical softmax
  float log_threshold_ = 0;  // std_log(0): the pruning floor of the walk
  uint64_t serial_ = 0;      // tells this predictor's cache entries apart
};

uint32_t FnvHash(std::string_view s);  // fastText's: FNV-1a over bytes read as signed chars

}  // namespace trail::corpus::ft
