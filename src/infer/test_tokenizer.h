// For the export and import tests: a small byte-level BPE tokenizer (trained here on two lines,
// about 300 ids, "<|endoftext|>" its special and EOS) and its contract's ids.
#pragma once

#include <memory>

#include "tokenizer/contract.h"
#include "tokenizer/trainer.h"

namespace trail::infer {

struct TestTokenizer {
  std::unique_ptr<tok::Tokenizer> t;
  tok::TokenizerContract k;
  TestTokenizer() {
    tok::TrainOptions o;
    o.vocab_size = 300, o.pattern = tok::NamedPattern("gpt2"), o.specials = {"<|endoftext|>"};
    o.min_frequency = 1;
    t = tok::TrainBpe({"the quick brown fox jumps over the lazy dog", "in the beginning"}, o);
    k.vocab_size = t->vocab_size(), k.eos_id = t->SpecialId("<|endoftext|>");
  }
};

}  // namespace trail::infer
