#include <gtest/gtest.h>

#include <dirent.h>

#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "corpus/filters/pii.h"

namespace trail::corpus {
namespace {

TEST(Pii, EachTypeIsReplacedAndCounted) {
  const PiiResult r = RedactPii(
      "Mail jane.doe+news@example.co.uk or call: +1 415-555-0123. Phone (020) 7946 0958.\n"
      "Server 8.8.8.8 and 192.168.1.10, router 10.0.0.1, version 1.2.3.4.5.\n"
      "aws AKIAIOSFODNN7EXAMPLE and api_key = 'sk_live_abcdefghijklmnop1234'\n"
      "Footnote 12 345 678 and year ranges 1999-2004 stay.");
  EXPECT_EQ(r.counts.email, 1u);
  EXPECT_EQ(r.counts.phone, 2u);
  EXPECT_EQ(r.counts.ip, 1u);  // 8.8.8.8 only: private ranges and 5-part versions stay
  EXPECT_EQ(r.counts.secret, 2u);
  EXPECT_NE(r.text.find("Mail <EMAIL> or call: <PHONE>."), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("Phone <PHONE>."), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("Server <IP_ADDRESS> and 192.168.1.10, router 10.0.0.1"),
            std::string::npos);
  EXPECT_NE(r.text.find("1.2.3.4.5"), std::string::npos);
  EXPECT_NE(r.text.find("aws <SECRET> and <SECRET>"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("Footnote 12 345 678 and year ranges 1999-2004 stay."), std::string::npos);
  EXPECT_EQ(
      RedactPii("-----BEGIN RSA PRIVATE KEY-----\nMIIE\nabc\n-----END RSA PRIVATE KEY-----").text,
      "<SECRET>");
}

// The patterns run with UTF-8 checks off, which is undefined on invalid UTF-8 (Latin-1 text
// crashed the matcher): such text is refused before any matching.
TEST(Pii, InvalidUtf8IsAClearError) {
  for (const char* bad : {"Al bona \xe6"
                          "asisto iras mem la besto",
                          "\xff", "mail a@b.org \xc3"}) {
    try {
      RedactPii(bad);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("valid UTF-8"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(RedactPii("caf\xc3\xa9 a@b.org").text, "caf\xc3\xa9 <EMAIL>");
}

// The prefilters (patterns run only near '@', digit-dot-digit and digit groups) change no
// result: random texts built from the pieces the patterns care about, with non-ASCII digits
// (Arabic-Indic, fullwidth, Devanagari) and separators (no-break and ideographic spaces), cue
// words in mixed case, multi-byte filler between cue and number near the phone lookback, and
// long runs with no anchor at all, redact exactly as with every pattern tried at every byte.
TEST(Pii, PrefiltersChangeNoResult) {
  // clang-format off
  const std::vector<std::string> pieces = {
      "0", "1", "2", "3", "4", "5", "9", "12", "415", "555", "0123", "8.8", "203.0.113.", ".",
      "-", " ", "  ", "\n", "\t", "(", ")", "+", "+1 ", "@", "a", "x", "Z", "jane.doe", "example",
      ".org", ".co.uk", "phone", "Tel:", "FAX ", "call ", "Mobile", "cell", "tel", "\xc2\xa0",
      "\xe3\x80\x80", "\xd9\xa3", "\xd9\xa7\xd9\xa8", "\xef\xbc\x95", "\xe0\xa5\xa8",
      "\xc3\xa9", "\xe6\x97\xa5", "\xf0\x9f\x98\x80", "\xe2\x80\x94", ":", "=", "api_key",
      "password = ", "AKIA", "IOSFODNN7EXAMPLE", "the quick brown fox "};
  // clang-format on
  uint64_t state = 0x9e3779b97f4a7c15ull;
  auto next = [&](uint64_t n) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    return state % n;
  };
  PiiCounts seen;
  for (int t = 0; t < 3000; ++t) {
    std::string text;
    const uint64_t n = 1 + next(60);
    // Digits and separators of any kind PCRE2's \\d and \\s take, and numbers built like the
    // patterns' (with random breaks), so matches are frequent.
    const char* digits[] = {"0", "4", "7", "\xd9\xa3", "\xef\xbc\x95", "\xe0\xa5\xa8"};
    const char* cues[] = {"phone", "Tel:", "FAX ", "call ", "Mobile", "cell", "telephone"};
    const char* seps[] = {" ", "-", ".", "\xc2\xa0", "\xe3\x80\x80", "\n", "/"};
    auto number = [&](uint64_t lo, uint64_t hi) {
      std::string d;
      for (uint64_t k = lo + next(hi - lo + 1); k > 0; --k) d += next(3) ? "5" : digits[next(6)];
      return d;
    };
    auto sep = [&] { return std::string(seps[next(7)]); };
    for (uint64_t i = 0; i < n; ++i) {
      switch (next(8)) {
        case 0: {  // a phone number, with or without cue, country code and brackets
          if (next(2)) {
            text += cues[next(7)];
            // Up to 13 characters (12 belong to a match), often of 3 and 4 bytes. Four-byte
            // ones between ASCII letters hold no digit-group anchor (runs of under 6 bytes that
            // may be digits), so the cue ends up far before the first anchor.
            const char* fill[] = {"x", "\xe6\x97\xa5", "\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80x"};
            const bool far = next(2);
            for (uint64_t k = far ? 6 + next(2) : next(14); k > 0; --k)
              text += fill[far ? 3 : next(3)];
          }
          if (next(2)) text += "+" + number(1, 3) + (next(2) ? sep() : "");
          text += (next(3) ? "" : "(") + number(1, 5) + (next(3) ? "" : ")") + sep();
          text += next(2) ? number(2, 5) + sep() + number(2, 5) : number(4, 9);
          break;
        }
        case 1:  // an IPv4-like run of 3 to 5 numbers
          text += number(1, 4);
          for (uint64_t k = 2 + next(3); k > 0; --k) text += "." + number(1, 4);
          break;
        case 2: {  // an e-mail address, its local part up to 300 characters long
          for (uint64_t k = 1 + (next(4) ? next(10) : next(300)); k > 0; --k)
            text += "ab.9_%+-"[next(8)];
          text += "@example" + std::string(next(2) ? ".org" : ".c");
          break;
        }
        default:
          break;
      }
      if (next(40) == 0) {  // a stretch without anchors, or multi-byte filler after a cue
        const std::string fill = next(2) ? "lorem ipsum dolor " : "\xe6\x97\xa5\xc3\xa9";
        for (uint64_t k = next(30); k > 0; --k) text += fill;
      }
      text += pieces[next(pieces.size())];
    }
    const PiiResult fast = RedactPii(text), reference = RedactPiiExhaustive(text);
    ASSERT_EQ(fast.text, reference.text) << "text: " << text;
    ASSERT_EQ(fast.counts.email, reference.counts.email) << text;
    ASSERT_EQ(fast.counts.phone, reference.counts.phone) << text;
    ASSERT_EQ(fast.counts.ip, reference.counts.ip) << text;
    ASSERT_EQ(fast.counts.secret, reference.counts.secret) << text;
    seen.email += fast.counts.email, seen.phone += fast.counts.phone, seen.ip += fast.counts.ip;
  }
  // The texts hold matches of every prefiltered kind, not only misses.
  EXPECT_GT(seen.email, 100u);
  EXPECT_GT(seen.phone, 100u);
  EXPECT_GT(seen.ip, 20u);
}

// Expected outputs written by hand from the rules in pii.h (not by running the redactor): lines
// in the style of real text — Debian copyright headers, configuration files, mail signatures —
// and near-misses that look like PII but must stay.
TEST(Pii, RealStyleLinesMatchHandWrittenExpectations) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      // Addresses in Debian copyright files.
      {"Maintainer: Matthias Klose <doko@debian.org>", "Maintainer: Matthias Klose <<EMAIL>>"},
      {"Copyright: 2004-2021 Jane Roe <jane_roe-99@mail.example.org>, John Doe <jd@ex.io>",
       "Copyright: 2004-2021 Jane Roe <<EMAIL>>, John Doe <<EMAIL>>"},
      {"Upstream-Contact: bug-bash@gnu.org", "Upstream-Contact: <EMAIL>"},
      // Phones with a cue or a leading '+'.
      {"Tel: +49 30 1234567, Fax: +49 30 1234568", "Tel: <PHONE>, Fax: <PHONE>"},
      {"Please call (212) 555-0199 after 5pm.", "Please call <PHONE> after 5pm."},
      // Public IPv4 addresses go; private, loopback, link-local, multicast, reserved stay.
      {"nameserver 1.1.1.1", "nameserver <IP_ADDRESS>"},
      {"peer 172.32.0.1 (public) and 172.31.255.254 (private)",
       "peer <IP_ADDRESS> (public) and 172.31.255.254 (private)"},
      {"bind 127.0.0.1; gw 169.254.10.1; mcast 224.0.0.251; mask 255.255.255.0",
       "bind 127.0.0.1; gw 169.254.10.1; mcast 224.0.0.251; mask 255.255.255.0"},
      // Secrets.
      {"token: ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", "token: <SECRET>"},
      {"AWS_ACCESS_KEY_ID=AKIAJ3EXAMPLEKEY7ZQA", "AWS_ACCESS_KEY_ID=<SECRET>"},
      // Near-misses: versions, dates, ISBNs, counts, URLs, handles, addresses without a domain.
      {"Version 10.2.1.4.7 released 2023-01-15; ISBN 978-3-16-148410-0.",
       "Version 10.2.1.4.7 released 2023-01-15; ISBN 978-3-16-148410-0."},
      {"See https://www.gnu.org/licenses/gpl-3.0.html or ask @maintainer on IRC.",
       "See https://www.gnu.org/licenses/gpl-3.0.html or ask @maintainer on IRC."},
      {"Chapter 3, verses 16-18: 1,234,567 copies; room 101.",
       "Chapter 3, verses 16-18: 1,234,567 copies; room 101."},
      {"user@localhost and 999.1.2.3 and 1.2.3 stay",
       "user@localhost and 999.1.2.3 and 1.2.3 stay"},
  };
  for (const auto& [in, want] : cases) EXPECT_EQ(RedactPii(in).text, want) << in;
}

TEST(Pii, DebianCopyrightFilesLoseEveryAddress) {
  // Real text with many addresses: the copyright files of the installed packages.
  DIR* d = opendir("/usr/share/doc");
  ASSERT_NE(d, nullptr);
  uint64_t files = 0, emails = 0;
  while (dirent* e = readdir(d)) {
    std::ifstream in(std::string("/usr/share/doc/") + e->d_name + "/copyright");
    if (!in.good()) continue;
    std::stringstream ss;
    ss << in.rdbuf();
    const PiiResult r = RedactPii(ss.str());
    ++files;
    emails += r.counts.email;
    // A second pass finds nothing left to redact.
    ASSERT_EQ(RedactPii(r.text).counts.email, 0u) << e->d_name;
    if (files >= 400) break;
  }
  closedir(d);
  std::printf("copyright files: %llu, e-mail addresses redacted: %llu\n", (unsigned long long)files,
              (unsigned long long)emails);
  EXPECT_GT(files, 50u);
  EXPECT_GT(emails, files);  // most list several maintainers' addresses
}

}  // namespace
}  // namespace trail::corpus
