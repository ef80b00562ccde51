// PII redaction: e-mail addresses, phone numbers (only with a nearby cue such as "phone", "tel",
// "call", "fax", or a leading '+'), public IPv4 addresses (private, loopback, link-local,
// multicast and reserved ranges are kept), and common secrets (AWS access keys, GitHub and
// Slack tokens, private-key blocks, "api_key = …"-style assignments). Each is replaced by a
// typed placeholder; counts are kept per type (never the values).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace trail::corpus {

struct PiiCounts {
  uint64_t email = 0, phone = 0, ip = 0, secret = 0;
  uint64_t total() const { return email + phone + ip + secret; }
};

struct PiiResult {
  std::string text;
  PiiCounts counts;
};

// Placeholders: <EMAIL>, <PHONE>, <IP_ADDRESS>, <SECRET>. Text that is not valid UTF-8 is a
// trail::Error.
PiiResult RedactPii(std::string_view utf8);
// The same result with every pattern tried at every byte: RedactPii runs the e-mail, IP and
// phone patterns only near bytes that every match of them contains ('@', digit-dot-digit,
// digit groups), and is tested against this.
PiiResult RedactPiiExhaustive(std::string_view utf8);

}  // namespace trail::corpus
