// Module 13 — supervised fine-tuning examples and their batches.
//
// Pretraining cut random windows out of one long stream; every window had the same length and
// every position was a target. An SFT example is a whole conversation with its own length, and only
// the reply is a target. pad_and_collate is get_lm_batch for such examples:
//   each example      ids (T_i), mask (T_i)            mask aligned with ids (render_with_mask)
//   truncate / pad    (B, L)  L = max_seq_len          pad ids with pad_id, masks with 0
//   shift by one      x = ids[:, :-1]   y = ids[:, 1:]   loss_mask = mask[:, 1:]   (B, L - 1) each
// loss_mask[b, t] answers "is y[b, t] a reply token?" — the mask shifted like the targets, so a
// padded target is never learned and the last prompt token (which predicts the reply's first
// token) is where the loss starts.
#pragma once

#include <cstdint>
#include <vector>

#include "g2c/core/torch.h"

namespace g2c::sft {

/// One tokenized conversation. mask[t] == 1 iff ids[t] is part of an assistant reply (its content
/// or its <|end|>). Unpacks like the Python NamedTuple: `auto [ids, mask] = example;`.
struct SFTExample {
  std::vector<std::int64_t> ids;
  std::vector<std::int64_t> mask;
  bool operator==(const SFTExample&) const = default;
};

/// A batch: `auto [x, y, loss_mask] = pad_and_collate(...)`.
struct SFTBatch {
  torch::Tensor x;          // (B, max_seq_len - 1) int64, the inputs
  torch::Tensor y;          // (B, max_seq_len - 1) int64, the targets: x shifted left by one
  torch::Tensor loss_mask;  // (B, max_seq_len - 1) int64, 1 where y is a reply token
};

/// Truncates each example to its first max_seq_len ids (and mask entries), pads it to exactly
/// max_seq_len with pad_id (mask 0), stacks them and shifts by one (see above). Every tensor is
/// int64 on the CPU. ValueError (check_pad_and_collate) for no examples, max_seq_len < 2, an
/// example whose ids and mask differ in length, or a mask value other than 0 or 1.
/// Example: ids [10, 11, 12], mask [0, 1, 1], max_seq_len 5, pad_id 99 ->
///          x [[10, 11, 12, 99]], y [[11, 12, 99, 99]], loss_mask [[1, 1, 0, 0]].
SFTBatch pad_and_collate(const std::vector<SFTExample>& examples, std::int64_t max_seq_len,
                         std::int64_t pad_id);

/// The entry checks of pad_and_collate.
void check_pad_and_collate(const std::vector<SFTExample>& examples, std::int64_t max_seq_len);

}  // namespace g2c::sft
