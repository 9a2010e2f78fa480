// The part of LibTorch the course library is written against: tensors and their operators
// (ATen, which torch:: re-exports), autograd's factories and guards, and the module system
// (torch::nn::Module, ModuleHolder/TORCH_MODULE, ModuleList, TORCH_ARG). A file that needs more
// (torch::nn::init, torch::nn::functional, LibTorch's optimizers or serialization) includes that
// header itself.
//
// Why not <torch/torch.h>: it also brings every built-in module, optimizer, data loader and
// functional, and the compiler instantiates and emits their inline code in every file that sees
// them, precompiled header or not. Measured with GCC 12 on the course's 2-core machine, the cost
// of an empty file is 4.7 s under <torch/torch.h> and 2.6 s under this header; a student's edit of
// g2c/attention/self_attention.cpp recompiles in 3.9 s instead of 7.2 s.
#pragma once

#include <ATen/ATen.h>
#include <torch/arg.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/pimpl.h>
#include <torch/types.h>
#include <torch/utils.h>
