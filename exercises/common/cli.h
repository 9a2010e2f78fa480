// The command-line shape every exercise shares: --help, --device, --seed, --out, --steps. Programs
// run through g2c::run_cli (g2c/core/cli.h), which turns errors into a message and an exit status.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include "g2c/core/cli.h"

namespace g2c::exercises {

struct CommonOptions {
  std::string device = "auto";  // auto picks CUDA, else MPS, else CPU
  std::uint64_t seed = 0;       // every random draw of the run follows from it
  std::filesystem::path out;    // folder for JSON results and plots
  std::int64_t steps = 0;       // training steps (0: the program has none)
  bool quiet = false;           // no progress display
  bool plot = true;             // render PNGs with scripts/plot.py when Python is there
  int threads = 0;              // LibTorch's intra-op threads (0: its default, one per core)
  /// The program runs several trainings side by side and gives each `threads` of its own (0: half
  /// of this machine's, at least 1), instead of prepare() setting them for the whole process.
  bool threads_per_run = false;
};

/// Adds --device, --seed, --out, --threads, --quiet and --no-plot to `app`; also --steps when
/// `options.steps > 0` (its value is the default). `options.out` holds the default folder.
void add_common_options(g2c::CommandLine& app, CommonOptions& options);

/// Where a program that trains a model saves it: --name, --artifact-dir, --no-save.
struct ArtifactOptions {
  std::string name;  // the artifact's name; the program's default, or empty for one it derives
  /// --artifact-dir: the artifact's folder (of one folder per artifact when a program saves
  /// several). Unset: artifacts/models/<name>.
  std::optional<std::filesystem::path> dir;
  bool save = true;  // --no-save: nothing is saved
  /// The folder save_model_artifact gets for the artifact `name`: dir, dir/<name> when the
  /// program saves several, or unset (artifacts/models/<name>).
  std::optional<std::filesystem::path> folder_for(const std::string& artifact_name,
                                                  bool several = false) const;
};

/// What add_artifact_options adds: each help text, or empty for an option the program has not.
struct ArtifactFlags {
  std::string name;  // e.g. "Name of the saved artifact (default: <base>-SFT)"
  std::string dir = "Folder of the saved artifact (default: artifacts/models/<name>)";
  std::string no_save;  // e.g. "Do not save the fine-tuned model"
};

/// Adds --name, --artifact-dir and --no-save (those `flags` describe) to `app`.
void add_artifact_options(g2c::CommandLine& app, ArtifactOptions& artifact,
                          const ArtifactFlags& flags);

/// Sets LibTorch's threads (--threads, unless threads_per_run), seeds LibTorch, flushes denormal
/// floats to zero, and resolves the device, printing the one chosen.
torch::Device prepare(const CommonOptions& options);

/// What every result file records about the run: program, device, seed, torch version, time.
nlohmann::json run_metadata(const std::string& program, const CommonOptions& options,
                            const torch::Device& device);

/// Writes `result` to out/<name> atomically and prints where it went. `indent` as in
/// g2c::write_json_atomic (-1 writes one line: for results that carry large grids).
std::filesystem::path save_result(const CommonOptions& options, const std::string& name,
                                  const nlohmann::json& result, int indent = 2);

/// Renders the figures a result file describes with scripts/plot.py, which prints the path of each
/// PNG it writes. Nothing happens with --no-plot; without the project's Python environment, or
/// when plotting fails, a note on stderr says so (the JSON is complete either way).
void plot_result(const CommonOptions& options, const std::filesystem::path& json_path);

/// Converts a loss record to JSON, rounding nothing.
nlohmann::json to_json(const std::vector<double>& series);

}  // namespace g2c::exercises
