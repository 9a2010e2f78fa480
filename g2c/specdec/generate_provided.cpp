// Beyond module specdec, implemented for you: the account of a run, the drafter's greedy chain and
// the argument checks.
#include <vector>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/sampling/checks.h"
#include "g2c/specdec/generate.h"

namespace g2c::specdec {

void SpecStats::record(std::int64_t drafted_now, std::int64_t accepted_now,
                       std::int64_t generated_now) {
  target_passes += 1;
  drafted += drafted_now;
  accepted += accepted_now;
  generated += generated_now;
}

SpecStats& SpecStats::operator+=(const SpecStats& other) {
  target_passes += other.target_passes;
  drafted += other.drafted;
  accepted += other.accepted;
  generated += other.generated;
  return *this;
}

double SpecStats::acceptance_rate() const {
  return drafted > 0 ? static_cast<double>(accepted) / static_cast<double>(drafted) : 0.0;
}

double SpecStats::tokens_per_pass() const {
  return target_passes > 0 ? static_cast<double>(generated) / static_cast<double>(target_passes)
                           : 0.0;
}

std::ostream& operator<<(std::ostream& stream, const SpecStats& stats) {
  return stream << fmt::format(
             "SpecStats(passes={}, drafted={}, accepted={}, generated={}, acceptance={:.2f}, "
             "tokens/pass={:.2f})",
             stats.target_passes, stats.drafted, stats.accepted, stats.generated,
             stats.acceptance_rate(), stats.tokens_per_pass());
}

torch::Tensor draft_greedy(g2c::sampling::LogitsModel& drafter, const torch::Tensor& ctx_ids,
                           std::int64_t k) {
  if (k < 0) throw ValueError(fmt::format("draft_greedy: k must be >= 0; got {}", k));
  g2c::sampling::check_prompt_ids(ctx_ids, drafter.vocab_size());
  torch::NoGradGuard no_grad;
  const auto ctx = ctx_ids.to(torch::kCPU, torch::kLong).contiguous();
  std::vector<std::int64_t> ids(ctx.data_ptr<std::int64_t>(),
                                ctx.data_ptr<std::int64_t>() + ctx.numel());
  std::vector<std::int64_t> draft;
  const auto window = static_cast<std::size_t>(drafter.max_seq_len());
  for (std::int64_t step = 0; step < k; ++step) {
    const std::size_t start = ids.size() > window ? ids.size() - window : 0;
    const auto context =
        torch::tensor(
            std::vector<std::int64_t>(ids.begin() + static_cast<std::ptrdiff_t>(start), ids.end()),
            torch::kLong)
            .unsqueeze(0)
            .to(drafter.device());         // (1, T_ctx)
    const auto logits = drafter(context);  // (1, T', V)
    const auto next = logits[0][-1].argmax().item<std::int64_t>();
    draft.push_back(next);
    ids.push_back(next);
  }
  return torch::tensor(draft, torch::kLong);  // (k)
}

void check_speculative_arguments(const g2c::sampling::ScoringModel& target,
                                 const g2c::sampling::LogitsModel& drafter,
                                 const torch::Tensor& prompt_ids, std::int64_t max_new_tokens,
                                 std::int64_t k, std::optional<std::int64_t> eos_id) {
  if (drafter.vocab_size() != target.vocab_size()) {
    throw ValueError(fmt::format(
        "the drafter's vocabulary has {} tokens but the target's has {}: a draft id means nothing "
        "to a model that numbers tokens differently. Draft with a model of the target's tokenizer "
        "(ShakespeareLM's byte-level one for the course ladder, SmolLM2's own layers or prompt "
        "lookup for SmolLM2)",
        drafter.vocab_size(), target.vocab_size()));
  }
  g2c::sampling::check_prompt_ids(prompt_ids, target.vocab_size());
  if (k < 1) {
    throw ValueError(fmt::format("k, the draft length, must be >= 1; got {}", k));
  }
  if (k >= target.max_seq_len()) {
    throw ValueError(fmt::format(
        "k {} leaves no room for context in the target's window of {} positions: pass k < {}", k,
        target.max_seq_len(), target.max_seq_len()));
  }
  if (max_new_tokens < 0) {
    throw ValueError(fmt::format("max_new_tokens must be >= 0; got {}", max_new_tokens));
  }
  if (eos_id && (*eos_id < 0 || *eos_id >= target.vocab_size())) {
    throw ValueError(
        fmt::format("eos_id {} is outside the model vocab [0, {}): it could never be generated",
                    *eos_id, target.vocab_size()));
  }
}

}  // namespace g2c::specdec
