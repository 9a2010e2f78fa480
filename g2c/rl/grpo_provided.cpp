// Beyond module rl, implemented for you: the input checks of completion_log_prob and grpo_loss.
#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"
#include "g2c/rl/grpo.h"

namespace g2c::rl {

void check_completion_ids(const torch::Tensor& ids, std::int64_t prompt_len) {
  if (!ids.defined() || ids.dim() != 2 || !at::isIntegralType(ids.scalar_type(), false)) {
    throw ValueError(fmt::format(
        "completion_log_prob: ids must be a 2-D integer tensor (B, T), prompt ++ completion per "
        "row; got {}",
        ids.defined() ? describe_shape(ids) : "an undefined tensor"));
  }
  const std::int64_t T = ids.size(1);
  if (prompt_len < 1 || prompt_len >= T) {
    throw ValueError(fmt::format(
        "completion_log_prob: prompt_len must satisfy 1 <= prompt_len < T = {} (a prompt token to "
        "condition on and at least one completion token to score); got {}",
        T, prompt_len));
  }
}

void check_grpo_inputs(const torch::Tensor& logp, const torch::Tensor& ref_logp,
                       const torch::Tensor& advantages) {
  const auto one_dim = [](const torch::Tensor& t) { return t.defined() && t.dim() == 1; };
  if (!one_dim(logp) || !one_dim(ref_logp) || !one_dim(advantages) || logp.numel() == 0 ||
      ref_logp.sizes() != logp.sizes() || advantages.sizes() != logp.sizes()) {
    const auto shape = [](const torch::Tensor& t) {
      return t.defined() ? describe_shape(t) : std::string("undefined");
    };
    throw ValueError(fmt::format(
        "grpo_loss: logp, ref_logp and advantages must be 1-D tensors of one length K >= 1, one "
        "entry per completion of the group; got logp {}, ref_logp {}, advantages {}",
        shape(logp), shape(ref_logp), shape(advantages)));
  }
}

}  // namespace g2c::rl
