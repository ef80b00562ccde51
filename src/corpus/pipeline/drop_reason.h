// Why a document is not in a corpus build's output: one of a fixed set of reasons, with the
// failed rule for the quality filter. Its text ("language.low_score", "quality.<rule>",
// "exact_dup", ...) is what the lineage's documents.drop_reason, the build report and the
// document runs record; DropReasonText is the one place that spells it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace trail::corpus {

enum class DropReason : uint8_t {
  kNone,                 // kept
  kEmptyAfterNormalize,  // "normalize.empty": nothing but white space is left
  kLanguageNotAllowed,   // "language.not_allowed": not one of allowed_languages
  kLanguageLowScore,     // "language.low_score": below min_language_score
  kQuality,              // "quality.<rule>": the first quality rule it fails
  kContaminated,         // "contaminated": overlaps a benchmark (decontamination drops it)
  kQuota,                // "quota": its source's quota is full
  kExactDup,             // "exact_dup": the same normalized text as an earlier document
  kNearDup,              // "near_dup": in a near-duplicate cluster whose survivor is another
};

// A document's verdict: kept (the default), or dropped with a reason.
class Drop {
 public:
  Drop() = default;
  // `rule` names the failed quality rule (kQuality only).
  explicit Drop(DropReason reason, std::string_view rule = "");
  // The inverse of text(); an error naming the text when it is no known reason.
  static Drop Parse(std::string_view text);

  DropReason reason() const { return reason_; }
  bool dropped() const { return reason_ != DropReason::kNone; }
  const std::string& rule() const { return rule_; }
  const std::string& text() const { return text_; }  // "" when kept

 private:
  DropReason reason_ = DropReason::kNone;
  std::string rule_, text_;
};

// The text of a reason ("quality." for kQuality, completed by the rule's name).
std::string_view DropReasonText(DropReason r);

}  // namespace trail::corpus
