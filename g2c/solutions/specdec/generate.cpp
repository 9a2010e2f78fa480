// Reference solution for g2c/specdec/generate.cpp: the speculative decoding loop.
#include <algorithm>

#include "g2c/specdec/generate.h"
#include "g2c/specdec/verify.h"

namespace g2c::specdec {

SpeculativeResult speculative_generate(g2c::sampling::ScoringModel& target,
                                       g2c::sampling::LogitsModel& drafter,
                                       const torch::Tensor& prompt_ids, std::int64_t max_new_tokens,
                                       std::int64_t k, std::optional<std::int64_t> eos_id) {
  check_speculative_arguments(target, drafter, prompt_ids, max_new_tokens, k, eos_id);
  torch::NoGradGuard no_grad;
  auto ids = prompt_ids.to(torch::kCPU, torch::kLong).clone();  // (T)
  SpecStats stats;
  while (stats.generated < max_new_tokens) {
    const std::int64_t k_step = std::min(k, max_new_tokens - stats.generated);
    const auto draft = draft_greedy(drafter, ids, k_step);  // (k_step)

    // One target pass over the context and the draft, cropped so both fit its window.
    const std::int64_t keep = std::min(ids.size(0), target.max_seq_len() - k_step);
    const auto ctx = ids.narrow(0, ids.size(0) - keep, keep);
    const auto seq = torch::cat({ctx, draft}).unsqueeze(0).to(target.device());  // (1, T_ctx + k)
    const auto logits = target(seq);                                             // (1, ·, V)
    // Row i predicts draft position i; the last row is the bonus position.
    const auto rows = logits[0].narrow(0, logits.size(1) - (k_step + 1), k_step + 1).cpu();

    const auto [n, next] = greedy_verify(draft, rows);
    auto new_ids = torch::cat({draft.narrow(0, 0, n), torch::tensor({next}, torch::kLong)});
    new_ids = new_ids.narrow(0, 0, std::min(new_ids.size(0), max_new_tokens - stats.generated));
    bool stopped = false;
    if (eos_id) {
      const auto hits = (new_ids == *eos_id).nonzero();
      if (hits.size(0) > 0) {
        new_ids = new_ids.narrow(0, 0, hits[0][0].item<std::int64_t>() + 1);  // EOS kept
        stopped = true;
      }
    }
    stats.record(k_step, n, new_ids.size(0));
    ids = torch::cat({ids, new_ids});
    if (stopped) break;
  }
  return {ids, stats};
}

}  // namespace g2c::specdec
