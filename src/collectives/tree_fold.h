// TreeFold (Open-1B appendix A.1): the replica all-reduce order of a recursive-doubling
// cluster, computed as partials arrive with at most floor(log2 R) + 1 resident blocks.
//
// Push(partial r) for r = 0, 1, ..., R-1: the new block (size 1) is merged with the top of the
// stack while both have the same size, the stack's (lower-replica) block on the left:
// top = top ⊕ new. Finish(): the blocks left (one per set bit of R, largest = lowest replicas at
// the bottom) are combined in ascending level order, lower-replica block on the left:
// R = 7 gives ((0⊕1)⊕(2⊕3)) ⊕ ((4⊕5) ⊕ 6).
#pragma once

#include <cstdint>
#include <algorithm>
#include <functional>
#include <utility>
#include <vector>

#include "core/error.h"

namespace trail::collectives {

template <class T>
class TreeFold {
 public:
  // combine(left, right) must leave left ⊕ right in `left`.
  explicit TreeFold(std::function<void(T& left, const T& right)> combine)
      : combine_(std::move(combine)) {}

  // Merged-away blocks are handed to `recycle` (if set) so their storage can be reused.
  void Push(T partial, const std::function<void(T&&)>& recycle = nullptr) {
    max_resident_ = std::max(max_resident_, stack_.size() + 1);  // the stack and the new one
    int64_t size = 1;
    while (!stack_.empty() && stack_.back().second == size) {
      combine_(stack_.back().first, partial);
      if (recycle) recycle(std::move(partial));
      partial = std::move(stack_.back().first);
      stack_.pop_back();
      size *= 2;
    }
    stack_.emplace_back(std::move(partial), size);
    ++pushed_;
  }

  T Finish(const std::function<void(T&&)>& recycle = nullptr) {
    TRAIL_CHECK(!stack_.empty(), "TreeFold::Finish with no partials");
    while (stack_.size() > 1) {
      T right = std::move(stack_.back().first);
      stack_.pop_back();
      combine_(stack_.back().first, right);
      if (recycle) recycle(std::move(right));
    }
    T out = std::move(stack_.back().first);
    stack_.clear();
    pushed_ = 0;
    return out;
  }

  size_t max_resident() const { return max_resident_; }  // most blocks held at once

 private:
  std::function<void(T&, const T&)> combine_;
  std::vector<std::pair<T, int64_t>> stack_;  // (block, number of replicas in it)
  size_t max_resident_ = 0;
  int64_t pushed_ = 0;
};

}  // namespace trail::collectives
