#include <gtest/gtest.h>

#include <dirent.h>

#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "corpus/pii.h"

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
  EXPECT_NE(r.text.find("Server <IP_ADDRESS> and 192.168.1.10, router 10.0.0.1"), std::string::npos);
  EXPECT_NE(r.text.find("1.2.3.4.5"), std::string::npos);
  EXPECT_NE(r.text.find("aws <SECRET> and <SECRET>"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("Footnote 12 345 678 and year ranges 1999-2004 stay."), std::string::npos);
  EXPECT_EQ(RedactPii("-----BEGIN RSA PRIVATE KEY-----\nMIIE\nabc\n-----END RSA PRIVATE KEY-----")
                .text,
            "<SECRET>");
}

// The patterns run with UTF-8 checks off, which is undefined on invalid UTF-8 (Latin-1 text
// crashed the matcher): such text is refused before any matching.
TEST(Pii, InvalidUtf8IsAClearError) {
  for (const char* bad : {"Al bona \xe6" "asisto iras mem la besto", "\xff", "mail a@b.org \xc3"}) {
    try {
      RedactPii(bad);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("valid UTF-8"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(RedactPii("caf\xc3\xa9 a@b.org").text, "caf\xc3\xa9 <EMAIL>");
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
      {"user@localhost and 999.1.2.3 and 1.2.3 stay", "user@localhost and 999.1.2.3 and 1.2.3 stay"},
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
  std::printf("copyright files: %llu, e-mail addresses redacted: %llu\n",
              (unsigned long long)files, (unsigned long long)emails);
  EXPECT_GT(files, 50u);
  EXPECT_GT(emails, files);  // most list several maintainers' addresses
}

}  // namespace
}  // namespace trail::corpus
