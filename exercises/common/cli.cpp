#include "exercises/common/cli.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iostream>

#include <fmt/format.h>

#include "exercises/common/data.h"
#include "exercises/common/training.h"
#include "g2c/core/atomic_file.h"
#include "g2c/core/errors.h"
#include "g2c/core/memory.h"
#include "g2c/nn/device.h"

namespace g2c::exercises {

void add_common_options(CLI::App& app, CommonOptions& options) {
  app.add_option("--device", options.device, "Where to run: auto, cpu, cuda, cuda:N or mps")
      ->capture_default_str();
  app.add_option("--seed", options.seed, "Random seed")->capture_default_str();
  app.add_option("--out", options.out, "Folder for the JSON results and figures")
      ->capture_default_str();
  if (options.steps > 0) {
    app.add_option("--steps", options.steps, "Training steps")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
  }
  app.add_flag("--quiet", options.quiet, "No progress display");
  app.add_flag("!--no-plot", options.plot, "Do not render PNG figures");
}

int run(CLI::App& app, int argc, char** argv, const std::function<void()>& body) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  }
  try {
    body();
    return 0;
  } catch (const g2c::NotImplementedError& error) {
    std::cerr << "\n"
              << app.get_name() << " needs a function you have not written yet.\n"
              << error.what() << "\n";
    return 3;
  } catch (const g2c::ValueError& error) {
    std::cerr << "\nerror: " << error.what() << "\n";
    return 2;
  } catch (const TrainingDiverged& error) {
    std::cerr << "\n" << error.what() << "\n";
    return 4;
  } catch (const c10::Error& error) {
    // LibTorch's own message, without the stack trace what() appends.
    std::cerr << "\nerror from LibTorch: " << error.what_without_backtrace() << "\n";
    return 1;
  } catch (const std::exception& error) {
    std::cerr << "\nerror: " << error.what() << "\n";
    return 1;
  }
}

torch::Device prepare(const CommonOptions& options) {
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
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return {{"program", program},
          {"device", g2c::nn::device_name(device)},
          {"seed", options.seed},
          {"torch_version", TORCH_VERSION},
          {"created", stamp}};
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
  const std::filesystem::path python = project_dir() / ".venv" / "bin" / "python";
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
