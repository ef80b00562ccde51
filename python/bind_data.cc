// The canonical stream and the tokenizer from Python: windows as the trainer packs them, their
// lineage, steps' window ranges and rank shares, and exact encoding (docs/python.md, "Data").
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "audit/data_proof.h"
#include "bindings.h"
#include "core/hash.h"
#include "data/batch_schedule.h"
#include "data/batcher.h"
#include "data/inspect.h"
#include "data/manifest.h"
#include "data/find.h"
#include "data/packing.h"
#include "data/stream.h"
#include "tokenizer/contract.h"
#include "tokenizer/loaders.h"
#include "tokenizer/tokenizer.h"

namespace trail::python {
namespace {

namespace py = pybind11;

template <class T>
py::array_t<T> Array(const std::vector<T>& v, int64_t rows, int64_t cols) {
  py::array_t<T> a(rows < 0 ? std::vector<int64_t>{cols} : std::vector<int64_t>{rows, cols});
  std::copy(v.begin(), v.begin() + static_cast<ptrdiff_t>(a.size()), a.mutable_data());
  return a;
}

// Packed rows as the trainer feeds them: each [rows, L] (or [L] for one window, rows < 0).
py::dict PackedArrays(const data::PackedBatch& b, int64_t rows) {
  py::dict d;
  const int64_t L = b.seq_len;
  d["inputs"] = Array(b.inputs, rows, L);
  d["labels"] = Array(b.labels, rows, L);
  d["positions"] = Array(b.positions, rows, L);
  d["doc_ids"] = Array(b.doc_ids, rows, L);
  d["key_valid"] = Array(b.key_valid, rows, L);
  d["loss_mask"] = Array(b.loss_mask, rows, L);
  return d;
}

// One CanonicalStream with its batch schedule. Not thread-safe (the stream caches orders), so
// every method keeps the GIL; only opening (rehashing shards) releases it.
class Stream {
 public:
  Stream(const std::string& manifest_path, std::optional<uint64_t> seed, bool verify)
      : manifest_path_(manifest_path) {
    py::gil_scoped_release nogil;
    data::Manifest m = data::LoadManifest(manifest_path);
    if (seed) m.stream.seed = *seed;
    stream_ = std::make_unique<data::CanonicalStream>(std::move(m), data::StreamOptions{verify});
    batcher_ = std::make_unique<data::Batcher>(*stream_);
  }

  uint64_t num_windows() const { return stream_->num_windows(); }
  uint64_t seed() const { return stream_->manifest().stream.seed; }
  int64_t micro_batch_windows() const { return stream_->manifest().stream.micro_batch_windows; }
  std::string manifest_json() const { return data::ManifestToJson(stream_->manifest()); }

  py::dict Window(uint64_t w) {
    stream_->Window(w, raw_);
    const int64_t L = static_cast<int64_t>(raw_.tokens.size()) - 1;
    data::PackedBatch b;
    b.Resize(1, L);
    data::PackRow(raw_, stream_->manifest().stream.semantics, b, 0);
    py::dict d = PackedArrays(b, -1);
    d["window"] = w;
    d["step"] = batcher_->schedule().StepOfWindow(w);
    d["real_tokens"] = raw_.length;
    d["tokens"] = Array(raw_.tokens, -1, L + 1);
    d["target_ok"] = Array(raw_.target_ok, -1, L + 1);
    return d;
  }

  // `trail data inspect --window W --json` (no decoding): the window and its documents.
  std::string Inspect(uint64_t w) {
    return data::ToJson(data::InspectWindow(*stream_, w, {})).dump();
  }
  std::string InspectStep(int64_t step, int64_t ranks, int64_t rank) {
    return data::ToJson(data::InspectStep(*stream_, step, ranks, rank)).dump();
  }

  std::pair<uint64_t, uint64_t> StepWindows(int64_t step) const {
    const data::WindowRange r = batcher_->schedule().StepWindows(step);
    return {r.begin, r.end};
  }
  int64_t StepOfWindow(uint64_t w) const { return batcher_->schedule().StepOfWindow(w); }
  std::vector<uint64_t> RankWindows(int64_t step, int64_t rank, int64_t ranks) const {
    CheckRank(rank, ranks);
    return data::RankWindows(batcher_->schedule().StepWindows(step), rank, ranks);
  }
  // B_target of the whole step (every rank): the loss normalizer of trail's trainer.
  int64_t StepTargets(int64_t step) { return batcher_->CountStep(step).target_tokens; }

