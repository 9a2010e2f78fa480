// Choosing where tensors live.
#pragma once

#include <string>

#include "g2c/core/torch.h"

namespace g2c::nn {

/// "auto" -> CUDA if available, else MPS, else CPU. "cpu" always works; "cuda", "cuda:1" and
/// "mps" throw ValueError when that device is not available here, saying why.
/// Example: resolve_device("auto") on a laptop without a GPU -> Device(kCPU).
torch::Device resolve_device(const std::string& name = "auto");

/// "cpu", "cuda:0", "mps".
std::string device_name(const torch::Device& device);

}  // namespace g2c::nn
