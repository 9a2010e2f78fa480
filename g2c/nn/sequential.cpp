// Module 03 — your work: Sequential's forward pass.
#include "g2c/nn/sequential.h"
#include "g2c/core/errors.h"

namespace g2c::nn {

torch::Tensor SequentialImpl::forward(const torch::Tensor& x) {
  // TODO: A pipeline: the output of each layer of `layers` is the input of the next, in order; with
  // no layers the input comes back unchanged.
  // Hints, one step at a time: scripts/hint.sh 03 Sequential::forward
  throw g2c::todo("Sequential::forward", "g2c/nn/sequential.cpp", "03");
}

}  // namespace g2c::nn
