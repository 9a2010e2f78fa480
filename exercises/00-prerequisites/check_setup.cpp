// Exercise 00 — is this machine ready for the course? Prints what the programs will run on
// (LibTorch, the compiler, CPU threads, every device with a one-second matmul on each) and checks
// what the course needs besides (the corpus, the course tokenizer, the Python environment that
// draws the figures). Exits 0 when everything is there, 2 (bad input, g2c/core/cli.h) with the
// command that fixes each missing piece otherwise. Run it first; send its output along with any
// question about a failing build.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <torch/cuda.h>
#include <torch/mps.h>
#include <torch/torch.h>
#include <torch/version.h>

#include "exercises/common/data.h"
#include "g2c/core/cli.h"
#include "g2c/nn/device.h"
#include "g2c/tokenizer/artifacts.h"

namespace exercise_00_check_setup {

namespace {

/// Each CUDA device's name and memory, as the NVIDIA driver reports them (nvidia-smi). LibTorch's
/// CPU-side API gives only the count; its CUDA headers would tie this program to a CUDA build.
void print_cuda_names_and_memory() {
  std::FILE* pipe = popen(
      "nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader 2>/dev/null", "r");
  std::string report;
  if (pipe != nullptr) {
    char buffer[256];
    while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) report += buffer;
    if (pclose(pipe) != 0) report.clear();
  }
  if (report.empty()) {
    fmt::print("           (names and memory: nvidia-smi is not available)\n");
    return;
  }
  std::istringstream lines(report);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty()) fmt::print("           cuda:{}\n", line);  // "0, NVIDIA H100 …, 81559 MiB"
  }
}

namespace fs = std::filesystem;

/// Multiplies two n×n float32 matrices on `device` again and again for about `seconds`; returns
/// the rate in GFLOP/s (2·n³ operations per product), timed after one warm-up product.
double matmul_gflops(const torch::Device& device, std::int64_t n, double seconds) {
  torch::NoGradGuard no_grad;
  const auto options = torch::TensorOptions().dtype(torch::kFloat).device(device);
  const auto a = torch::randn({n, n}, options);
  const auto b = torch::randn({n, n}, options);
  auto c = torch::matmul(a, b);
  c.cpu();  // waits for the device
  const auto start = std::chrono::steady_clock::now();
  std::int64_t products = 0;
  double elapsed = 0.0;
  while (elapsed < seconds) {
    c = torch::matmul(a, b);
    ++products;
    if (products % 4 == 0) {
      c.sum().item<float>();  // one read per few products: the device's queue is drained
      elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
  }
  return 2.0 * static_cast<double>(n * n * n) * static_cast<double>(products) / elapsed / 1e9;
}

struct Problem {
  std::string what;
  std::string fix;
};

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Module 00: checks that this machine is ready for the course and prints what it will run "
      "on.\nExit status 0: ready; 2: something is missing (each with the command that fixes it)."};
  double seconds = 1.0;
  std::int64_t size = 1024;
  app.add_option("--seconds", seconds, "Time per device for the matmul").range(0.05, 60.0);
  app.add_option("--size", size, "Matrix size n of the n×n matmul").range(16, 8192);
  return g2c::run_cli(app, argc, argv, [&] {
    fmt::print("LibTorch   {}\n", TORCH_VERSION);
    fmt::print("compiler   {} {}, C++ {}\n",
#if defined(__clang__)
               "clang",
#else
               "GCC",
#endif
               __VERSION__, __cplusplus / 100 % 100);
    fmt::print("CPU        {} threads for LibTorch's operators, {} for its inter-op pool\n",
               torch::get_num_threads(), at::get_num_interop_threads());
    // LibTorch's own report, of which the lines about its thread pools and BLAS matter here.
    std::istringstream parallel(at::get_parallel_info());
    for (std::string line; std::getline(parallel, line);) {
      line.erase(0, line.find_first_not_of(" \t"));
      if (line.find("MKL") != std::string::npos || line.find("OpenMP") != std::string::npos) {
        fmt::print("           {}\n", line);
      }
    }

    std::vector<torch::Device> devices = {torch::Device(torch::kCPU)};
    const int cuda_count = static_cast<int>(torch::cuda::device_count());
    for (int i = 0; i < cuda_count; ++i) {
      devices.emplace_back(torch::kCUDA, static_cast<c10::DeviceIndex>(i));
    }
    if (torch::mps::is_available()) devices.emplace_back(torch::kMPS);
    fmt::print("devices    {} (CUDA: {}, MPS: {})\n", devices.size(),
               cuda_count > 0 ? fmt::format("{} device(s)", cuda_count) : "none",
               torch::mps::is_available() ? "yes" : "no");
    if (cuda_count > 0) print_cuda_names_and_memory();
    std::fflush(stdout);
    for (const auto& device : devices) {
      const double rate = matmul_gflops(device, size, seconds);
      fmt::print("  {:<8} {}×{} float32 matmul: {:.1f} GFLOP/s\n", g2c::nn::device_name(device),
                 size, size, rate);
      std::fflush(stdout);
    }

    // What the course's programs read besides LibTorch, and what puts it in place.
    std::vector<Problem> problems;
    try {
      const auto corpus = g2c::exercises::data_file("tinyshakespeare.txt");
      fmt::print("corpus     {} ({} bytes)\n", corpus.string(), fs::file_size(corpus));
    } catch (const std::exception& error) {
      problems.push_back({"the TinyShakespeare corpus", error.what()});
    }
    if (g2c::tokenizer::tokenizer_artifact_exists(g2c::tokenizer::kShakespeareTokenizer)) {
      fmt::print(
          "tokenizer  {}\n",
          g2c::tokenizer::tokenizer_artifact_dir(g2c::tokenizer::kShakespeareTokenizer).string());
    } else {
      problems.push_back({"the course tokenizer (ShakespeareTokenizer)",
                          "build it with scripts/make_tokenizer_artifacts.sh (scripts/setup.sh "
                          "does it too)"});
    }
    const auto python = g2c::exercises::project_python();
    if (fs::exists(python)) {
      fmt::print("figures    {}\n", python.string());
    } else {
      problems.push_back({"the project's Python environment (it draws the figures)",
                          "run scripts/setup.sh, which creates .venv"});
    }

    if (problems.empty()) {
      fmt::print("\nready: everything the course needs is in place\n");
      return static_cast<int>(g2c::kExitOk);
    }
    fmt::print(stderr, "\nnot ready: {} missing\n", problems.size());
    for (const auto& problem : problems) {
      fmt::print(stderr, "  - {}: {}\n", problem.what, problem.fix);
    }
    return static_cast<int>(g2c::kExitBadInput);
  });
}

}  // namespace exercise_00_check_setup
