// The device registry and what every registered backend must provide (docs/devices.md, "Adding a
// backend"): the tests enumerate the registry, so a new backend is checked the moment its entry
// is added, on every device of its kind this machine has.
#include "repops/devices.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "repops/cpu_backend.h"
#include "repops/test_util.h"

namespace trail::repops {
namespace {

using testing::Bits;
using testing::Rand;

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Every device of the entry's kind on this machine (index 0 of an unnumbered kind).
std::vector<Device> DevicesOf(const BackendEntry& e) {
  std::vector<Device> out;
  if (e.make == nullptr) return out;
  const int n = e.count != nullptr ? e.count() : 1;
  for (int i = 0; i < n; ++i) out.push_back({e.kind, i});
  return out;
}

std::vector<float> Download(Backend& be, const Buffer& b) {
  std::vector<float> out(static_cast<size_t>(b.numel()));
  if (!out.empty()) be.CopyToHost(b.view(), out.data());
  return out;
}

void ExpectSameBits(const std::vector<float>& want, const std::vector<float>& got,
                    const std::string& what) {
  ASSERT_EQ(want.size(), got.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(Bits(want[i]), Bits(got[i])) << what << " element " << i;
  }
}

TEST(DeviceRegistry, EntriesAreWellFormed) {
  std::set<std::string> names;
  for (const BackendEntry& e : RegisteredBackends()) {
    const std::string name(e.kind.name);
    EXPECT_TRUE(std::regex_match(name, std::regex("[a-z][a-z0-9]*"))) << name;
    EXPECT_TRUE(names.insert(name).second) << "registered twice: " << name;
    EXPECT_FALSE(e.what.empty()) << name;
    EXPECT_EQ(e.count != nullptr, e.kind.numbered && e.make != nullptr)
        << name << ": a numbered kind counts its devices, an unnumbered one has one";
    EXPECT_EQ(e.make == nullptr, !e.missing.empty())
        << name << ": an entry without a backend says why";
  }
  EXPECT_EQ(RegisteredBackends().front().kind, kCpuDevice);
}

TEST(DeviceRegistry, NamesParseAndPrintForEveryKind) {
  for (const BackendEntry& e : RegisteredBackends()) {
    const std::string name(e.kind.name);
    if (e.kind.numbered) {
      EXPECT_EQ(ParseDevice(name), (Device{e.kind, Device::kLocalGpu}));
      EXPECT_EQ(ParseDevice(name + ":3"), (Device{e.kind, 3}));
      EXPECT_EQ(ParseDevice(name + ":3").ToString(), name + ":3");
      EXPECT_EQ(ParseDevice(name).ToString(), name);
      for (const char* bad : {":", ":-1", ":1x", ":99999999999", ": 1", ":+1"}) {
        EXPECT_NE(ErrorOf([&] { ParseDevice(name + bad); }).find("unknown device"),
                  std::string::npos)
            << name + bad;
      }
    } else {
      EXPECT_EQ(ParseDevice(name), (Device{e.kind, 0}));
      EXPECT_EQ(ParseDevice(name).ToString(), name);
      EXPECT_NE(ErrorOf([&] { ParseDevice(name + ":0"); }), "") << name;
    }
  }
  EXPECT_EQ(DeviceSpellings(), "cpu, cuda or cuda:N");
  for (const char* bad : {"", "gpu", "CPU", "cpu:", "guarded:0"}) {
    EXPECT_NE(ErrorOf([&] { ParseDevice(bad); }).find("use cpu, cuda or cuda:N"), std::string::npos)
        << bad;
  }
}

TEST(DeviceRegistry, AvailableDevicesAreTheBuiltEntriesForUsers) {
  std::vector<std::string> want;
  for (const BackendEntry& e : RegisteredBackends()) {
    if (!e.for_users) continue;
    for (const Device& d : DevicesOf(e)) want.push_back(d.ToString());
  }
  EXPECT_EQ(AvailableDevices(), want);
  EXPECT_EQ(AvailableDevices().front(), "cpu");
}

TEST(DeviceRegistry, AKindThisBuildLacksIsAnErrorThatSaysWhy) {
  for (const BackendEntry& e : RegisteredBackends()) {
    if (e.make != nullptr) continue;
    const Device d{e.kind, 0};
    const std::string what = ErrorOf([&] { MakeBackend(d); });
    EXPECT_NE(what.find("has no backend for " + d.ToString()), std::string::npos) << what;
    EXPECT_NE(what.find(std::string(e.missing)), std::string::npos) << what;
    EXPECT_NE(what.find("devices here: cpu"), std::string::npos) << what;
  }
}

// The contract of docs/devices.md "Adding a backend", on every device this machine has.
TEST(DeviceRegistry, EveryBuiltBackendKeepsTheContract) {
  int checked = 0;
  for (const BackendEntry& e : RegisteredBackends()) {
    for (const Device& d : DevicesOf(e)) {
      SCOPED_TRACE(d.ToString());
      const std::unique_ptr<Backend> be = MakeBackend(d, ReferenceKernels());
      CpuBackend cpu(ReferenceKernels(), HostAllocator());
      // Identity: its device, its memory's device, a description that starts with the name,
      // and the kernel table it was given.
      EXPECT_EQ(be->device(), d);
      EXPECT_EQ(be->allocator().device(), d);
      EXPECT_EQ(be->description().rfind(d.ToString(), 0), 0u) << be->description();
      EXPECT_EQ(&be->host_kernels(), &ReferenceKernels());
      if (be->allocator().is_host_memory()) {
        EXPECT_TRUE(be->allocator().host_addressable());
      }
      // Memory: zero-filled allocations; copies both ways keep every bit.
      const int64_t M = 5, K = 37, N = 11;
      const std::vector<float> a = Rand(M * K, 1), b = Rand(K * N, 2);
      Buffer zeros = AllocateOn<float>(*be, 1000);
      ExpectSameBits(std::vector<float>(1000, 0.0f), Download(*be, zeros), "a new buffer");
      const Buffer da = UploadTo(*be, a.data(), M * K), db = UploadTo(*be, b.data(), K * N);
      ExpectSameBits(a, Download(*be, da), "a round trip");
      // Ops: the CPU backend's bits (a sample; `trail selftest --device` runs every golden).
      Buffer dc = AllocateOn<float>(*be, M * N);
      be->MatMul(da.data<float>(), db.data<float>(), dc.data<float>(), M, K, N, false);
      std::vector<float> c(M * N);
      cpu.MatMul(a.data(), b.data(), c.data(), M, K, N, false);
      ExpectSameBits(c, Download(*be, dc), "MatMul");
      EXPECT_EQ(Bits(be->SumSq(da.data<float>(), M * K)), Bits(cpu.SumSq(a.data(), M * K)));
      ++checked;
    }
  }
  EXPECT_GE(checked, 2);  // cpu and guarded are in every build
}

// docs/devices.md's table of device names lists exactly the registered kinds.
TEST(DeviceRegistry, TheSpecListsEveryKind) {
  std::ifstream in(std::string(TRAIL_SOURCE_DIR) + "/docs/devices.md");
  ASSERT_TRUE(in) << "docs/devices.md";
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  const size_t begin = doc.find("## Device names"), end = doc.find("\n## ", begin + 1);
  ASSERT_NE(begin, std::string::npos);
  const std::string section = doc.substr(begin, end - begin);
  std::set<std::string> listed;
  const std::regex row(R"(\n\| `([a-z][a-z0-9]*)(:N)?` \|)");
  for (auto it = std::sregex_iterator(section.begin(), section.end(), row);
       it != std::sregex_iterator(); ++it) {
    listed.insert((*it)[1]);
  }
  std::set<std::string> registered;
  for (const BackendEntry& e : RegisteredBackends()) registered.emplace(e.kind.name);
  EXPECT_EQ(listed, registered);
}

}  // namespace
}  // namespace trail::repops
