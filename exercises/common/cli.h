// The command-line shape every exercise shares: --help, --device, --seed, --out, --steps, and a
// main wrapper that turns course errors into a clear message and a non-zero exit status.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include <torch/torch.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace g2c::exercises {

struct CommonOptions {
  std::string device = "auto";  // auto picks CUDA, else MPS, else CPU
  std::uint64_t seed = 0;       // every random draw of the run follows from it
  std::filesystem::path out;    // folder for JSON results and plots
  std::int64_t steps = 0;       // training steps (0: the program has none)
  bool quiet = false;           // no progress display
  bool plot = true;             // render PNGs with scripts/plot.py when Python is there
};

/// Adds --device, --seed, --out, --quiet and --no-plot to `app`; also --steps when
/// `options.steps > 0` (its value is the default). `options.out` holds the default folder.
void add_common_options(CLI::App& app, CommonOptions& options);

/// Runs `body` after parsing; maps errors to messages: CLI problems and ValueError exit 2,
/// NotImplementedError exits 3 with the TODO it hit, a training loss that stopped being finite
/// exits 4 with its diagnosis, anything else exits 1 (LibTorch errors without their stack trace).
int run(CLI::App& app, int argc, char** argv, const std::function<void()>& body);

/// Seeds LibTorch, flushes denormal floats to zero, and resolves the device, printing the one
/// chosen.
torch::Device prepare(const CommonOptions& options);

/// What every result file records about the run: program, device, seed, torch version, time.
nlohmann::json run_metadata(const std::string& program, const CommonOptions& options,
                            const torch::Device& device);

/// Writes `result` to out/<name> atomically and prints where it went. `indent` as in
/// g2c::write_json_atomic (-1 writes one line: for results that carry large grids).
std::filesystem::path save_result(const CommonOptions& options, const std::string& name,
                                  const nlohmann::json& result, int indent = 2);

/// Renders figures from a result file with scripts/plot.py (when --no-plot was not given and the
/// project's Python environment exists); returns the PNG paths it reported, empty otherwise.
void plot_result(const CommonOptions& options, const std::filesystem::path& json_path);

/// Converts a loss record to JSON, rounding nothing.
nlohmann::json to_json(const std::vector<double>& series);

}  // namespace g2c::exercises