  // The windows logical rank `rank` of `ranks` owns in step `step`, packed, [n, L] each.
  py::dict RankBatch(int64_t step, int64_t rank, int64_t ranks) {
    const std::vector<uint64_t> ws = RankWindows(step, rank, ranks);
    const int64_t L = stream_->SeqLenAtStep(step);
    data::PackedBatch b;
    b.Resize(static_cast<int64_t>(ws.size()), L);
    for (size_t i = 0; i < ws.size(); ++i) {
      stream_->Window(ws[i], raw_);
      data::PackRow(raw_, stream_->manifest().stream.semantics, b, static_cast<int64_t>(i));
    }
    py::dict d = PackedArrays(b, static_cast<int64_t>(ws.size()));
    d["windows"] = ws;
    d["step"] = step;
    return d;
  }

 private:
  static void CheckRank(int64_t rank, int64_t ranks) {
    if (ranks < 1 || rank < 0 || rank >= ranks) {
      throw py::value_error("rank must be in [0, world_size) and world_size at least 1");
    }
  }

  std::string manifest_path_;
  std::unique_ptr<data::CanonicalStream> stream_;
  std::unique_ptr<data::Batcher> batcher_;
  data::RawWindow raw_;

 public:
  // docs/data.md §9: the find index, a token search with readings, a key, a document's readings.
  std::string BuildIndex(const std::string& path, uint32_t gram, uint32_t window) {
    const data::FindIndexSummary s =
        data::BuildFindIndex(*stream_, Sha256OfFile(manifest_path_), path, {gram, window});
    return nlohmann::ordered_json{{"documents", s.documents},
                                  {"tokens", s.tokens},
                                  {"grams", s.grams},
                                  {"bytes", s.bytes},
                                  {"seconds", s.seconds}}
        .dump();
  }
  std::string Find(const std::vector<uint32_t>& tokens, const std::string& index_path,
                   uint64_t min_tokens, int64_t steps) {
    const data::FindIndex index(index_path, Sha256OfFile(manifest_path_));
    const data::FindOptions o{.min_tokens = min_tokens, .steps = steps};
    return data::FindResultToJson(*stream_, data::FindTokens(*stream_, index, tokens, o)).dump();
  }
  std::string FindKey(const std::string& key, int64_t steps) {
    return data::SharedRunToJson(data::FindKey(*stream_, key, steps)).dump();
  }
  std::string Readings(uint32_t source, uint32_t shard, uint64_t doc, uint64_t begin, uint64_t end,
                       int64_t steps) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const data::Reading& x :
         data::ReadDocument(*stream_, {source, shard, doc}, {begin, end}, steps)) {
      out.push_back(data::ReadingToJson(x));
    }
    return out.dump();
  }
};

// A proof about the training data against a publication: the check's JSON (docs/audit.md).
std::string VerifyDataProof(const std::string& text, const std::string& location,
                            const std::string& cache, const std::vector<std::string>& trusted,
                            const std::string& trainer) {
  audit::RemoteOptions o;
  o.location = location, o.cache_dir = cache, o.quiet = true;
  for (const std::string& k : trusted) o.trusted_publishers.push_back(audit::KeyFingerprint(k));
  if (!trainer.empty()) o.trainer_key = audit::KeyFingerprint(trainer);
  const std::string where = "proof";
  const audit::ProofCheck c =
      audit::DataProofKind(text, where) == "absence"
          ? audit::VerifyAbsenceProof(audit::ParseAbsenceProof(text, where), o)
          : audit::VerifyMembershipProof(audit::ParseMembershipProof(text, where), o);
  return audit::ProofCheckToJson(c).dump();
}

tok::EncodeOptions EncodeOptionsOf(const py::object& allowed_special) {
  tok::EncodeOptions o;
  if (allowed_special.is_none()) return o;
  if (py::isinstance<py::str>(allowed_special)) {
    if (allowed_special.cast<std::string>() != "all") {
      throw py::value_error("allowed_special must be 'all', a set of strings or None");
    }
    o.allow_all_special = true;
    return o;
  }
  for (const py::handle s : allowed_special) o.allowed_special.insert(s.cast<std::string>());
  return o;
}

