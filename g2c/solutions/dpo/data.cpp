// Module 14 — reference solution for g2c/dpo/data.cpp.
#include "g2c/dpo/data.h"

#include <algorithm>

namespace g2c::dpo {

PreferenceBatch pad_and_collate_pref(const std::vector<PreferenceExample>& examples,
                                     std::int64_t max_seq_len, std::int64_t pad_id) {
  check_pad_and_collate_pref(examples, max_seq_len);
  const auto batch = static_cast<std::int64_t>(examples.size());
  const auto length = static_cast<std::size_t>(max_seq_len);

  // Appends prompt + answer, cut to max_seq_len and padded to it, to the two flat (B·L) grids.
  const auto add_row = [&](const std::vector<std::int64_t>& prompt,
                           const std::vector<std::int64_t>& answer, std::vector<std::int64_t>& ids,
                           std::vector<std::int64_t>& mask) {
    std::vector<std::int64_t> row_ids(prompt);
    row_ids.insert(row_ids.end(), answer.begin(), answer.end());
    std::vector<std::int64_t> row_mask(prompt.size(), 0);
    row_mask.resize(row_ids.size(), 1);  // 1 on every answer token
    row_ids.resize(length, pad_id);      // cuts the tail or pads it
    row_mask.resize(length, 0);
    ids.insert(ids.end(), row_ids.begin(), row_ids.end());
    mask.insert(mask.end(), row_mask.begin(), row_mask.end());
  };

  std::vector<std::int64_t> chosen_ids, chosen_mask, rejected_ids, rejected_mask;
  for (const auto& [prompt, chosen, rejected] : examples) {
    add_row(prompt, chosen, chosen_ids, chosen_mask);
    add_row(prompt, rejected, rejected_ids, rejected_mask);
  }
  const auto grid = [&](const std::vector<std::int64_t>& values) {  // (B, L)
    return torch::tensor(values, torch::kLong).view({batch, max_seq_len});
  };
  using torch::indexing::Slice;
  const auto inputs = [](const torch::Tensor& g) { return g.index({Slice(), Slice(0, -1)}); };
  const auto shifted = [](const torch::Tensor& g) { return g.index({Slice(), Slice(1)}); };
  const auto c_ids = grid(chosen_ids), c_mask = grid(chosen_mask);
  const auto r_ids = grid(rejected_ids), r_mask = grid(rejected_mask);
  return {inputs(c_ids), shifted(c_ids), shifted(c_mask),
          inputs(r_ids), shifted(r_ids), shifted(r_mask)};
}

}  // namespace g2c::dpo
