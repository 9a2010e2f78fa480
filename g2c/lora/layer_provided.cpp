#include <cmath>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/lora/layer.h"

namespace g2c::lora {

namespace {

/// The base layer, once the arguments are known to be usable: it is dereferenced before the body
/// of the constructor runs, so the checks come first.
const g2c::nn::LinearImpl& checked_base(const g2c::nn::Linear& base,
                                        const LoRALinearOptions& options) {
  if (base.is_empty()) {
    throw ValueError(
        "LoRALinear wraps a g2c::nn::Linear, got an empty handle (nullptr); pass the layer to "
        "adapt, e.g. LoRALinear(block->attn->q_proj, /*rank=*/4)");
  }
  if (dynamic_cast<const LoRALinearImpl*>(base.get()) != nullptr) {
    throw ValueError(
        "LoRALinear: this layer already is a LoRALinear; wrapping it again would stack a second "
        "adapter on the first. Adapt the original Linear once");
  }
  if (options.rank() < 1) {
    throw ValueError(fmt::format("LoRALinear needs rank >= 1, got rank={}", options.rank()));
  }
  if (options.alpha() && !std::isfinite(*options.alpha())) {
    throw ValueError(fmt::format("LoRALinear needs a finite alpha, got {}", *options.alpha()));
  }
  return *base;
}

}  // namespace

LoRALinearImpl::LoRALinearImpl(const g2c::nn::Linear& base, const LoRALinearOptions& options)
    : LinearImpl(ShareWeights{}, checked_base(base, options)),
      lora_options(options),
      rank(options.rank()),
      alpha(options.alpha().value_or(static_cast<double>(options.rank()))),
      scaling(alpha / static_cast<double>(rank)) {
  reset();
}

void LoRALinearImpl::reset() {
  // On the base weight's device and dtype, so a model already moved to CUDA or float64 can be
  // adapted in place.
  const auto like = W.options().requires_grad(false);
  lora_A = register_parameter("lora_A", torch::empty({options.in_features(), rank}, like));
  lora_B = register_parameter("lora_B", torch::empty({rank, options.out_features()}, like));
  reset_parameters();
}

void LoRALinearImpl::reset_parameters() {
  torch::NoGradGuard no_grad;
  const double bound = 1.0 / std::sqrt(static_cast<double>(options.in_features()));
  lora_A.uniform_(-bound, bound);
  lora_B.zero_();
}

void LoRALinearImpl::pretty_print(std::ostream& stream) const {
  stream << "g2c::lora::LoRALinear(in_features=" << options.in_features()
         << ", out_features=" << options.out_features() << ", rank=" << rank << ", alpha=" << alpha
         << ", merged=" << (merged ? "true" : "false") << ")";
}

}  // namespace g2c::lora
