#include "infer/generate.h"

#include <algorithm>

#include "core/error.h"
#include "core/timing.h"

namespace trail::infer {
namespace {

// Bytes at the end of s that start a UTF-8 character whose continuation bytes have not come yet.
size_t IncompleteUtf8Tail(std::string_view s) {
  for (size_t back = 1; back <= std::min<size_t>(3, s.size()); ++back) {
    const auto b = static_cast<unsigned char>(s[s.size() - back]);
    if ((b & 0xC0) == 0x80) continue;  // a continuation byte: look further back
    const size_t need = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
    return need > back ? back : 0;
  }
  return 0;
}

// The text of a generation as it grows: where a stop string first appears, and how much is
// final (cannot be claimed by a stop string or complete a character).
class TextStream {
 public:
  TextStream(const std::vector<std::string>& stop,
             const std::function<void(std::string_view)>& on_text)
      : stop_(stop), on_text_(on_text) {
    for (const std::string& s : stop) longest_ = std::max(longest_, s.size());
  }
  // Appends bytes; true when the text now contains a stop string (the text is cut before it).
  bool Append(std::string_view bytes) {
    const size_t from = text_.size() >= longest_ ? text_.size() - longest_ + 1 : 0;
    text_.append(bytes);
    size_t cut = std::string::npos;
    for (const std::string& s : stop_) cut = std::min(cut, text_.find(s, from));
    if (cut != std::string::npos) {
      text_.resize(cut);
      Emit(text_.size());
      return true;
    }
    Emit(text_.size() - std::max(HeldForStop(), IncompleteUtf8Tail(text_)));
    return false;
  }
  void Finish() { Emit(text_.size()); }
  const std::string& text() const { return text_; }

 private:
  // The longest suffix of the text that is a proper prefix of a stop string.
  size_t HeldForStop() const {
    size_t held = 0;
    for (const std::string& s : stop_) {
      for (size_t n = std::min(s.size() - 1, text_.size()); n > held; --n) {
        if (text_.compare(text_.size() - n, n, s, 0, n) == 0) {
          held = n;
          break;
        }
      }
    }
    return held;
  }
  void Emit(size_t upto) {
    if (upto > emitted_ && on_text_)
      on_text_(std::string_view(text_).substr(emitted_, upto - emitted_));
    emitted_ = std::max(emitted_, upto);
  }
  const std::vector<std::string>& stop_;
  const std::function<void(std::string_view)>& on_text_;
  std::string text_;
  size_t emitted_ = 0, longest_ = 0;
};

void CheckOptions(const model::ModelConfig& c, const GenerateOptions& o, int64_t capacity) {
  o.sampling.Validate();
  TRAIL_CHECK(!o.prompt.empty(), "the prompt is empty: give at least one token of text");
  TRAIL_CHECK(o.max_tokens >= 1, "max tokens must be >= 1, got ", o.max_tokens);
  for (const std::string& s : o.stop) TRAIL_CHECK(!s.empty(), "a stop string is empty");
  const int64_t P = static_cast<int64_t>(o.prompt.size());
  TRAIL_CHECK(P <= c.max_seq_len, "the prompt is ", P,
              " tokens; the model's context is max_seq_len = ", c.max_seq_len,
              " tokens: shorten it");
  TRAIL_CHECK(capacity >= P, "the decoder holds ", capacity, " positions; the prompt needs ", P);
}

}  // namespace

int64_t DecoderCapacity(const model::ModelConfig& c, int64_t prompt_tokens, int64_t max_tokens) {
  const int64_t fed = prompt_tokens + std::max<int64_t>(max_tokens - 1, 0);
  return std::max<int64_t>(1, std::min(c.max_seq_len, fed));
}

Generation Generate(model::Decoder& dec, const tok::Tokenizer& tokenizer, const GenerateOptions& o,
                    const std::function<void(std::string_view)>& on_text) {
  const model::ModelConfig& c = dec.config();
  CheckOptions(c, o, dec.capacity());
  const int64_t P = static_cast<int64_t>(o.prompt.size()), V = c.vocab_size;
  model::Sampler sampler(dec.backend().host_kernels(), o.sampling);
  TextStream text(o.stop, on_text);
  Generation g;
  std::vector<float> logits(static_cast<size_t>(V));
  dec.Truncate(0);
  auto start = std::chrono::steady_clock::now();
  TensorView last;
  for (int64_t t = 0; t < P; t += dec.max_chunk()) {
    last = dec.Extend(o.prompt.data() + t, std::min(dec.max_chunk(), P - t));
  }
  dec.backend().CopyToHost(last, logits.data());
  g.prefill_seconds = SecondsSince(start);
  start = std::chrono::steady_clock::now();
  for (int64_t i = 0;; ++i) {
    if (i > 0) dec.backend().CopyToHost(last, logits.data());
    const model::SampledToken tok = sampler.Sample(logits.data(), V, P + i);
    g.ids.push_back(tok.id);
    g.logprobs.push_back(tok.logprob);
    if (tok.id == o.eos_id) {
      g.finish = "eos";
      break;
    }
    const uint32_t id = static_cast<uint32_t>(tok.id);
    // A padded vocabulary's rows past the tokenizer's ids are tokens without text (as
    // transformers' decode skips them).
    if (text.Append(id < tokenizer.vocab_size() ? tokenizer.Decode({&id, 1}) : std::string())) {
      g.finish = "stop";
      break;
    }
    if (i + 1 == o.max_tokens) {
      g.finish = "length";
      break;
    }
    if (P + i >= dec.capacity()) {  // the token just drawn cannot be fed: the context is full
      g.finish = "context";
      break;
    }
    last = dec.Extend(&tok.id, 1);
  }
  text.Finish();
  g.text = text.text();
  g.decode_seconds = SecondsSince(start);
  return g;
}

GenerateRun GenerateFromRun(const TrainedModelOptions& model, const std::string& prompt,
                            GenerateOptions options,
                            const std::function<void(std::string_view)>& on_text) {
  const TrainedModel m(model);
  GenerateRun run;
  if (m.document_bos() >= 0) run.prompt.push_back(static_cast<int32_t>(m.document_bos()));
  for (uint32_t id : m.tokenizer().Encode(prompt)) run.prompt.push_back(static_cast<int32_t>(id));
  options.prompt = run.prompt;
  options.eos_id = m.contract().eos_id;
  const int64_t P = static_cast<int64_t>(run.prompt.size());  // Generate checks its bounds
  const int64_t capacity = DecoderCapacity(m.config(), P, options.max_tokens);
  model::Decoder dec(m.config(), m.params(), m.backend(), capacity,
                     std::min<int64_t>(capacity, 256));
  run.generation = Generate(dec, m.tokenizer(), options, on_text);
  run.step = m.step();
  run.checkpoint_dir = m.checkpoint_dir();
  run.backend = m.backend().description();
  run.cache_bytes = dec.cache_bytes();
  return run;
}

}  // namespace trail::infer
