// Module 02 — your work: a linear layer and a numerically stable softmax on raw tensors.
#include "g2c/tensors/forward.h"
#include "g2c/core/errors.h"

namespace g2c::tensors {

torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& W, const torch::Tensor& b) {
  // TODO: y = x @ W + b. x (B, I) times W (I, O) is (B, O): W is (in, out), so no transpose.
  // The bias b (O) is added to every row by broadcasting: (B, O) + (O) -> (B, O). Refuse shapes
  // that do not fit first (check_linear_inputs). Operations: torch::matmul, +.
  // Hints, one step at a time: scripts/hint.sh 02 linear
  throw g2c::todo("linear", "g2c/tensors/forward.cpp", "02");
}

torch::Tensor softmax(const torch::Tensor& x, std::int64_t dim) {
  // TODO: softmax(x)_i = exp(x_i) / sum_j exp(x_j) along `dim`, the stable way: subtract the
  // slice's maximum before exponentiating (softmax(x) = softmax(x - c) for any c), so no exponent
  // is above 0 and nothing overflows; then divide by the slice's sum. Keep the reduced dim
  // (keepdim) so the max and the sum broadcast back against x. Same shape as x.
  // Operations: max (its values), exp, sum. Not torch::softmax — the checks compare with it.
  // Hints, one step at a time: scripts/hint.sh 02 softmax
  throw g2c::todo("softmax", "g2c/tensors/forward.cpp", "02");
}

}  // namespace g2c::tensors
