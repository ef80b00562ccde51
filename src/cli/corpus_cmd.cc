#include "cli/corpus_cmd.h"

#include <CLI/CLI.hpp>

#include <cstdio>

#include "corpus/config.h"
#include "corpus/pipeline.h"

namespace trail::cli {

void AddCorpusCommand(CLI::App& app, CorpusCommand& cmd) {
  cmd.corpus = app.add_subcommand("corpus", "The corpus factory: raw documents to clean shards with lineage");
  cmd.corpus->require_subcommand(1);
  cmd.build = cmd.corpus->add_subcommand(
      "build", "Normalize, filter, deduplicate, split and shard; writes lineage.sqlite and report.json");
  cmd.build->add_option("--config", cmd.config, "corpus.toml")->required();
  cmd.build->add_option("--out", cmd.out, "Output directory")->required();
  cmd.build->add_option("--threads", cmd.threads, "Worker threads")->check(CLI::Range(1, 1024));
  cmd.why = cmd.corpus->add_subcommand("why", "Why a document was kept or dropped");
  cmd.why->add_option("--out", cmd.out, "The build's output directory")->required();
  cmd.why->add_option("key", cmd.key, "Document key")->required();
}

int RunCorpusCommand(const CorpusCommand& cmd) {
  if (*cmd.build) {
    const corpus::BuildSummary s =
        corpus::BuildCorpus(corpus::LoadCorpusConfig(cmd.config), cmd.out, cmd.threads);
    std::printf("%s", s.report_json.c_str());
    std::fprintf(stderr, "corpus: %llu documents in, %llu kept, %llu shards -> %s\n",
                 (unsigned long long)s.documents, (unsigned long long)s.kept,
                 (unsigned long long)s.shards, cmd.out.c_str());
    return 0;
  }
  const std::string text = corpus::ExplainDocument(cmd.out + "/lineage.sqlite", cmd.key);
  if (text.empty()) {
    std::fprintf(stderr, "trail: no document '%s' in %s/lineage.sqlite\n", cmd.key.c_str(),
                 cmd.out.c_str());
    return 1;
  }
  std::printf("%s", text.c_str());
  return 0;
}

}  // namespace trail::cli
