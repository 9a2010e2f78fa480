// Module 14 — preference examples and their batches.
//
// A preference example is one prompt with two answers to it: the one people preferred (chosen)
// and the one they did not (rejected). DPO scores each answer as a continuation of the prompt, so
// every example becomes two SFT-style rows that share the prompt:
//   chosen row     prompt_ids + chosen_ids      mask 0 on the prompt, 1 on the answer
//   rejected row   prompt_ids + rejected_ids    mask 0 on the prompt, 1 on the answer
// Each side is then handled exactly like module 13's pad_and_collate, on its own:
//   truncate / pad    (B, L)  L = max_seq_len          keep the start; pad ids with pad_id, mask 0
//   shift by one      x = ids[:, :-1]   y = ids[:, 1:]   mask = mask[:, 1:]   (B, L - 1) each
// mask[b, t] answers "is y[b, t] an answer token?": only those log-probabilities are summed into
// the answer's score, never the prompt's (the same for both answers) nor the padding's.
#pragma once

#include <cstdint>
#include <vector>

#include "g2c/core/torch.h"

namespace g2c::dpo {

/// One preference: a prompt, the preferred answer and the dispreferred one, as token ids. Unpacks
/// like the Python NamedTuple: `auto [prompt, chosen, rejected] = example;`.
struct PreferenceExample {
  std::vector<std::int64_t> prompt_ids;
  std::vector<std::int64_t> chosen_ids;
  std::vector<std::int64_t> rejected_ids;
  bool operator==(const PreferenceExample&) const = default;
};

/// Two parallel batches, one per answer:
/// `auto [chosen_x, chosen_y, chosen_mask, rejected_x, rejected_y, rejected_mask] = ...`.
/// Each tensor is (B, max_seq_len - 1) int64.
struct PreferenceBatch {
  torch::Tensor chosen_x;     // prompt + chosen, without its last id: the inputs
  torch::Tensor chosen_y;     // prompt + chosen shifted left by one: the targets
  torch::Tensor chosen_mask;  // 1 where chosen_y is a chosen-answer token
  torch::Tensor rejected_x;   // the same three for prompt + rejected
  torch::Tensor rejected_y;
  torch::Tensor rejected_mask;  // 1 where rejected_y is a rejected-answer token
};

/// Builds both rows of every example (see above), truncates each to its first max_seq_len ids
/// (keeping the start; an answer cut off entirely leaves an all-zero mask), pads each to exactly
/// max_seq_len with pad_id (mask 0), stacks and shifts by one. The chosen and rejected rows are
/// truncated and padded independently. Every tensor is int64 on the CPU. ValueError
/// (check_pad_and_collate_pref) for no examples or max_seq_len < 2.
/// Example: prompt [10, 11, 12], chosen [20, 21], rejected [30, 31, 32], max_seq_len 6, pad 0 ->
///          chosen_x [[10, 11, 12, 20, 21]], chosen_y [[11, 12, 20, 21, 0]],
///          chosen_mask [[0, 0, 1, 1, 0]], rejected_x [[10, 11, 12, 30, 31]],
///          rejected_y [[11, 12, 30, 31, 32]], rejected_mask [[0, 0, 1, 1, 1]].
PreferenceBatch pad_and_collate_pref(const std::vector<PreferenceExample>& examples,
                                     std::int64_t max_seq_len, std::int64_t pad_id);

/// The entry checks of pad_and_collate_pref.
void check_pad_and_collate_pref(const std::vector<PreferenceExample>& examples,
                                std::int64_t max_seq_len);

}  // namespace g2c::dpo
