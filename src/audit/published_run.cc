#include "audit/published_run.h"

#include <algorithm>
#include <filesystem>

#include "core/error.h"
#include "core/file_util.h"
#include "core/hash.h"

namespace trail::audit {

std::string PublishedRun::final_chain() const {
  return ToHex(records.empty() ? info.genesis : records.back().chain);
}

PublishedRun OpenPublishedRun(const std::string& dir) {
  PublishedRun run(dir);
  run.info = run.rd.ReadInfo();
  const std::string recipe = run.rd.recipe_path();
  TRAIL_CHECK(std::filesystem::exists(recipe), recipe, " not found: the run publishes no recipe");
  const std::string want = run.info.json.value("recipe_sha256", "");
  TRAIL_CHECK(ToHex(Sha256OfFile(recipe)) == want, recipe,
              ": SHA-256 differs from the recipe_sha256 run.json records (", want,
              "): this is not the recipe the run trained with");
  TRAIL_CHECK(std::filesystem::exists(run.rd.trajectory_path()), run.rd.trajectory_path(),
              " not found: the run publishes no trajectory");
  run.records = train::ReadChainedPrefix(run.rd.trajectory_path(), &run.info.genesis,
                                         &run.trajectory_problem);
  const std::string text = ReadFileToString(run.rd.trajectory_path());
  run.recorded_lines = std::count(text.begin(), text.end(), '\n');
  run.attestation = train::CheckRunAttestation(run.rd, run.info, run.records);
  return run;
}

std::string ManifestForReplay(const PublishedRun& run, const std::string& given) {
  const std::string path = given.empty() ? run.info.data_manifest : given;
  TRAIL_CHECK(!path.empty(), run.rd.info_path(), " names no data manifest: pass --data MANIFEST");
  TRAIL_CHECK(std::filesystem::exists(path), path,
              " not found: pass --data with a copy of the run's data manifest");
  const std::string want = run.info.json.value("manifest_sha256", "");
  const std::string got = ToHex(Sha256OfFile(path));
  TRAIL_CHECK(got == want, path, ": SHA-256 ", got, " is not the manifest_sha256 the run records (",
              want, "): it describes other data than the run trained on");
  return path;
}

}  // namespace trail::audit
