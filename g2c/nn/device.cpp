#include "g2c/nn/device.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>
#include <torch/cuda.h>
#include <torch/mps.h>

#include "g2c/core/errors.h"

namespace g2c::nn {

torch::Device resolve_device(const std::string& requested) {
  std::string name = requested;
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (name.empty() || name == "auto") {
    if (torch::cuda::is_available()) return torch::Device(torch::kCUDA, 0);
    if (torch::mps::is_available()) return torch::Device(torch::kMPS);
    return torch::Device(torch::kCPU);
  }
  if (name == "cpu") return torch::Device(torch::kCPU);
  if (name == "mps") {
    if (!torch::mps::is_available()) {
      throw ValueError(
          "device 'mps' was requested but MPS is not available: it needs Apple silicon and a "
          "LibTorch built with MPS. Use --device auto or --device cpu.");
    }
    return torch::Device(torch::kMPS);
  }
  if (name == "cuda" || name.rfind("cuda:", 0) == 0) {
    if (!torch::cuda::is_available()) {
      throw ValueError(fmt::format(
          "device '{}' was requested but CUDA is not available: no NVIDIA GPU/driver was found, or "
          "this LibTorch was linked without its CUDA backend (configure with -DG2C_CUDA=ON on a "
          "machine with a GPU). Use --device auto or --device cpu.",
          requested));
    }
    std::int64_t index = 0;
    if (name.size() > 5) {
      try {
        index = std::stoll(name.substr(5));
      } catch (const std::exception&) {
        throw ValueError(
            fmt::format("device '{}' is not a valid CUDA device; write cuda or cuda:N", requested));
      }
    }
    const auto count = static_cast<std::int64_t>(torch::cuda::device_count());
    if (index < 0 || index >= count) {
      throw ValueError(fmt::format("device '{}' does not exist: this machine has {} CUDA device(s)",
                                   requested, count));
    }
    return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index));
  }
  throw ValueError(
      fmt::format("unknown device '{}': expected auto, cpu, cuda, cuda:N or mps", requested));
}

std::string device_name(const torch::Device& device) {
  return device.str();
}

}  // namespace g2c::nn
