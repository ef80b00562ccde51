#include "tokenizer/tokenizer.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <thread>

#include "core/error.h"
#include "tokenizer/piece_cache.h"

namespace trail::tok {
namespace {

std::atomic<uint64_t> next_serial{1};

}  // namespace

Tokenizer::Tokenizer(std::string name, std::string pattern, BpeModel model,
                     std::vector<SpecialToken> specials, Normalization normalization)
    : name_(std::move(name)),
      pretok_(pattern),
      model_(std::move(model)),
      specials_(std::move(specials)),
      normalization_(normalization),
      serial_(next_serial++) {
  vocab_size_ = static_cast<uint32_t>(model_.size());
  for (const SpecialToken& s : specials_) {
    TRAIL_CHECK(!s.text.empty(), name_, ": empty special token");
    vocab_size_ = std::max(vocab_size_, s.id + 1);
  }
  special_text_.resize(vocab_size_ - model_.size());
  for (const SpecialToken& s : specials_) {
    if (s.id >= model_.size()) {
      special_text_[s.id - model_.size()] = s.text;
    } else {
      TRAIL_CHECK(model_.bytes(s.id).empty() || model_.bytes(s.id) == s.text, name_,
                  ": special token ", s.text, " reuses id ", s.id, " of a different token");
    }
  }
  // Longest first, so a special that is a prefix of another never wins.
  std::sort(specials_.begin(), specials_.end(), [](const SpecialToken& a, const SpecialToken& b) {
    return a.text.size() != b.text.size() ? a.text.size() > b.text.size() : a.text < b.text;
  });
}

int64_t Tokenizer::SpecialId(std::string_view text) const {
  for (const SpecialToken& s : specials_) {
    if (s.text == text) return s.id;
  }
  return -1;
}

void Tokenizer::EncodeValidUtf8(std::string_view text, std::vector<uint32_t>& out) const {
  PieceCache& cache = PieceCache::ForThread(serial_);
  const StringHash hash;
  pretok_.Split(text, [&](std::string_view piece) {
    const bool cacheable = piece.size() <= PieceCache::kMaxBytes;
    const uint64_t h = cacheable ? hash(piece) : 0;
    if (cacheable && cache.Lookup(piece, h, out)) return;
    const size_t at = out.size();
    model_.EncodePiece(piece, out);
    if (cacheable) cache.Store(piece, h, out.data() + at, out.size() - at);
  });
}

void Tokenizer::EncodeText(std::string_view text, std::vector<uint32_t>& out) const {
  while (!text.empty()) {
    const size_t ok = ValidUtf8Prefix(text);
    if (ok > 0) {
      if (normalization_ == Normalization::kNfc) {
        thread_local std::string scratch;
        EncodeValidUtf8(ToNfc(text.substr(0, ok), scratch), out);
      } else {
        EncodeValidUtf8(text.substr(0, ok), out);
      }
    }
    if (ok == text.size()) return;
    model_.EncodePiece(text.substr(ok, 1), out);  // an invalid byte is a piece of its own
    text.remove_prefix(ok + 1);
  }
}

void Tokenizer::EncodeOrdinary(std::string_view text, std::vector<uint32_t>& out) const {
  EncodeText(text, out);
}

std::vector<uint32_t> Tokenizer::Encode(std::string_view text, const EncodeOptions& opt) const {
  std::vector<uint32_t> out;
  out.reserve(text.size() / 3 + 4);
  auto allowed = [&](const SpecialToken& s) {
    return opt.allow_all_special || opt.allowed_special.count(s.text) > 0;
  };
  if (opt.error_on_disallowed_special) {
    for (const SpecialToken& s : specials_) {
      TRAIL_CHECK(allowed(s) || text.find(s.text) == std::string_view::npos, name_,
                  ": the text contains the special token ", s.text,
                  " which is not allowed here (allow it, or encode it as text)");
    }
  }
  if (!opt.allow_all_special && opt.allowed_special.empty()) {
    EncodeText(text, out);
    return out;
  }
  for (const std::string& s : opt.allowed_special) {
    TRAIL_CHECK(SpecialId(s) >= 0, name_, ": unknown special token '", s, "'");
  }
  // Split at the leftmost allowed special (longest on ties), like the references.
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t best = std::string_view::npos;
    const SpecialToken* which = nullptr;
    for (const SpecialToken& s : specials_) {
      if (!allowed(s)) continue;
      const size_t at = text.find(s.text, pos);
      if (at < best) {
        best = at;
        which = &s;
      }
    }
    if (which == nullptr) {
      EncodeText(text.substr(pos), out);
      break;
    }
    EncodeText(text.substr(pos, best - pos), out);
    out.push_back(which->id);
    pos = best + which->text.size();
  }
  return out;
}

std::string Tokenizer::Decode(std::span<const uint32_t> ids) const {
  std::string out;
  for (uint32_t id : ids) {
    TRAIL_CHECK(id < vocab_size_, name_, ": token id ", id, " is outside the vocabulary of ",
                vocab_size_);
    if (id < model_.size() && !model_.bytes(id).empty()) {
      out += model_.bytes(id);
    } else if (id >= model_.size() && !special_text_[id - model_.size()].empty()) {
      out += special_text_[id - model_.size()];
    } else {
      bool found = false;
      for (const SpecialToken& s : specials_) {
        if (s.id == id) {
          out += s.text;
          found = true;
          break;
        }
      }
      TRAIL_CHECK(found, name_, ": token id ", id, " has no bytes");
    }
  }
  return out;
}

std::vector<std::vector<uint32_t>> Tokenizer::EncodeBatch(std::span<const std::string> texts,
                                                          int threads,
                                                          const EncodeOptions& opt) const {
  std::vector<std::vector<uint32_t>> out(texts.size());
  threads = std::max(1, std::min<int>(threads, static_cast<int>(texts.size())));
  std::atomic<size_t> next{0};
  std::exception_ptr error;
  std::mutex error_mu;
  auto work = [&] {
    try {
      for (size_t i; (i = next.fetch_add(1)) < texts.size();) out[i] = Encode(texts[i], opt);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mu);
      if (!error) error = std::current_exception();
      next = texts.size();
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
  return out;
}

}  // namespace trail::tok
