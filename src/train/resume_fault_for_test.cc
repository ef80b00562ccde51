#include "train/resume_fault_for_test.h"

namespace trail::train {
namespace {
ResumeFault g_fault = ResumeFault::kNone;
}  // namespace

ResumeFault ResumeFaultForTest() { return g_fault; }

ScopedResumeFaultForTest::ScopedResumeFaultForTest(ResumeFault fault) : saved_(g_fault) {
  g_fault = fault;
}

ScopedResumeFaultForTest::~ScopedResumeFaultForTest() { g_fault = saved_; }

}  // namespace trail::train
