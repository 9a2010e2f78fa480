// Module 14 — your work: a batch of preference examples.
#include "g2c/dpo/data.h"

#include <algorithm>

#include "g2c/core/errors.h"

namespace g2c::dpo {

PreferenceBatch pad_and_collate_pref(const std::vector<PreferenceExample>& examples,
                                     std::int64_t max_seq_len, std::int64_t pad_id) {
  // TODO: Module 13's pad_and_collate, twice per example. Each example gives two rows that share
  // the prompt: prompt_ids + chosen_ids with mask 0 on the prompt and 1 on the answer, and
  // prompt_ids + rejected_ids likewise. Each row on its own: keep its first max_seq_len ids and
  // mask bits (a row longer than that loses its end), pad to L = max_seq_len with pad_id and mask
  // 0. Stack each side into (B, L) grids, then shift as the LM loss does: x = ids[:, :L-1],
  // y = ids[:, 1:], mask = mask[:, 1:] (shifted like y: mask[b, t] says whether y[b, t] is an
  // answer token).
  // Return the six int64 tensors (B, L - 1), chosen's three then rejected's. Check the arguments
  // first (check_pad_and_collate_pref).
  // Operations: a std::vector per grid then torch::tensor(...).view({B, L}), or torch::full and
  // a loop writing rows; Slice or narrow for the shift.
  // Hints, one step at a time: scripts/hint.sh 14 pad_and_collate_pref
  throw g2c::todo("pad_and_collate_pref", "g2c/dpo/data.cpp", "14");
}

}  // namespace g2c::dpo
