// The `trail` command.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <optional>
#include <sstream>

#include "cli/audit_cmd.h"
#include "cli/data_cmd.h"
#include "cli/eval_cmd.h"
#include "cli/export_cmd.h"
#include "cli/import_cmd.h"
#include "cli/publish_cmd.h"
#include "audit/publication.h"
#include "cli/exit_codes.h"
#include "fetch/remote_file.h"
#include "cli/generate_cmd.h"
#include "cli/goldens_cmd.h"
#include "cli/plan_cmd.h"
#include "cli/report_cmd.h"
#if TRAIL_WITH_CORPUS
#include "cli/corpus_cmd.h"
#endif
#include "cli/device_option.h"
#include "cli/selftest.h"
#include "cli/tokenizer_cmd.h"
#include "cli/train_cmd.h"
#include "core/error.h"
#include "core/fp_env.h"
#include "core/thread_pool.h"
#include "core/version.h"
#include "collectives/launch.h"

namespace {

using trail::cli::kExitError;
using trail::cli::kExitUsage;
constexpr int kUsage = kExitUsage, kError = kExitError;

std::vector<int> ParseThreadList(const std::string& s) {
  std::vector<int> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) {
    int n = 0;
    try {
      n = std::stoi(item);
    } catch (...) {
      n = 0;
    }
    if (n < 1 || n > 1024) throw CLI::ValidationError("--threads", "'" + item + "' is not 1..1024");
    out.push_back(n);
  }
  if (out.empty()) throw CLI::ValidationError("--threads", "empty list");
  return out;
}

// Where an error was raised is for developers: shown under --debug or TRAIL_DEBUG=1.
// In a job of several processes the failing one names itself and ends the whole job, so no
// process waits forever for it.
int ReportError(const trail::Error& e, bool debug) {
  std::cerr << "trail: error: " << trail::collectives::ProcessLabel() << e.what() << "\n";
  if (debug && !e.where().empty()) std::cerr << "trail: debug: " << e.where() << "\n";
  std::cerr.flush();
  trail::collectives::AbortJobIfDistributed(kError);
  return kError;
}

// A publication's bytes that could not be had (4) or were not the published ones (5); the
// message names the file's URL, and for a chunk its byte range and index.
int ReportFetchError(const trail::fetch::FetchError& e) {
  if (e.kind() == trail::fetch::FetchError::Kind::kNotPublished) {
    std::cerr << "trail: not the published bytes: " << e.what()
              << "\n(this source serves other bytes than its publication lists; none of them "
                 "was kept: audit from another copy of the bundle)\n";
    return trail::cli::kExitNotPublished;
  }
  std::cerr << "trail: cannot fetch " << e.what()
            << "\n(check the URL and the connection, then rerun: what was verified is kept in "
               "the cache)\n";
  return trail::cli::kExitFetch;
}

// A publication that cannot stand for the run's trainer (6).
int ReportPublisherError(const trail::audit::PublisherError& e) {
  std::cerr << "trail: publication refused: " << e.what() << "\n";
  return trail::cli::kExitPublisher;
}

// Runs a command that uses the kernel pool, then joins the pool's workers before exit.
template <class F>
int WithKernelPool(F run) {
  const int rc = run();
  trail::ShutdownKernelPool();
  return rc;
}

bool DebugFromEnvironment() {
  const char* v = std::getenv("TRAIL_DEBUG");
  return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
}

// The innermost command given that requires a subcommand and got none; null if there is none.
const CLI::App* CommandMissingSubcommand(const CLI::App& app) {
  const CLI::App* cmd = &app;
  for (;;) {
    const auto chosen = cmd->get_subcommands();
    if (chosen.empty()) break;
    cmd = chosen.back();
  }
  return cmd->get_require_subcommand_min() > 0 && cmd->get_subcommands().empty() ? cmd : nullptr;
}

// Every command's options, registered on the app; Run dispatches the one the line gave.
struct Commands {
  trail::cli::SelftestOptions st;
  std::string thread_list = "1,2,7";
  CLI::App* selftest = nullptr;
  trail::cli::GoldensCommand goldens;
  trail::cli::DataCommand data;
  trail::cli::TokenizerCommand tokenizer;
  trail::cli::TrainCommand train;
  trail::cli::AuditCommand audit;
  trail::cli::PlanCommand plan;
  trail::cli::ReportCommand report;
  trail::cli::GenerateCommand generate;
  trail::cli::EvalCommand eval;
  trail::cli::ExportCommand export_cmd;
  trail::cli::ImportCommand import_cmd;
  trail::cli::PublishCommand publish;
#if TRAIL_WITH_CORPUS
  trail::cli::CorpusCommand corpus;
#endif

