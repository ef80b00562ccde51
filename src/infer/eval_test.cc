// Evaluation: lm-eval's pair encoding, log-likelihoods against a float64 reference and bit for
// bit against the training forward (however requests are grouped, on any thread count), the
// window a long context is cut to, OLMES's metrics on crafted cases, and clear errors for bad
// request files.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/file_util.h"
#include "core/test_util.h"
#include "core/thread_pool.h"
#include "infer/eval_metrics.h"
#include "infer/loglikelihood.h"
#include "infer/olmes_tasks.h"
#include "model/float64_reference.h"
#include "model/transformer.h"
#include "repops/cpu_backend.h"
#include "repops/cross_entropy.h"
#include "tokenizer/trainer.h"

namespace trail::infer {
namespace {

const tok::Tokenizer& Tok() {
  static const std::unique_ptr<tok::Tokenizer> t = [] {
    tok::TrainOptions o;
    o.vocab_size = 320, o.pattern = tok::NamedPattern("gpt2"), o.specials = {"<|endoftext|>"};
    o.min_frequency = 1;
    return tok::TrainBpe({"the quick brown fox jumps over the lazy dog", "é ü ß naïve café",
                          "in the beginning was the word", "Answer: A B C D"},
                         o);
  }();
  return *t;
}
int64_t Eos() { return Tok().SpecialId("<|endoftext|>"); }

struct Model {
  repops::CpuBackend cpu;
  model::ModelConfig c;
  std::unique_ptr<model::ParameterSet> p;
  Model() {
    c.vocab_size = Tok().vocab_size(), c.d_model = 32, c.n_layers = 2, c.n_heads = 2;
    c.d_ff = 48, c.max_seq_len = 24, c.init_std = 0.4f, c.init_seed = 6, c.qk_norm = true;
    c.attention_window = 5, c.full_attention_every = 2;
    p = std::make_unique<model::ParameterSet>(c, cpu);
    p->InitRandom(c);
  }
};

// Four documents: a multi-token continuation and a non-ASCII one; a context longer than the
// model's window; a context with a trailing space; an empty context.
std::vector<EvalRequest> Requests() {
  std::string long_ctx;
  for (int i = 0; i < 5; ++i) long_ctx += "in the beginning was the word ";
  long_ctx += "the";
  return {{0, 0, 1, "the quick brown fox", " jumps"},
          {0, 1, 1, "the quick brown fox", " jumps over the lazy dog"},
          {0, 2, 1, "the quick brown fox", " é"},
          {1, 0, 0, long_ctx, " lazy dog"},
          {1, 1, 0, long_ctx, " fox"},
          {2, 0, 1, "Answer: ", "A"},
          {2, 1, 1, "Answer: ", "B"},
          {3, 0, 0, "", "the word"},
          {3, 1, 0, "", "the dog"}};
}

// The window of a request (docs/inference.md §4), written out again here.
struct Window {
  std::vector<int32_t> input, targets;  // targets: the continuation's, predicted by the last rows
};
Window WindowOf(const EvalRequest& r, int64_t L) {
  const EncodedRequest e = EncodeRequest(Tok(), r.context, r.continuation, Eos());
  std::vector<int32_t> full = e.context;
  full.insert(full.end(), e.continuation.begin(), e.continuation.end());
  if (static_cast<int64_t>(full.size()) > L + 1) full.erase(full.begin(), full.end() - (L + 1));
  return {std::vector<int32_t>(full.begin(), full.end() - 1), e.continuation};
}

TEST(EncodeRequest, FollowsLmEvalsPairEncoding) {
  const EncodedRequest a = EncodeRequest(Tok(), "Answer: ", "A", Eos());
  std::vector<int32_t> ctx;
  for (uint32_t id : Tok().Encode("Answer:")) ctx.push_back(static_cast<int32_t>(id));
  EXPECT_EQ(a.context, ctx);  // the trailing space moved to the continuation
  const std::vector<uint32_t> whole = Tok().Encode("Answer: A");
  EXPECT_EQ(a.continuation, std::vector<int32_t>(whole.begin() + ctx.size(), whole.end()));
  // Python's str.isspace() whitespace: a no-break space and a newline move too.
  const EncodedRequest b = EncodeRequest(Tok(), "Answer:\xC2\xA0\n", "A", Eos());
  EXPECT_EQ(b.context, ctx);
  const EncodedRequest c = EncodeRequest(Tok(), "", "the word", Eos());
  EXPECT_EQ(c.context, std::vector<int32_t>{static_cast<int32_t>(Eos())});
  EXPECT_THROW(EncodeRequest(Tok(), "", "x", -1), Error);
  // A model trained with a BOS before every document: the context starts with it (an empty
  // context is the BOS alone); the continuation is the same.
  constexpr int64_t kBos = 3;
  const EncodedRequest d = EncodeRequest(Tok(), "Answer: ", "A", Eos(), kBos);
  std::vector<int32_t> bos_ctx = {kBos};
  bos_ctx.insert(bos_ctx.end(), ctx.begin(), ctx.end());
  EXPECT_EQ(d.context, bos_ctx);
  EXPECT_EQ(d.continuation, a.continuation);
  EXPECT_EQ(EncodeRequest(Tok(), "", "the word", Eos(), kBos).context, std::vector<int32_t>{kBos});
  EXPECT_EQ(EncodeRequest(Tok(), "", "the word", -1, kBos).continuation, c.continuation);
}

TEST(Loglikelihood, AgreesWithTheFloat64Reference) {
  Model m;
  const std::vector<EvalRequest> reqs = Requests();
  LoglikelihoodScorer scorer(m.c, *m.p, m.cpu, Tok(), Eos());
  const std::vector<ScoredRequest> got = scorer.Score(reqs);
  const int64_t L = m.c.max_seq_len, rows = static_cast<int64_t>(reqs.size()), V = m.c.vocab_size;
  std::vector<int32_t> inputs(rows * L), labels(rows * L, -100), docs(rows * L), pos(rows * L),
      valid(rows * L);
  for (int64_t r = 0; r < rows; ++r) {
    const Window w = WindowOf(reqs[r], L);
    for (int64_t t = 0; t < L; ++t) {
      const bool in = t < static_cast<int64_t>(w.input.size());
      inputs[r * L + t] = in ? w.input[t] : 0, pos[r * L + t] = static_cast<int32_t>(t);
      valid[r * L + t] = in;
    }
  }
  TempDir dir;
  std::vector<Tensor> batch;
  batch.push_back(model::ReferenceI32("inputs", inputs, rows, L));
  batch.push_back(model::ReferenceI32("labels", labels, rows, L));
  batch.push_back(model::ReferenceI32("doc_ids", docs, rows, L));
  batch.push_back(model::ReferenceI32("positions", pos, rows, L));
  batch.push_back(model::ReferenceI32("key_valid", valid, rows, L));
  const SafetensorsFile ref =
      model::RunFloat64Reference(m.c, *m.p, batch, dir.path(), TRAIL_SOURCE_DIR);
  const double* logits = ref.Find("logits")->data<double>();
  for (int64_t r = 0; r < rows; ++r) {
    const Window w = WindowOf(reqs[r], L);
    double ll = 0;
    const int64_t n = static_cast<int64_t>(w.input.size()),
                  k = static_cast<int64_t>(w.targets.size());
    for (int64_t j = 0; j < k; ++j) {
      const double* row = logits + (r * L + n - k + j) * V;
      double mx = row[0], s = 0;
      for (int64_t v = 1; v < V; ++v) mx = std::max(mx, row[v]);
      for (int64_t v = 0; v < V; ++v) s += std::exp(row[v] - mx);
      ll += row[w.targets[j]] - mx - std::log(s);
    }
    // The logits agree with float64 to ~1e-6 relative (model_test bounds them by 2e-5); each
    // log-probability's error is at most twice the largest logit error, so over at most 8
    // tokens of logits below 10 in size, 1e-4 (plus 1e-5 relative) is a 5-50x margin, while a
    // wrong target, row or window is off by tenths or more.
    EXPECT_NEAR(got[r].loglik, ll, 1e-4 + 1e-5 * std::fabs(ll)) << "request " << r;
    EXPECT_EQ(got[r].continuation_tokens, k) << "request " << r;
  }
  EXPECT_GT(got[3].truncated, 0);  // the long context lost its front
  EXPECT_EQ(got[3].context_tokens + got[3].continuation_tokens, L + 1);
  EXPECT_EQ(got[0].truncated, 0);
}

// The forward over the window, then float32 logprobs summed in float64: the scorer's bits.
double ForwardLoglik(Model& m, const Window& w) {
  const int64_t T = static_cast<int64_t>(w.input.size()), V = m.c.vocab_size;
  const std::vector<int32_t> labels(T, model::kIgnoreLabel);
  model::Transformer tf(m.c, m.cpu);
  model::Activations acts(m.c, 1, T, m.cpu);
  tf.Forward(*m.p, {1, T, w.input.data(), labels.data()}, acts);
  std::vector<float> logits(T * V);
  m.cpu.CopyToHost(model::Transformer::Logits(acts, 1, T), logits.data());
  double ll = 0;
  const int64_t k = static_cast<int64_t>(w.targets.size());
  for (int64_t j = 0; j < k; ++j) {
    const float* row = logits.data() + (T - k + j) * V;
    const int32_t none = -1;
    float lse = 0;
    repops::CrossEntropyForward(row, &none, 1, V, none, &lse);
    ll += static_cast<double>(row[w.targets[j]] - lse);
  }
  return ll;
}

TEST(Loglikelihood, BitsAreTheForwardsWhateverTheGroupingAndThreads) {
  Model m;
  const std::vector<EvalRequest> reqs = Requests();
  LoglikelihoodScorer scorer(m.c, *m.p, m.cpu, Tok(), Eos());
  std::vector<std::vector<ScoredRequest>> runs;
  for (size_t threads : {1, 3}) {
    SetKernelThreads(threads);
    runs.push_back(scorer.Score(reqs));
  }
  std::vector<ScoredRequest> alone;  // each request in a call of its own, in reverse order
  for (size_t i = reqs.size(); i-- > 0;) alone.insert(alone.begin(), scorer.Score({reqs[i]})[0]);
  runs.push_back(alone);
  for (size_t i = 0; i < reqs.size(); ++i) {
    const uint64_t want = std::bit_cast<uint64_t>(ForwardLoglik(m, WindowOf(reqs[i], 24)));
    for (const auto& run : runs) EXPECT_EQ(std::bit_cast<uint64_t>(run[i].loglik), want) << i;
  }
}

// A continuation longer than the model's context is found before anything is scored, naming
// where it is.
TEST(Loglikelihood, AnOverlongContinuationIsRefusedBeforeScoring) {
  Model m;
  std::vector<EvalRequest> reqs = Requests();
  LoglikelihoodScorer scorer(m.c, *m.p, m.cpu, Tok(), Eos());
  EXPECT_NO_THROW(scorer.CheckFits(reqs, "tasks/fine"));
  std::string longer;
  for (int64_t i = 0; i <= m.c.max_seq_len; ++i) longer += " and";
  reqs.push_back({7, 1, 0, "Question:", longer});
  const std::string e = ErrorOf([&] { scorer.CheckFits(reqs, "tasks/long (task long)"); });
  EXPECT_NE(e.find("tasks/long (task long): document 7, choice 1: its continuation is"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("nothing was scored"), std::string::npos) << e;
}

EvalTask Crafted(const std::vector<std::pair<std::string, int64_t>>& choices, int64_t label) {
  EvalTask t;
  t.name = "crafted", t.base = "crafted", t.primary_metric = "acc_raw";
  for (size_t i = 0; i < choices.size(); ++i) {
    t.requests.push_back({0, static_cast<int64_t>(i), label, "ctx", choices[i].first});
  }
  t.documents = 1;
  return t;
}
std::vector<ScoredRequest> Lls(const std::vector<double>& ll, const std::vector<int64_t>& tokens) {
  std::vector<ScoredRequest> out;
  for (size_t i = 0; i < ll.size(); ++i) out.push_back({ll[i], tokens[i], 3, 0, false});
  return out;
}

TEST(EvalMetrics, CraftedCases) {
  // Ties go to the lowest idx.
  TaskMetrics m = ComputeMetrics(Crafted({{" a", 1}, {" b", 1}}, 0), Lls({-1.0, -1.0}, {1, 1}));
  EXPECT_EQ(m.acc_raw, 1.0);
  m = ComputeMetrics(Crafted({{" a", 1}, {" b", 1}}, 1), Lls({-1.0, -1.0}, {1, 1}));
  EXPECT_EQ(m.acc_raw, 0.0);
  // The leading space counts as a character: -1/2 > -1.6/3 picks " a"; without it -1/1 would
  // lose to -1.6/3.
  m = ComputeMetrics(Crafted({{" a", 1}, {"bbb", 1}}, 0), Lls({-1.0, -1.6}, {1, 1}));
  EXPECT_EQ(m.acc_per_char, 1.0);
  EXPECT_EQ(m.acc_raw, 1.0);
  // Multi-token continuations: per token divides by the tokens; characters are code points.
  m = ComputeMetrics(Crafted({{" é", 2}, {" long answer", 4}}, 1), Lls({-3.0, -5.0}, {2, 4}));
  EXPECT_EQ(m.acc_raw, 0.0);
  EXPECT_EQ(m.acc_per_token, 1.0);  // -1.25 > -1.5
  EXPECT_EQ(m.acc_per_char, 1.0);   // -5/12 > -3/2 (" é": 2 code points)
  EXPECT_NEAR(m.bits_per_byte, 5.0 / (12 * std::log(2.0)), 1e-15);
  EXPECT_EQ(m.chance, 0.5);
  // A continuation of no token of its own divides by 1.
  m = ComputeMetrics(Crafted({{" x", 0}, {" y", 1}}, 0), Lls({0.0, -0.5}, {0, 1}));
  EXPECT_EQ(m.acc_per_token, 1.0);
  const Macro macro = ComputeMacro({{"a", "a", "acc_raw", false, 0.3},
                                    {"a:mc", "a", "acc_raw", true, 0.5},
                                    {"b", "b", "acc_per_char", false, 0.2}});
  ASSERT_EQ(macro.rows.size(), 2u);
  EXPECT_EQ(macro.rows[0].best, 0.5);
  EXPECT_DOUBLE_EQ(macro.score, 0.35);
}

// A task folder with these request lines (gzip'd) and this primary metric.
std::string TaskDir(const TempDir& d, const std::string& name,
                    const std::vector<std::string>& lines, const std::string& metric = "acc_raw") {
  const std::string dir = d.path() + "/" + name;
  std::filesystem::create_directories(dir);
  WriteFileAtomic(dir + "/config.json", "{\"task_name\": \"" + name +
                                            "\", \"task_config\": {\"primary_metric\": \"" +
                                            metric + "\"}}");
  std::string text;
  for (const std::string& l : lines) text += l + "\n";
  WriteFileAtomic(dir + "/requests.jsonl", text);
  EXPECT_EQ(std::system(("gzip -f " + dir + "/requests.jsonl").c_str()), 0);
  return dir;
}
std::string Line(int doc, int idx, int label, const std::string& type = "loglikelihood") {
  return "{\"request_type\": \"" + type +
         "\", \"request\": {\"context\": \"Q\", \"continuation\": " + "\" a\"}, \"doc_id\": " +
         std::to_string(doc) + ", \"idx\": " + std::to_string(idx) +
         ", \"label\": " + std::to_string(label) + "}";
}

void ExpectError(const std::function<void()>& f, const std::string& part) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one saying '" << part << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

TEST(OlmesTasks, ReadsDocumentsAndLimitsAndRefusesBadFiles) {
  TempDir d;
  const std::string ok =
      TaskDir(d, "ok", {Line(7, 1, 0), Line(7, 0, 0), Line(3, 0, 1), Line(3, 1, 1), Line(9, 0, 0)});
  EvalTask t = LoadTask(ok, 0);
  EXPECT_EQ(t.documents, 3);
  ASSERT_EQ(t.requests.size(), 5u);
  EXPECT_EQ(t.requests[0].doc_id, 7);
  EXPECT_EQ(t.requests[0].idx, 0);  // choices in idx order
  EXPECT_EQ(LoadTask(ok, 2).documents, 2);
  EXPECT_EQ(FindTaskDirs({d.path()}).size(), 1u);
  ExpectError(
      [&] {
        LoadTask(TaskDir(d, "json", {Line(1, 0, 0), "{oops"}), 0);
      },
      "requests.jsonl.gz:2");
  ExpectError([&] { LoadTask(TaskDir(d, "gen", {Line(1, 0, 0, "generate_until")}), 0); },
              "loglikelihood requests only");
  ExpectError(
      [&] {
        LoadTask(TaskDir(d, "dup", {Line(1, 0, 0), Line(1, 0, 0)}), 0);
      },
      "not 0..1 once each");
  ExpectError(
      [&] {
        LoadTask(TaskDir(d, "label", {Line(1, 0, 2), Line(1, 1, 2)}), 0);
      },
      "label 2 is not one of its 2 choices");
  ExpectError([&] { LoadTask(TaskDir(d, "metric", {Line(1, 0, 0)}, "f1"), 0); },
              "unknown primary metric 'f1'");
  ExpectError([&] { LoadTask(d.path(), 0); }, "config.json");
  std::filesystem::create_directories(d.path() + "/empty");
  ExpectError([&] { FindTaskDirs({d.path() + "/empty"}); }, "holds no task folder");
}

}  // namespace
}  // namespace trail::infer
