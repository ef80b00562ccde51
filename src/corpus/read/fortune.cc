#include "corpus/read/fortune.h"

namespace trail::corpus {

std::vector<FortuneRecord> FortuneRecords(std::string_view all) {
  std::vector<FortuneRecord> out;
  uint64_t n = 0;
  for (size_t start = 0; start < all.size(); ++n) {
    size_t end = all.find("\n%\n", start);
    if (end == std::string_view::npos) end = all.size();
    const std::string_view rec = all.substr(start, end - start);
    if (!rec.empty() && rec != "%") out.push_back({n, start, rec});
    start = end + 3;
  }
  return out;
}

}  // namespace trail::corpus
