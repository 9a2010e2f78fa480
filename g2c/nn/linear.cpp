// Module 03 — your work: the forward pass of Linear.
#include "g2c/nn/linear.h"
#include "g2c/core/errors.h"

namespace g2c::nn {

torch::Tensor LinearImpl::forward(const torch::Tensor& x) {
  // TODO: y = x W + b: the input's last dimension (in_features) meets W (in, out); b (out) is added
  // to every row; any leading dimensions come along, (…, in) -> (…, out). Refuse a wrong last
  // dimension first (check_input). Operations: a matrix product that broadcasts over leading
  // dimensions, an addition.
  // Hints, one step at a time: scripts/hint.sh 03 Linear::forward
  throw g2c::todo("Linear::forward", "g2c/nn/linear.cpp", "03");
}

}  // namespace g2c::nn
