#include "repops/backend.h"

namespace trail::repops {

DeviceRopeTable RopeTableOn(Backend& b, const RopeTable& t) {
  DeviceRopeTable out{UploadTo(b, t.cos.data(), static_cast<int64_t>(t.cos.size())),
                      UploadTo(b, t.sin.data(), static_cast<int64_t>(t.sin.size())),
                      {}};
  out.view = {t.max_pos, t.half, out.cos.data<float>(), out.sin.data<float>()};
  return out;
}

}  // namespace trail::repops
