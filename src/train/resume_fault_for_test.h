// A test-only seam: breaks resumes on purpose, so tests can show that a resume which lost part
// of its state is caught at its first re-executed step. Nothing outside tests sets it; the
// trainer only reads it (trainer.cc), and by default it does nothing.
#pragma once

namespace trail::train {

enum class ResumeFault { kNone, kDropCursor, kDropTokens };

// The fault every resume in this process applies after loading its checkpoint.
ResumeFault ResumeFaultForTest();

// Sets the fault for its scope (not thread-safe: tests set it around one training call).
class ScopedResumeFaultForTest {
 public:
  explicit ScopedResumeFaultForTest(ResumeFault fault);
  ~ScopedResumeFaultForTest();
  ScopedResumeFaultForTest(const ScopedResumeFaultForTest&) = delete;
  ScopedResumeFaultForTest& operator=(const ScopedResumeFaultForTest&) = delete;

 private:
  ResumeFault saved_;
};

}  // namespace trail::train
