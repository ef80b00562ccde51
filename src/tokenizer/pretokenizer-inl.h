// Template part of pretokenizer.h.
#pragma once

namespace trail::tok {

template <class F>
void Pretokenizer::Split(std::string_view text, F&& emit) const {
  if (scanner_ != ScannerKind::kNone) {
    for (size_t pos = 0; pos < text.size();) {
      const size_t n = ScanPiece(scanner_, text, pos);
      emit(text.substr(pos, n));
      pos += n;
    }
    return;
  }
  const MatchStatePtr st = NewMatchState();
  size_t pos = 0;
  size_t b = 0, e = 0;
  while (pos < text.size()) {
    if (!Next(*st, text, pos, b, e)) {
      emit(text.substr(pos));
      break;
    }
    if (b > pos) emit(text.substr(pos, b - pos));
    if (e == b) {  // an empty match: step over one character
      size_t n = 1;
      while (b + n < text.size() && (static_cast<unsigned char>(text[b + n]) & 0xC0) == 0x80) ++n;
      emit(text.substr(b, n));
      pos = b + n;
      continue;
    }
    emit(text.substr(b, e - b));
    pos = e;
  }
}

}  // namespace trail::tok
