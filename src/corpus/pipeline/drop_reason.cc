#include "corpus/pipeline/drop_reason.h"

#include "core/error.h"

namespace trail::corpus {
namespace {
constexpr DropReason kAll[] = {DropReason::kEmptyAfterNormalize,
                               DropReason::kLanguageNotAllowed,
                               DropReason::kLanguageLowScore,
                               DropReason::kQuality,
                               DropReason::kContaminated,
                               DropReason::kQuota,
                               DropReason::kExactDup,
                               DropReason::kNearDup};
}  // namespace

std::string_view DropReasonText(DropReason r) {
  switch (r) {
    case DropReason::kNone:
      return "";
    case DropReason::kEmptyAfterNormalize:
      return "normalize.empty";
    case DropReason::kLanguageNotAllowed:
      return "language.not_allowed";
    case DropReason::kLanguageLowScore:
      return "language.low_score";
    case DropReason::kQuality:
      return "quality.";
    case DropReason::kContaminated:
      return "contaminated";
    case DropReason::kQuota:
      return "quota";
    case DropReason::kExactDup:
      return "exact_dup";
    case DropReason::kNearDup:
      return "near_dup";
  }
  return "";
}

Drop::Drop(DropReason reason, std::string_view rule)
    : reason_(reason), rule_(reason == DropReason::kQuality ? rule : std::string_view()) {
  TRAIL_CHECK(reason != DropReason::kQuality || !rule.empty(),
              "a quality drop needs the rule that failed");
  text_ = std::string(DropReasonText(reason)) + rule_;
}

Drop Drop::Parse(std::string_view text) {
  if (text.empty()) return Drop();
  for (DropReason r : kAll) {
    const std::string_view t = DropReasonText(r);
    if (r == DropReason::kQuality) {
      if (text.size() > t.size() && text.starts_with(t)) return Drop(r, text.substr(t.size()));
    } else if (text == t) {
      return Drop(r);
    }
  }
  TRAIL_FAIL("unknown drop reason '", text, "' in a document run (written by another version?)");
}

}  // namespace trail::corpus
