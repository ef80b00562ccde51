#include "corpus/langid/fasttext_model.h"

#include <cstring>

#include "core/error.h"
#include "core/file_util.h"

namespace trail::corpus::ft {
namespace {

// Reads fixed-size values from the file's bytes, refusing to read past the end.
class Reader {
 public:
  Reader(const std::string& bytes, const std::string& path) : b_(bytes), path_(path) {}

  template <class T>
  T Get(const char* what) {
    Need(sizeof(T), what);
    T v;
    std::memcpy(&v, b_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  // n items of T; n is checked against the bytes left before anything is allocated.
  template <class T>
  std::vector<T> Array(int64_t n, const char* what) {
    TRAIL_CHECK(n >= 0 && uint64_t(n) <= (b_.size() - pos_) / sizeof(T), path_, ": ", what, " of ",
                n, " items runs past the end of the file (", b_.size() - pos_, " bytes left)");
    std::vector<T> v(static_cast<size_t>(n));
    if (n > 0) std::memcpy(v.data(), b_.data() + pos_, size_t(n) * sizeof(T));
    pos_ += size_t(n) * sizeof(T);
    return v;
  }
  std::string CString(const char* what) {
    const size_t end = b_.find('\0', pos_);
    TRAIL_CHECK(end != std::string::npos, path_, ": ", what, " is not NUL-terminated");
    std::string s = b_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return s;
  }
  bool AtEnd() const { return pos_ == b_.size(); }
  const std::string& path() const { return path_; }

 private:
  void Need(size_t n, const char* what) {
    TRAIL_CHECK(b_.size() - pos_ >= n, path_, ": the file ends inside ", what);
  }
  const std::string& b_;
  const std::string& path_;
  size_t pos_ = 0;
};

Args ReadArgs(Reader& r) {
  Args a;
  a.dim = r.Get<int32_t>("args.dim");
  a.ws = r.Get<int32_t>("args.ws");
  a.epoch = r.Get<int32_t>("args.epoch");
  a.min_count = r.Get<int32_t>("args.minCount");
  a.neg = r.Get<int32_t>("args.neg");
  a.word_ngrams = r.Get<int32_t>("args.wordNgrams");
  a.loss = static_cast<LossKind>(r.Get<int32_t>("args.loss"));
  a.model = r.Get<int32_t>("args.model");
  a.bucket = r.Get<int32_t>("args.bucket");
  a.minn = r.Get<int32_t>("args.minn");
  a.maxn = r.Get<int32_t>("args.maxn");
  a.lr_update_rate = r.Get<int32_t>("args.lrUpdateRate");
  a.t = r.Get<double>("args.t");
  TRAIL_CHECK(a.dim > 0 && a.dim <= 1 << 16, r.path(), ": dimension ", a.dim, " out of range");
  TRAIL_CHECK(a.model == 3, r.path(), ": not a supervised (classification) model (model ", a.model,
              ")");
  TRAIL_CHECK(a.loss == LossKind::kHierarchicalSoftmax || a.loss == LossKind::kSoftmax, r.path(),
              ": loss ", int(a.loss),
              " is not supported for prediction (hierarchical softmax or softmax)");
  // Character n-grams of up to 32 code points and word n-grams of up to 16 words: far beyond
  // any published model, and what keeps the work per token linear in its length.
  TRAIL_CHECK(a.bucket >= 0 && a.minn >= 0 && a.maxn >= 0 && a.maxn <= 32 && a.word_ngrams >= 1 &&
                  a.word_ngrams <= 16,
              r.path(), ": n-gram arguments out of range (bucket ", a.bucket, ", minn ", a.minn,
              ", maxn ", a.maxn, " (at most 32), wordNgrams ", a.word_ngrams, " (1..16))");
  TRAIL_CHECK(a.bucket > 0 || (a.maxn == 0 && a.word_ngrams == 1), r.path(), ": n-grams (maxn ",
              a.maxn, ", wordNgrams ", a.word_ngrams, ") need buckets, and bucket is 0");
  return a;
}

void ReadDictionary(Reader& r, Model& m) {
  const int32_t size = r.Get<int32_t>("dictionary size");
  m.nwords = r.Get<int32_t>("dictionary nwords");
  m.nlabels = r.Get<int32_t>("dictionary nlabels");
  r.Get<int64_t>("dictionary ntokens");
  m.pruneidx_size = r.Get<int64_t>("dictionary pruneidx_size");
  TRAIL_CHECK(size >= 0 && m.nwords >= 0 && m.nlabels >= 1 && int64_t(m.nwords) + m.nlabels == size,
              r.path(), ": dictionary of ", size, " entries does not hold ", m.nwords,
              " words and ", m.nlabels, " labels");
  for (int32_t i = 0; i < size; ++i) {
    m.words.push_back(r.CString("a dictionary entry"));
    m.counts.push_back(r.Get<int64_t>("a dictionary count"));
    // Counts build the label tree by addition; 2^40 each keeps every sum far from overflow.
    TRAIL_CHECK(m.counts.back() >= 0 && m.counts.back() <= (int64_t(1) << 40), r.path(),
                ": dictionary entry ", i, " has count ", m.counts.back());
    const int8_t type = r.Get<int8_t>("a dictionary entry type");
    TRAIL_CHECK(type == (i < m.nwords ? 0 : 1), r.path(), ": dictionary entry ", i, " should be a ",
                i < m.nwords ? "word" : "label");
  }
  TRAIL_CHECK(m.pruneidx_size >= -1 && m.pruneidx_size <= (int64_t(1) << 40), r.path(),
              ": pruned index size ", m.pruneidx_size, " out of range");
  const std::vector<int32_t> pairs =
      r.Array<int32_t>(m.pruneidx_size > 0 ? 2 * m.pruneidx_size : 0, "the pruned n-gram index");
  for (size_t i = 0; i + 1 < pairs.size(); i += 2) m.pruneidx[pairs[i]] = pairs[i + 1];
}

ProductQuantizer ReadQuantizer(Reader& r) {
  ProductQuantizer q;
  q.dim = r.Get<int32_t>("quantizer dim");
  q.nsubq = r.Get<int32_t>("quantizer nsubq");
  q.dsub = r.Get<int32_t>("quantizer dsub");
  q.lastdsub = r.Get<int32_t>("quantizer lastdsub");
  TRAIL_CHECK(q.dim > 0 && q.nsubq > 0 && q.dsub > 0 && q.lastdsub > 0 &&
                  int64_t(q.dsub) * (q.nsubq - 1) + q.lastdsub == q.dim,
              r.path(), ": inconsistent product quantizer (dim ", q.dim, ", ", q.nsubq, " × ",
              q.dsub, ", last ", q.lastdsub, ")");
  q.centroids = r.Array<float>(int64_t(q.dim) * 256, "quantizer centroids");
  return q;
}

Matrix ReadMatrix(Reader& r, bool quantized, int32_t dim, const char* which) {
  Matrix x;
  x.quantized = quantized;
  if (quantized) x.qnorm = r.Get<uint8_t>("qnorm") != 0;
  x.m = r.Get<int64_t>("matrix rows");
  x.n = r.Get<int64_t>("matrix columns");
  // Rows beyond 2^40 cannot fit any file; the bound keeps m · n and m · nsubq from overflowing.
  TRAIL_CHECK(x.m >= 0 && x.m <= (int64_t(1) << 40) && x.n == dim, r.path(), ": the ", which,
              " matrix is ", x.m, " × ", x.n, ", not of the model's dimension ", dim);
  if (!quantized) {
    x.dense = r.Array<float>(x.m * x.n, "dense matrix values");
    return x;
  }
  const int32_t codesize = r.Get<int32_t>("code size");
  x.codes = r.Array<uint8_t>(codesize, "matrix codes");
  x.pq = ReadQuantizer(r);
  TRAIL_CHECK(x.pq.dim == dim && int64_t(codesize) == x.m * x.pq.nsubq, r.path(), ": the ", which,
              " matrix's codes do not cover ", x.m, " rows of ", x.pq.nsubq, " sub-vectors");
  if (x.qnorm) {
    x.norm_codes = r.Array<uint8_t>(x.m, "norm codes");
    x.npq = ReadQuantizer(r);
    TRAIL_CHECK(x.npq.dim == 1, r.path(), ": the norm quantizer is not one-dimensional");
  }
  return x;
}

}  // namespace

Model LoadModel(const std::string& path) {
  const std::string bytes = ReadFileToString(path);
  Reader r(bytes, path);
  TRAIL_CHECK(r.Get<int32_t>("the header") == kMagic, path,
              ": not a fastText model (bad magic number)");
  Model m;
  m.version = r.Get<int32_t>("the header");
  TRAIL_CHECK(m.version == kVersion, path, ": fastText file version ", m.version, " (only ",
              kVersion, " is read)");
  m.args = ReadArgs(r);
  ReadDictionary(r, m);
  const bool quant_input = r.Get<uint8_t>("quant_input") != 0;
  m.input = ReadMatrix(r, quant_input, m.args.dim, "input");
  TRAIL_CHECK(
      m.input.m >= m.nwords + int64_t(m.pruneidx_size > 0 ? m.pruneidx_size : m.args.bucket), path,
      ": the input matrix has ", m.input.m, " rows, fewer than the dictionary needs");
  for (const auto& [bucket, row] : m.pruneidx) {
    TRAIL_CHECK(row >= 0 && m.nwords + int64_t(row) < m.input.m, path, ": pruned n-gram ", bucket,
                " maps past the input matrix");
  }
  const bool qout = r.Get<uint8_t>("qout") != 0;
  m.output = ReadMatrix(r, quant_input && qout, m.args.dim, "output");
  const int64_t out_rows =
      m.args.loss == LossKind::kHierarchicalSoftmax ? m.nlabels - 1 : m.nlabels;
  TRAIL_CHECK(m.output.m >= out_rows, path, ": the output matrix has ", m.output.m,
              " rows; the loss needs ", out_rows);
  TRAIL_CHECK(r.AtEnd(), path, ": bytes after the output matrix");
  return m;
}

}  // namespace trail::corpus::ft
