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

// inv_freq[i] = Exp(-((float(2i) / float(hd)) * Log(theta))); angle = float(pos) * inv_freq[i].
RopeTable MakeRopeTable(int64_t max_pos, int64_t hd, float theta);

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
