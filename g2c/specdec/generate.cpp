// Beyond module specdec — your work: the speculative decoding loop.
#include "g2c/specdec/generate.h"
#include "g2c/core/errors.h"
#include "g2c/specdec/verify.h"

namespace g2c::specdec {

SpeculativeResult speculative_generate(g2c::sampling::ScoringModel& target,
                                       g2c::sampling::LogitsModel& drafter,
                                       const torch::Tensor& prompt_ids, std::int64_t max_new_tokens,
                                       std::int64_t k, std::optional<std::int64_t> eos_id) {
  // TODO: draft, verify in one pass, keep the prefix.
  // check_speculative_arguments(target, drafter, prompt_ids, max_new_tokens, k, eos_id) first,
  // then a torch::NoGradGuard. ids = prompt_ids as a CPU int64 tensor (T); stats = SpecStats{}.
  // While stats.generated < max_new_tokens:
  //   k_step = min(k, max_new_tokens − stats.generated)           never draft past the budget
  //   draft  = draft_greedy(drafter, ids, k_step)                  (k_step)
  //   ctx    = the last target.max_seq_len() − k_step ids          room for the draft
  //   logits = target(cat(ctx, draft).unsqueeze(0) on target.device())      (1, T_ctx + k_step, V)
  //   rows   = the last k_step + 1 rows of logits[0], on the CPU            (k_step + 1, V)
  //   {n, next} = greedy_verify(draft, rows)
  //   new_ids = draft[:n] ++ [next], cut to max_new_tokens − stats.generated, then cut after the
  //             first eos_id (kept)
  //   stats.record(k_step, n, new_ids.numel()); ids = cat(ids, new_ids); stop if it ended in EOS
  // Return {ids, stats}.
  // Hints, one step at a time: scripts/hint.sh specdec speculative_generate
  throw g2c::todo("speculative_generate", "g2c/specdec/generate.cpp", "specdec");
}

}  // namespace g2c::specdec
