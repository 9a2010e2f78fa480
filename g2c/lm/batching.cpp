#include "g2c/lm/batching.h"

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"

namespace g2c::lm {

void check_stream(const torch::Tensor& ids, std::int64_t context_length, const char* what) {
  if (!ids.defined() || ids.dim() != 1 || ids.is_floating_point() || ids.is_complex() ||
      ids.scalar_type() == torch::kBool) {
    throw ValueError(fmt::format("{} must be a 1-D tensor of int64 token ids, got {}", what,
                                 ids.defined()
                                     ? describe_shape(ids) + " " + c10::toString(ids.scalar_type())
                                     : "undefined"));
  }
  if (ids.size(0) < context_length + 1) {
    throw ValueError(fmt::format(
        "{} has {} tokens; one example needs context_length + 1 = {} (a context of {} and the "
        "token after it)",
        what, ids.size(0), context_length + 1, context_length));
  }
}

Batch get_batch(const torch::Tensor& ids, std::int64_t context_length, std::int64_t batch_size,
                std::optional<at::Generator> generator) {
  if (context_length < 1 || batch_size < 1) {
    throw ValueError(
        fmt::format("get_batch needs context_length >= 1 and batch_size >= 1, got {} "
                    "and {}",
                    context_length, batch_size));
  }
  check_stream(ids, context_length);
  const auto n = ids.size(0);
  // Starts in [0, n - N): every start leaves room for N context tokens and the target.
  const auto starts = torch::randint(0, n - context_length, {batch_size}, generator,
                                     torch::TensorOptions().dtype(torch::kLong));
  const auto offsets = torch::arange(context_length + 1, torch::kLong);                // (N + 1)
  const auto windows = ids.index({(starts.unsqueeze(1) + offsets).to(ids.device())});  // (B, N+1)
  return {windows.slice(1, 0, context_length).to(torch::kLong),
          windows.select(1, context_length).to(torch::kLong)};
}

}  // namespace g2c::lm
