// Beyond module specdec, implemented for you: the shape checks of a draft block.
#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"
#include "g2c/specdec/verify.h"

namespace g2c::specdec {

void check_draft_block(const torch::Tensor& draft, const torch::Tensor& target_rows,
                       const char* what, const std::optional<torch::Tensor>& draft_probs) {
  if (!draft.defined() || draft.dim() != 1 || draft.numel() == 0) {
    throw ValueError(
        fmt::format("the draft must be a non-empty 1-D tensor of token ids (k); got {}",
                    draft.defined() ? describe_shape(draft) : "an undefined tensor"));
  }
  const std::int64_t k = draft.size(0);
  if (!target_rows.defined() || target_rows.dim() != 2 || target_rows.size(0) != k + 1) {
    throw ValueError(fmt::format(
        "{} must be (k + 1, V) = ({}, V): one row per draft position and the bonus row; got {}",
        what, k + 1, target_rows.defined() ? describe_shape(target_rows) : "an undefined tensor"));
  }
  if (draft_probs) {
    const auto& rows = *draft_probs;
    if (!rows.defined() || rows.dim() != 2 || rows.size(0) != k ||
        rows.size(1) != target_rows.size(1)) {
      throw ValueError(fmt::format(
          "draft_probs must be (k, V) = ({}, {}), the rows the draft was sampled from; got {}", k,
          target_rows.size(1), rows.defined() ? describe_shape(rows) : "an undefined tensor"));
    }
  }
}

}  // namespace g2c::specdec
