#include "infer/export.h"

#include "core/error.h"

namespace trail::infer {

ExportResult ExportModel(const ExportOptions& o) {
  TRAIL_CHECK(!o.out.empty(), "give the output: --out DIR (hf) or --out FILE.gguf (gguf)");
  const TrainedModel m(o.model);
  ExportResult r;
  r.arch = ChooseArchitecture(m.config(), o.format);
  r.step = m.step();
  r.written =
      o.format == ExportFormat::kHf
          ? ExportHf(m.config(), m.params(), m.contract(), m.tokenizer(), o.out)
          : ExportGguf(m.config(), m.params(), m.contract(), m.tokenizer(), o.out, o.gguf_type);
  return r;
}

}  // namespace trail::infer
