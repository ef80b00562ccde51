// Rotary position embedding, half-split pairing (element i pairs with i + hd/2, as in GPT-NeoX
// and Llama), from a table of our own Sin/Cos.
#pragma once

#include <cstdint>
#include <vector>

namespace trail::repops {

// The table's values wherever they live (a backend keeps its own copy on its device).
struct RopeTableView {
  int64_t max_pos = 0, half = 0;
  const float* cos = nullptr;  // [max_pos, half]
  const float* sin = nullptr;  // [max_pos, half]
};

struct RopeTable {
  int64_t max_pos = 0, half = 0;
  std::vector<float> cos, sin;  // [max_pos, half]
  RopeTableView view() const { return {max_pos, half, cos.data(), sin.data()}; }
};

// Llama 3's frequency scaling (Hugging Face rope_type "llama3"): frequencies whose wavelength
// exceeds original_max_pos / low_freq_factor are divided by `factor`, those shorter than
// original_max_pos / high_freq_factor kept, the ones between blended (RopeInvFreq says how).
// factor 0 = no scaling.
struct RopeScaling {
  float factor = 0.0f, low_freq_factor = 1.0f, high_freq_factor = 4.0f;
  int64_t original_max_pos = 8192;
  bool enabled() const { return factor > 0.0f; }
  // Throws trail::Error naming the field unless factor >= 1, 0 < low < high and
  // original_max_pos > 0 (nothing to check when disabled).
  void Validate() const;
};

// The inverse frequencies, binary32, i < hd/2: inv_i = Exp(-((float(2i) / float(hd)) *
// Log(theta))); with scaling, L = float(original_max_pos), lo = L / low_freq_factor,
// hi = L / high_freq_factor and the wavelength w = 6.2831855f / inv_i (2π rounded to binary32):
//   w < hi: inv_i;   w > lo: inv_i / factor;
//   else, s = (L / w - low_freq_factor) / (high_freq_factor - low_freq_factor) and
//         inv_i = (((1 - s) * inv_i) / factor) + (s * inv_i),
// every operation rounded once (no FMA).
std::vector<float> RopeInvFreq(int64_t hd, float theta, const RopeScaling& scaling = {});
// angle = float(pos) * inv_i; cos, sin = Cos(angle), Sin(angle) (repops/math.h).
RopeTable MakeRopeTable(int64_t max_pos, int64_t hd, float theta, const RopeScaling& scaling = {});

// In place on rows of length hd; row r has position pos[r].
// Forward:  y[i] = x[i]*c - x[i+h]*s,  y[i+h] = x[i]*s + x[i+h]*c.
// Backward (the transpose rotation, applied to gradients):
//           y[i] = x[i]*c + x[i+h]*s,  y[i+h] = x[i+h]*c - x[i]*s.
void RopeApply(float* x, int64_t rows, int64_t hd, const int32_t* pos, const RopeTableView& t,
               bool backward);
inline void RopeApply(float* x, int64_t rows, int64_t hd, const int32_t* pos, const RopeTable& t,
                      bool backward) {
  RopeApply(x, rows, hd, pos, t.view(), backward);
}

}  // namespace trail::repops
