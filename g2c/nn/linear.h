// Linear: the affine layer y = x @ W + b, written on raw tensors.
//
// Shapes: x (..., in) -> (..., out). W is (in, out) -- the transpose of torch::nn::Linear's
// weight -- so the forward pass reads exactly like the maths.
#pragma once

#include <cstdint>

#include "g2c/core/torch.h"

#include "g2c/nn/module.h"

namespace g2c::nn {

struct LinearOptions {
  LinearOptions(std::int64_t in_features, std::int64_t out_features)
      : in_features_(in_features), out_features_(out_features) {}
  TORCH_ARG(std::int64_t, in_features);
  TORCH_ARG(std::int64_t, out_features);
};

class LinearImpl : public Module {
 public:
  LinearImpl(std::int64_t in_features, std::int64_t out_features)
      : LinearImpl(LinearOptions(in_features, out_features)) {}
  explicit LinearImpl(const LinearOptions& options);

  /// Registers W then b (the Python edition's order) and initialises them.
  void reset();
  /// W ~ Uniform(-1/sqrt(in), 1/sqrt(in)); b = 0.
  void reset_parameters();

  /// x (..., in) -> x @ W + b, shape (..., out). Example: W = [[3,4],[5,6]], b = [0.5,-0.5],
  /// x = [[1,2]] -> [[13.5, 15.5]].
  torch::Tensor forward(const torch::Tensor& x) override;

  void pretty_print(std::ostream& stream) const override;

  /// ValueError unless x has at least one dimension and its last one is in_features.
  void check_input(const torch::Tensor& x) const;

  LinearOptions options;
  torch::Tensor W;  // (in, out)
  torch::Tensor b;  // (out)

 protected:
  /// For a layer built on an existing Linear (module 13b's LoRALinear): takes `base`'s options and
  /// registers base's own W and b tensors (the same objects, not copies) under the same names, so
  /// the two compute with, and update, one set of weights. Nothing is drawn or initialised.
  struct ShareWeights {};
  LinearImpl(ShareWeights, const LinearImpl& base);
};
TORCH_MODULE(Linear);

}  // namespace g2c::nn
