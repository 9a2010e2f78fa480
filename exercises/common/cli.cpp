#include "exercises/common/cli.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include <fmt/format.h>

#include "exercises/common/data.h"
#include "exercises/common/training.h"
#include "g2c/core/atomic_file.h"
#include "g2c/core/clock.h"
#include "g2c/core/errors.h"
#include "g2c/core/memory.h"
#include "g2c/nn/device.h"

namespace g2c::exercises {

void add_common_options(g2c::CommandLine& app, CommonOptions& options) {
  app.add_option("--device", options.device, "Where to run: auto, cpu, cuda, cuda:N or mps");
  app.add_option("--seed", options.seed, "Random seed");
  app.add_option("--out", options.out, "Folder for the JSON results and figures");
  if (options.steps > 0) {
    app.add_option("--steps", options.steps, "Training steps").positive();
  }
  app.add_option("--threads", options.threads,
                 options.threads_per_run
                     ? "Intra-op threads per run (0: half of this machine's, at least 1)"
                     : "CPU threads for LibTorch (0: its default, one per core; 1 avoids idle "
                       "spinning on a machine shared with other jobs)")
      .non_negative();
  app.add_flag("--quiet", options.quiet, "No progress display");
  app.add_flag("!--no-plot", options.plot, "Do not render PNG figures");
}

std::optional<std::filesystem::path> ArtifactOptions::folder_for(const std::string& artifact_name,
                                                                 bool several) const {
  if (!dir) return std::nullopt;
  return several ? *dir / artifact_name : *dir;
}

void add_artifact_options(g2c::CommandLine& app, ArtifactOptions& artifact,
                          const ArtifactFlags& flags) {
  if (!flags.name.empty()) {
    g2c::OptionRef name = app.add_option("--name", artifact.name, flags.name);
    if (artifact.name.empty()) name.no_default();
  }
  if (!flags.dir.empty()) app.add_option("--artifact-dir", artifact.dir, flags.dir).no_default();
  if (!flags.no_save.empty()) app.add_flag("!--no-save", artifact.save, flags.no_save);
}

torch::Device prepare(const CommonOptions& options) {
  if (options.threads > 0 && !options.threads_per_run) torch::set_num_threads(options.threads);
  // Before any parallel work starts, so that every intra-op thread inherits it: denormal floats
  // (below 1e-38) become zero instead of taking the CPU's slow path. See training.cpp.
  at::globalContext().setFlushDenormal(true);
  g2c::reuse_freed_memory();  // training allocates the same tensors every step: see memory.h
  torch::manual_seed(options.seed);
  const torch::Device device = g2c::nn::resolve_device(options.device);
  if (device.is_cuda()) torch::cuda::manual_seed_all(options.seed);
  std::cerr << "device: " << g2c::nn::device_name(device) << ", seed: " << options.seed << "\n";
  return device;
}

nlohmann::json run_metadata(const std::string& program, const CommonOptions& options,
                            const torch::Device& device) {
  return {{"program", program},
          {"device", g2c::nn::device_name(device)},
          {"seed", options.seed},
          {"torch_version", TORCH_VERSION},
          {"created", g2c::utc_timestamp()}};
}

std::filesystem::path save_result(const CommonOptions& options, const std::string& name,
                                  const nlohmann::json& result, int indent) {
  const std::filesystem::path path = options.out / name;
  g2c::write_json_atomic(path, result, indent);
  std::cout << "wrote " << path.string() << "\n";
  return path;
}

void plot_result(const CommonOptions& options, const std::filesystem::path& json_path) {
  if (!options.plot) return;
  // What the program printed comes before what the plotting process prints, in a pipe too.
  std::cout.flush();
  std::fflush(stdout);
  const std::filesystem::path python = project_python();
  const std::filesystem::path script = project_dir() / "scripts" / "plot.py";
  if (!std::filesystem::exists(python) || !std::filesystem::exists(script)) {
    std::cerr << "(no plots: run scripts/setup.sh for the Python environment, or pass --no-plot)\n";
    return;
  }
  const std::string command =
      fmt::format("\"{}\" \"{}\" \"{}\"", python.string(), script.string(), json_path.string());
  if (std::system(command.c_str()) != 0) {
    std::cerr << "(plotting failed; the JSON results are complete: " << json_path.string() << ")\n";
  }
}

nlohmann::json to_json(const std::vector<double>& series) {
  return nlohmann::json(series);
}

}  // namespace g2c::exercises
