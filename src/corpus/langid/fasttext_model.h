// A fastText supervised model (.bin or quantized .ftz, file version 12) read into memory for
// native inference (corpus/langid/fasttext_predict.h), without libfasttext.
//
// File layout (little-endian): int32 magic 793712314, int32 version; the arguments (12 int32:
// dim, ws, epoch, minCount, neg, wordNgrams, loss, model, bucket, minn, maxn, lrUpdateRate; then
// double t); the dictionary (int32 size, nwords, nlabels; int64 ntokens, pruneidx_size; per
// entry its NUL-terminated bytes, int64 count, int8 type (0 word, 1 label); then pruneidx_size
// pairs (int32 bucket, int32 row)); bool quant_input and the input matrix; bool qout and the
// output matrix. A dense matrix is int64 m, n and m·n floats; a quantized one is bool qnorm,
// int64 m, n, int32 codesize, codesize code bytes, a product quantizer (int32 dim, nsubq, dsub,
// lastdsub; dim·256 floats of centroids) and, with qnorm, m norm code bytes and a second
// quantizer for the norms.
//
// Loading checks every length against the bytes left in the file, so a damaged or hostile file
// is a clear error, never an allocation beyond the file's size.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace trail::corpus::ft {

inline constexpr int32_t kMagic = 793712314;
inline constexpr int32_t kVersion = 12;

enum class LossKind : int32_t {
  kHierarchicalSoftmax = 1,
  kNegativeSampling = 2,
  kSoftmax = 3,
  kOneVsAll = 4
};

struct Args {
  int32_t dim = 0, ws = 0, epoch = 0, min_count = 0, neg = 0, word_ngrams = 0;
  LossKind loss = LossKind::kSoftmax;
  int32_t model = 0;  // 1 cbow, 2 skipgram, 3 supervised
  int32_t bucket = 0, minn = 0, maxn = 0, lr_update_rate = 0;
  double t = 0;
};

// Product quantizer: the vector is cut into nsubq pieces of dsub floats (the last lastdsub),
// each coded by one byte indexing 256 centroids.
struct ProductQuantizer {
  int32_t dim = 0, nsubq = 0, dsub = 0, lastdsub = 0;
  std::vector<float> centroids;  // dim · 256
  const float* Centroid(int32_t m, uint8_t i) const {
    return m == nsubq - 1 ? &centroids[size_t(m) * 256 * dsub + size_t(i) * lastdsub]
                          : &centroids[(size_t(m) * 256 + i) * dsub];
  }
};

// A dense or product-quantized matrix of m rows of n floats.
struct Matrix {
  bool quantized = false;
  int64_t m = 0, n = 0;
  std::vector<float> dense;  // m · n
  bool qnorm = false;
  std::vector<uint8_t> codes, norm_codes;
  ProductQuantizer pq, npq;
  // Row i's norm factor (1 without qnorm) and its codes.
  float Norm(int64_t i) const { return qnorm ? npq.Centroid(0, norm_codes[size_t(i)])[0] : 1.0f; }
};

struct Model {
  Args args;
  int32_t version = 0;
  int32_t nwords = 0, nlabels = 0;
  std::vector<std::string> words;  // words (nwords) then labels (nlabels), in file order
  std::vector<int64_t> counts;     // per entry
  int64_t pruneidx_size = -1;      // -1: not pruned
  std::unordered_map<int32_t, int32_t> pruneidx;  // n-gram bucket -> its row among the buckets
  Matrix input, output;
};

// Throws trail::Error naming the file and what is wrong.
Model LoadModel(const std::string& path);

}  // namespace trail::corpus::ft
