// Time per token of causal attention (forward + backward) and of cross-entropy (forward +
// backward) over 16k-50k vocabularies, and the time of an int8 linear layer's quantization,
// forward and backward, on the active backend; medians of repeated runs.
// Usage: ops_bench [reps] [threads]
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

#include "bench/bench_util.h"
#include "core/thread_pool.h"
#include "repops/attention.h"
#include "repops/cross_entropy.h"
#include "repops/gemm.h"
#include "repops/int8_linear.h"
#include "repops/kernels.h"
#include "repops/random.h"

using namespace trail;

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 5;
  const int threads = argc > 2 ? std::atoi(argv[2]) : 2;
  SetKernelThreads(threads);
  repops::UseDefaultSimdTarget();
  std::printf("backend %s, %d threads, medians of %d runs\n", repops::ActiveKernels().name, threads,
              reps);

  // GPT-2-small-like layer at the demo's scale: B=8, H=6, T=256, hd=64; one document a row,
  // then packed rows as the trainer passes them (documents of 100 tokens, every key valid).
  struct Variant {
    int64_t window;
    bool packed;
  };
  for (const Variant var : {Variant{0, false}, Variant{64, false}, Variant{0, true}}) {
    const int64_t window = var.window;
    repops::AttentionShape s;
    s.batch = 8, s.heads = 6, s.seq = 256, s.head_dim = 64, s.window = window;
    std::vector<int32_t> docs(s.batch * s.seq);
    std::vector<uint8_t> valid(s.batch * s.seq, 1);
    for (size_t i = 0; i < docs.size(); ++i) docs[i] = static_cast<int32_t>(i / 100);
    if (var.packed) s.doc_ids = docs.data(), s.key_valid = valid.data();
    const int64_t n = s.batch * s.heads * s.seq * s.head_dim;
    std::vector<float> q(n), k(n), v(n), out(n), dout(n), dq(n), dk(n), dv(n);
    std::vector<float> probs(s.batch * s.heads * s.seq * s.seq);
    repops::FillUniform(q.data(), n, 1, 1, -1, 1);
    repops::FillUniform(k.data(), n, 1, 2, -1, 1);
    repops::FillUniform(v.data(), n, 1, 3, -1, 1);
    repops::FillUniform(dout.data(), n, 1, 4, -1, 1);
    std::vector<double> tf, tb;
    for (int r = 0; r < reps; ++r) {
      tf.push_back(bench::Seconds([&] {
        repops::AttentionForward(s, q.data(), k.data(), v.data(), out.data(), probs.data());
      }));
      tb.push_back(bench::Seconds([&] {
        repops::AttentionBackward(s, q.data(), k.data(), v.data(), probs.data(), dout.data(),
                                  dq.data(), dk.data(), dv.data());
      }));
    }
    const double tokens = double(s.batch) * s.seq;
    std::printf(
        "attention B=8 H=6 T=256 hd=64 window=%-4lld%s fwd %7.2f us/token  bwd %7.2f "
        "us/token\n",
        static_cast<long long>(window), var.packed ? " 100-token documents" : "",
        bench::Median(tf) / tokens * 1e6, bench::Median(tb) / tokens * 1e6);
  }

  for (int64_t vocab : {16384, 50257}) {
    const int64_t rows = 2048;
    std::vector<float> logits(rows * vocab), d(rows * vocab), lse(rows);
    std::vector<int32_t> tgt(rows);
    repops::FillUniform(logits.data(), rows * vocab, 2, 1, -4, 4);
    for (int64_t r = 0; r < rows; ++r) tgt[r] = static_cast<int32_t>((r * 7919) % vocab);
    std::vector<double> tf, tb;
    for (int r = 0; r < reps; ++r) {
      repops::CrossEntropySums sums;
      tf.push_back(bench::Seconds([&] {
        sums =
            repops::CrossEntropyForward(logits.data(), tgt.data(), rows, vocab, -100, lse.data());
      }));
      tb.push_back(bench::Seconds([&] {
        repops::CrossEntropyBackward(logits.data(), tgt.data(), lse.data(), rows, vocab, -100,
                                     1.0f / rows, 1e-4f, d.data());
      }));
    }
    std::printf(
        "cross-entropy rows=2048 vocab=%-6lld        fwd %7.2f us/token  bwd %7.2f us/token\n",
        static_cast<long long>(vocab), bench::Median(tf) / rows * 1e6,
        bench::Median(tb) / rows * 1e6);
  }
  // int8 linear layers (docs/repops.md §5) at configuration B's MLP shapes: quantizing the
  // weight (step sizes, q, clip mask), the layer input per token (absmax, then quantize_i8), the
  // forward, and both gradients (Int8LinearBackward: quantizations, the dX and dW products, the
  // input's transpose).
  for (const auto& [K, N] : {std::pair<int64_t, int64_t>{384, 1536}, {1536, 384}}) {
    const int64_t M = 2048;
    std::vector<float> x(M * K), w(K * N), dy(M * N), y(M * N), dx(M * K), dw(K * N);
    repops::FillUniform(x.data(), x.size(), 4, 1, -1, 1);
    repops::FillUniform(w.data(), w.size(), 4, 2, -0.05f, 0.05f);
    repops::FillUniform(dy.data(), dy.size(), 4, 3, -1e-3f, 1e-3f);
    repops::QuantizedWeight qw;
    repops::QuantizedInput qx;
    repops::Int8Scratch scratch;
    const auto mode = repops::Int8Backward::kInt8;
    repops::QuantizeWeight(w.data(), K, N, mode, qw);
    std::vector<double> tw, tq, tf, tb;
    for (int r = 0; r < reps; ++r) {
      tw.push_back(bench::Seconds([&] { repops::QuantizeWeight(w.data(), K, N, mode, qw); }));
      tq.push_back(bench::Seconds([&] { repops::QuantizeInput(x.data(), M, K, qx); }));
      tf.push_back(bench::Seconds([&] { repops::Int8LinearForward(qx, qw, scratch, y.data()); }));
      tb.push_back(bench::Seconds([&] {
        repops::Int8LinearBackward(qx, dy.data(), qw, mode, scratch, dx.data(), false, dw.data());
      }));
      qx.qt_ready = false;  // the next round transposes the input again, as a new step does
    }
    std::printf(
        "int8 linear M=2048 K=%-4lld N=%-4lld quantize weight %6.3f ms  quantize input %6.3f ms "
        "(%.3f ns/element)  forward %6.3f ms  backward %6.3f ms\n",
        static_cast<long long>(K), static_cast<long long>(N), bench::Median(tw) * 1e3,
        bench::Median(tq) * 1e3, bench::Median(tq) / double(M * K) * 1e9, bench::Median(tf) * 1e3,
        bench::Median(tb) * 1e3);
  }
  // The cost of keeping subnormals (docs/repops.md §1): GEMM and Exp on normal data and on data
  // whose products underflow, under the contract's mode and, for comparison, with FTZ/DAZ on.
  {
    const int64_t M = 256, K = 256, N = 256;
    std::vector<float> a(M * K), b(K * N), c(M * N), e(1 << 20), ey(1 << 20);
    repops::FillUniform(e.data(), e.size(), 3, 3, -100, 10);
    for (float scale : {1.0f, 1e-20f}) {
      repops::FillUniform(a.data(), M * K, 3, 1, 0.5f * scale, scale);
      repops::FillUniform(b.data(), K * N, 3, 2, 0.5f * scale, scale);
      SetKernelThreads(1);  // the FP mode is set on this thread only
      auto gemm = [&] { repops::MatMul(a.data(), b.data(), c.data(), M, K, N); };
      auto exps = [&] {
        repops::ActiveKernels().map(repops::MathFn::kExp, e.data(), ey.data(), e.size());
      };
      std::vector<double> tg, tx;
      for (int r = 0; r < reps; ++r)
        tg.push_back(bench::Seconds(gemm)), tx.push_back(bench::Seconds(exps));
      std::printf("subnormals kept  inputs~%-6g GEMM 256^3 %8.3f ms   Exp 1M %8.3f ms\n", scale,
                  bench::Median(tg) * 1e3, bench::Median(tx) * 1e3);
#if defined(__x86_64__)
      const unsigned saved = _mm_getcsr();
      _mm_setcsr(saved | (1u << 15) | (1u << 6));
      tg.clear(), tx.clear();
      for (int r = 0; r < reps; ++r)
        tg.push_back(bench::Seconds(gemm)), tx.push_back(bench::Seconds(exps));
      _mm_setcsr(saved);
      std::printf("FTZ/DAZ (not the contract) ~%-6g GEMM 256^3 %8.3f ms   Exp 1M %8.3f ms\n", scale,
                  bench::Median(tg) * 1e3, bench::Median(tx) * 1e3);
#endif
    }
  }
  return 0;
}