  void Register(CLI::App& app) {
    selftest = app.add_subcommand(
        "selftest",
        "Run the RepOps golden-hash suite on every SIMD target of this machine and say "
        "whether it reproduces the reference bits");
    selftest->add_option("--threads", thread_list, "Comma-separated thread counts to try")
        ->capture_default_str();
    selftest->add_option("--simd-target,--backend", st.backend,
                         "Only this SIMD target (reference, AVX2, NEON, ...); --backend is its "
                         "deprecated name");
    selftest->add_flag("--json", st.json, "Print the result as JSON");
    trail::cli::AddDeviceOption(selftest, st.device);
    trail::cli::AddGoldensCommand(app, goldens);
    trail::cli::AddDataCommand(app, data);
    trail::cli::AddTokenizerCommand(app, tokenizer);
    trail::cli::AddTrainCommand(app, train);
    trail::cli::AddAuditCommand(app, audit);
    trail::cli::AddPlanCommand(app, plan);
    trail::cli::AddReportCommand(app, report);
    trail::cli::AddGenerateCommand(app, generate);
    trail::cli::AddEvalCommand(app, eval);
    trail::cli::AddExportCommand(app, export_cmd);
    trail::cli::AddImportCommand(app, import_cmd);
    trail::cli::AddPublishCommand(app, publish);
#if TRAIL_WITH_CORPUS
    trail::cli::AddCorpusCommand(app, corpus);
#endif
  }

  int Run() {
    if (*selftest) {
      st.threads = ParseThreadList(thread_list);
      const int rc = trail::cli::RunSelftest(st);
      trail::ShutdownKernelPool();
      return rc;
    }
    if (*goldens.goldens)
      return WithKernelPool([&] { return trail::cli::RunGoldensCommand(goldens); });
    if (*data.data) return trail::cli::RunDataCommand(data);
    if (*tokenizer.tokenizer) return trail::cli::RunTokenizerCommand(tokenizer);
    if (*train.train) return WithKernelPool([&] { return trail::cli::RunTrainCommand(train); });
    if (*audit.audit) return WithKernelPool([&] { return trail::cli::RunAuditCommand(audit); });
    if (*plan.plan) return trail::cli::RunPlanCommand(plan);
    if (*report.report) return trail::cli::RunReportCommand(report);
    if (*export_cmd.export_)
      return WithKernelPool([&] { return trail::cli::RunExportCommand(export_cmd); });
    if (*import_cmd.import) return trail::cli::RunImportCommand(import_cmd);
    if (*publish.publish) return trail::cli::RunPublishCommand(publish);
    if (*eval.eval) return WithKernelPool([&] { return trail::cli::RunEvalCommand(eval); });
    if (*generate.generate)
      return WithKernelPool([&] { return trail::cli::RunGenerateCommand(generate); });
#if TRAIL_WITH_CORPUS
    if (*corpus.corpus) return trail::cli::RunCorpusCommand(corpus);
#endif
    return 0;
  }
};

// Parses the command line: the exit code when the process ends here (help, a usage error, a
// command without its subcommand), nothing when a command is to run.
std::optional<int> Parse(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::RequiredError& e) {
    // A command without its subcommand (a bare `trail`, `trail data`): show what there is.
    if (const CLI::App* cmd = CommandMissingSubcommand(app)) {
      std::cout << cmd->help();
      return argc == 1 ? 0 : kUsage;
    }
    return app.exit(e) == 0 ? 0 : kUsage;
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kUsage;
  }
  return std::nullopt;
}

// Runs `fn`, turning an error into its message (the failed check's location only with `debug`)
// and its exit code.
int ReportingErrors(bool debug, const std::function<int()>& fn) {
  try {
    return fn();
  } catch (const CLI::ValidationError& e) {
    std::cerr << "trail: " << e.what() << "\n";
    return kUsage;
  } catch (const trail::fetch::FetchError& e) {
    return ReportFetchError(e);
  } catch (const trail::audit::PublisherError& e) {
    return ReportPublisherError(e);
  } catch (const trail::Error& e) {
    return ReportError(e, debug);
  } catch (const std::exception& e) {  // a library's own exception that escaped a check
    std::cerr << "trail: error: " << trail::collectives::ProcessLabel() << e.what() << "\n";
    std::cerr.flush();
    trail::collectives::AbortJobIfDistributed(kError);
    return kError;
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"trail: fully auditable LLM pretraining with bitwise-reproducible operators"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("trail ") + trail::kTrailVersion);
  bool debug = DebugFromEnvironment();
  app.add_flag("--debug", debug,
               "On an error, also print the failed check and its source location "
               "(also TRAIL_DEBUG=1)");
  Commands commands;
  commands.Register(app);
  if (const std::optional<int> code = Parse(app, argc, argv)) return *code;
  return ReportingErrors(debug, [&] {
    // Refuse to run at all when this build or thread breaks the floating-point contract.
    trail::SetContractFpMode();
    trail::RequireFpContract();
    return commands.Run();
  });
}
