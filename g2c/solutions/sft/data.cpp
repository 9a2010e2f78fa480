// Module 13 — reference solution for g2c/sft/data.cpp.
#include "g2c/sft/data.h"

#include <algorithm>

namespace g2c::sft {

SFTBatch pad_and_collate(const std::vector<SFTExample>& examples, std::int64_t max_seq_len,
                         std::int64_t pad_id) {
  check_pad_and_collate(examples, max_seq_len);
  const auto batch = static_cast<std::int64_t>(examples.size());
  const auto length = static_cast<std::size_t>(max_seq_len);
  // Row-major (B, L) grids: padding first, then each example's head written over it.
  std::vector<std::int64_t> ids(examples.size() * length, pad_id);
  std::vector<std::int64_t> mask(examples.size() * length, 0);
  for (std::size_t b = 0; b < examples.size(); ++b) {
    const auto kept = std::min(examples[b].ids.size(), length);  // truncate the tail
    std::copy_n(examples[b].ids.begin(), kept, ids.begin() + b * length);
    std::copy_n(examples[b].mask.begin(), kept, mask.begin() + b * length);
  }
  const auto ids_grid = torch::tensor(ids, torch::kLong).view({batch, max_seq_len});    // (B, L)
  const auto mask_grid = torch::tensor(mask, torch::kLong).view({batch, max_seq_len});  // (B, L)
  // The shift: position t of x predicts y[t] = ids[t + 1], and counts when that target does.
  return {ids_grid.narrow(1, 0, max_seq_len - 1),    // x          (B, L - 1)
          ids_grid.narrow(1, 1, max_seq_len - 1),    // y          (B, L - 1)
          mask_grid.narrow(1, 1, max_seq_len - 1)};  // loss_mask  (B, L - 1)
}

}  // namespace g2c::sft
