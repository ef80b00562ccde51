#include <gtest/gtest.h>

#include <dirent.h>

#include <fstream>
#include <sstream>

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
