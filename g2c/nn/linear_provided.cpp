#include <cmath>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"
#include "g2c/nn/linear.h"

namespace g2c::nn {

LinearImpl::LinearImpl(const LinearOptions& options_) : options(options_) {
  if (options.in_features() <= 0 || options.out_features() <= 0) {
    throw ValueError(fmt::format("Linear needs positive sizes, got in_features={}, out_features={}",
                                 options.in_features(), options.out_features()));
  }
  reset();
}

LinearImpl::LinearImpl(ShareWeights, const LinearImpl& base) : options(base.options) {
  W = register_parameter("W", base.W, base.W.requires_grad());
  b = register_parameter("b", base.b, base.b.requires_grad());
}

void LinearImpl::reset() {
  W = register_parameter("W", torch::empty({options.in_features(), options.out_features()}));
  b = register_parameter("b", torch::empty({options.out_features()}));
  reset_parameters();
}

void LinearImpl::reset_parameters() {
  torch::NoGradGuard no_grad;
  const double bound = 1.0 / std::sqrt(static_cast<double>(options.in_features()));
  W.uniform_(-bound, bound);
  b.zero_();
}

void LinearImpl::check_input(const torch::Tensor& x) const {
  if (x.dim() == 0 || x.size(-1) != options.in_features()) {
    throw ValueError(fmt::format("Linear(in_features={}) expects inputs of shape (..., {}), got {}",
                                 options.in_features(), options.in_features(), describe_shape(x)));
  }
}

void LinearImpl::pretty_print(std::ostream& stream) const {
  stream << "g2c::nn::Linear(in_features=" << options.in_features()
         << ", out_features=" << options.out_features() << ")";
}

}  // namespace g2c::nn
