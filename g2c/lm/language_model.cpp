#include "g2c/lm/language_model.h"

#include <utility>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"

namespace g2c::lm {

LanguageModelImpl::LanguageModelImpl(std::string name, std::int64_t vocab_size_,
                                     std::int64_t context_length_)
    : vocab_size(vocab_size_), context_length(context_length_), name_(std::move(name)) {
  if (vocab_size <= 0 || context_length <= 0) {
    throw ValueError(fmt::format("{} needs vocab_size > 0 and context_length > 0, got {} and {}",
                                 name_, vocab_size, context_length));
  }
}

torch::Tensor LanguageModelImpl::as_context(const torch::Tensor& context) const {
  if (!context.defined()) {
    throw ValueError(fmt::format("{} got an undefined context tensor", name_));
  }
  if (context.is_floating_point() || context.is_complex() ||
      context.scalar_type() == torch::kBool) {
    throw ValueError(
        fmt::format("{} expects integer token ids (int64), got dtype {}; convert with "
                    ".to(torch::kLong)",
                    name_, c10::toString(context.scalar_type())));
  }
  auto matrix = context;
  if (context.dim() == 1 && context_length == 1) {
    matrix = context.unsqueeze(1);  // (B) -> (B, 1)
  }
  if (matrix.dim() != 2 || matrix.size(1) != context_length) {
    const auto expected = context_length == 1 ? std::string("(B) or (B, N=1)")
                                              : fmt::format("(B, N={})", context_length);
    throw ValueError(fmt::format("{} expects a context of shape {}, got {}", name_, expected,
                                 describe_shape(context, {"B", "N"})));
  }
  if (matrix.numel() > 0) {
    const auto low = matrix.min().item<std::int64_t>();
    const auto high = matrix.max().item<std::int64_t>();
    if (low < 0 || high >= vocab_size) {
      throw ValueError(
          fmt::format("{} has vocab_size {}: token ids must be in [0, {}), got ids "
                      "from {} to {}",
                      name_, vocab_size, vocab_size, low, high));
    }
  }
  return matrix.to(device(), torch::kLong);
}

bool LanguageModelImpl::trainable() const {
  for (const auto& parameter : parameters()) {
    if (parameter.requires_grad()) {
      return true;
    }
  }
  return false;
}

}  // namespace g2c::lm