void BindTokenizer(py::module_& m) {
  py::class_<tok::Tokenizer>(m, "Tokenizer",
                             "A byte-level BPE tokenizer with the ids of `trail tokenizer encode`.")
      .def(py::init([](const std::string& path) {
             py::gil_scoped_release nogil;
             return tok::LoadTokenizer(path);
           }),
           py::arg("path"),
           "Loads a *.tiktoken rank file (named after its encoding), GPT-2's encoder.json and "
           "vocab.bpe (their folder), or a tokenizer.json.")
      .def_static(
          "from_contract",
          [](const std::string& path) {
            py::gil_scoped_release nogil;
            return tok::LoadContract(path).tokenizer;
          },
          py::arg("path"),
          "The tokenizer of a trail tokenizer contract (its files checked against the "
          "contract's hashes).")
      .def_property_readonly("name", &tok::Tokenizer::name)
      .def_property_readonly("vocab_size", &tok::Tokenizer::vocab_size)
      .def_property_readonly("pattern", &tok::Tokenizer::pattern)
      .def_property_readonly("special_tokens",
                             [](const tok::Tokenizer& t) {
                               py::dict d;
                               for (const auto& s : t.specials()) d[py::str(s.text)] = s.id;
                               return d;
                             })
      .def(
          "encode",
          [](const tok::Tokenizer& t, const std::string& text, const py::object& allowed) {
            const tok::EncodeOptions o = EncodeOptionsOf(allowed);
            py::gil_scoped_release nogil;
            return t.Encode(text, o);
          },
          py::arg("text"), py::arg("allowed_special") = py::none(),
          "Token ids of text. allowed_special: None (special tokens are plain text), 'all', or "
          "a set of the special tokens to recognize.")
      .def(
          "encode_batch",
          [](const tok::Tokenizer& t, const std::vector<std::string>& texts, int threads,
             const py::object& allowed) {
            const tok::EncodeOptions o = EncodeOptionsOf(allowed);
            py::gil_scoped_release nogil;
            return t.EncodeBatch(texts, threads, o);
          },
          py::arg("texts"), py::arg("threads") = 1, py::arg("allowed_special") = py::none(),
          "encode() of each text, on `threads` threads (the same ids as one by one).")
      .def(
          "decode",
          [](const tok::Tokenizer& t, const std::vector<uint32_t>& ids) {
            return py::bytes(t.Decode(ids));
          },
          py::arg("ids"), "The bytes of the ids (TrailError for an id outside the vocabulary).");
}

}  // namespace

void BindData(py::module_& m) {
  py::class_<Stream>(m, "Stream")
      .def(py::init<const std::string&, std::optional<uint64_t>, bool>(), py::arg("manifest"),
           py::arg("seed") = py::none(), py::arg("verify") = true)
      .def_property_readonly("num_windows", &Stream::num_windows)
      .def_property_readonly("seed", &Stream::seed)
      .def_property_readonly("micro_batch_windows", &Stream::micro_batch_windows)
      .def("manifest_json", &Stream::manifest_json)
      .def("window", &Stream::Window, py::arg("w"))
      .def("inspect", &Stream::Inspect, py::arg("w"))
      .def("inspect_step", &Stream::InspectStep, py::arg("step"), py::arg("ranks"), py::arg("rank"))
      .def("step_windows", &Stream::StepWindows, py::arg("step"))
      .def("step_of_window", &Stream::StepOfWindow, py::arg("w"))
      .def("rank_windows", &Stream::RankWindows, py::arg("step"), py::arg("rank"), py::arg("ranks"))
      .def("step_targets", &Stream::StepTargets, py::arg("step"))
      .def("rank_batch", &Stream::RankBatch, py::arg("step"), py::arg("rank"), py::arg("ranks"))
      .def("build_index", &Stream::BuildIndex, py::arg("path"), py::arg("gram"), py::arg("window"))
      .def("find", &Stream::Find, py::arg("tokens"), py::arg("index"), py::arg("min_tokens"),
           py::arg("steps"))
      .def("find_key", &Stream::FindKey, py::arg("key"), py::arg("steps"))
      .def("readings", &Stream::Readings, py::arg("source"), py::arg("shard"), py::arg("doc"),
           py::arg("begin"), py::arg("end"), py::arg("steps"));
  m.def("verify_data_proof", &VerifyDataProof, py::arg("text"), py::arg("location"),
        py::arg("cache"), py::arg("trusted"), py::arg("trainer"));
  BindTokenizer(m);
}

}  // namespace trail::python
