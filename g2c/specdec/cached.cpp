#include "g2c/specdec/cached.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/sampling/checks.h"

namespace g2c::specdec {

namespace {

/// The ids a cache lacks: ids[cache.length() ..] (at least the last one), (1, T_new) on `device`.
torch::Tensor missing_ids(const std::vector<std::int64_t>& ids, std::int64_t cached,
                          torch::Device device) {
  const std::vector<std::int64_t> fresh(ids.begin() + cached, ids.end());
  return torch::tensor(fresh, torch::kLong).unsqueeze(0).to(device);  // (1, T_new)
}

/// ValueError when prompt and continuation would pass `window` positions.
void check_window(const char* caller, const torch::Tensor& prompt_ids, std::int64_t max_new_tokens,
                  std::int64_t window) {
  if (prompt_ids.numel() + max_new_tokens > window) {
    throw ValueError(fmt::format(
        "{}: {} prompt ids + {} new tokens pass the window of {} positions (a KV cache does not "
        "roll); shorten the run or use speculative_generate, which crops the context",
        caller, prompt_ids.numel(), max_new_tokens, window));
  }
}

/// A model drafting greedily through its own KV cache: the cache takes what it lacks of ids (the
/// prompt at first, afterwards the last emitted tokens) in one pass, then one drafted id per step.
class ModelDrafter : public Drafter {
 public:
  explicit ModelDrafter(g2c::sampling::CachedScoringModel& model)
      : model_(&model), cache_(model.empty_cache()) {}

  std::vector<std::int64_t> propose(const std::vector<std::int64_t>& ids, std::int64_t k) override {
    std::vector<std::int64_t> draft;
    auto step_ids = missing_ids(ids, cache_.length(), model_->device());
    for (std::int64_t i = 0; i < k; ++i) {
      const auto logits = model_->forward(step_ids, cache_);  // (1, T_new, V)
      draft.push_back(logits[0][-1].argmax().item<std::int64_t>());
      if (i + 1 < k) {
        step_ids = torch::tensor({draft.back()}, torch::kLong).view({1, 1}).to(model_->device());
      }
    }
    return draft;
  }

  void rollback(std::int64_t keep) override { cache_.truncate(std::min(keep, cache_.length())); }

 private:
  g2c::sampling::CachedScoringModel* model_;
  g2c::transformer::KVCache cache_;
};

}  // namespace

SpeculativeResult speculative_generate_cached(g2c::sampling::CachedScoringModel& target,
                                              g2c::sampling::CachedScoringModel& drafter,
                                              const torch::Tensor& prompt_ids,
                                              std::int64_t max_new_tokens, std::int64_t k,
                                              std::optional<std::int64_t> eos_id) {
  check_speculative_arguments(target, drafter, prompt_ids, max_new_tokens, k, eos_id);
  check_window("speculative_generate_cached", prompt_ids, max_new_tokens, drafter.max_seq_len());
  ModelDrafter model_drafter(drafter);
  return speculative_generate_cached(target, model_drafter, prompt_ids, max_new_tokens, k, eos_id);
}

SpeculativeResult speculative_generate_cached(g2c::sampling::CachedScoringModel& target,
                                              Drafter& drafter, const torch::Tensor& prompt_ids,
                                              std::int64_t max_new_tokens, std::int64_t k,
                                              std::optional<std::int64_t> eos_id) {
  // The target stands in for the drafter's side of the checks: a Drafter's ids come from the
  // context or from a model whose vocabulary the overload above has checked.
  check_speculative_arguments(target, target, prompt_ids, max_new_tokens, k, eos_id);
  check_window("speculative_generate_cached", prompt_ids, max_new_tokens, target.max_seq_len());
  torch::NoGradGuard no_grad;
  const auto prompt = prompt_ids.to(torch::kCPU, torch::kLong).contiguous();
  std::vector<std::int64_t> ids(prompt.data_ptr<std::int64_t>(),
                                prompt.data_ptr<std::int64_t>() + prompt.numel());
  auto target_cache = target.empty_cache();
  drafter.rollback(0);  // a new sequence
  SpecStats stats;
  while (stats.generated < max_new_tokens) {
    const auto sequence_length = static_cast<std::int64_t>(ids.size());
    const std::int64_t k_budget = std::min(k, max_new_tokens - stats.generated);
    auto draft = drafter.propose(ids, k_budget);
    draft.resize(std::min<std::size_t>(draft.size(), static_cast<std::size_t>(k_budget)));
    const auto k_step = static_cast<std::int64_t>(draft.size());

    // Verify: what the target's cache lacks of ids, and the draft, in one pass.
    std::vector<std::int64_t> block(ids.begin() + target_cache.length(), ids.end());
    block.insert(block.end(), draft.begin(), draft.end());
    const auto input = torch::tensor(block, torch::kLong).unsqueeze(0).to(target.device());
    const auto logits = target.forward(input, target_cache);  // (1, T_new, V)
    // greedy_verify's rule on the block's k + 1 argmaxes, read once from the CPU.
    const auto best = logits[0]
                          .narrow(0, logits.size(1) - (k_step + 1), k_step + 1)
                          .argmax(-1)
                          .to(torch::kCPU, torch::kLong)
                          .contiguous();  // (k + 1)
    const auto* best_ids = best.data_ptr<std::int64_t>();
    std::int64_t n = 0;
    while (n < k_step && draft[static_cast<std::size_t>(n)] == best_ids[n]) ++n;
    const std::int64_t next = best_ids[n];

    // Emit as the lesson's loop does: the accepted prefix and the target's token, capped to the
    // budget, cut after EOS.
    std::vector<std::int64_t> emitted(draft.begin(), draft.begin() + n);
    emitted.push_back(next);
    emitted.resize(std::min<std::size_t>(
        emitted.size(), static_cast<std::size_t>(max_new_tokens - stats.generated)));
    bool stopped = false;
    if (eos_id) {
      const auto hit = std::find(emitted.begin(), emitted.end(), *eos_id);
      if (hit != emitted.end()) {
        emitted.erase(hit + 1, emitted.end());
        stopped = true;
      }
    }
    stats.record(k_step, n, static_cast<std::int64_t>(emitted.size()));
    ids.insert(ids.end(), emitted.begin(), emitted.end());

    // Roll back: a cache keeps only positions whose token stands in ids; the last emitted token is
    // fed by the next pass. The target holds ids[..sequence_length) and the draft, a model
    // drafter ids and the draft but its last id.
    const std::int64_t true_positions = sequence_length + std::min<std::int64_t>(n, emitted.size());
    const std::int64_t keep =
        std::min<std::int64_t>(true_positions, static_cast<std::int64_t>(ids.size()) - 1);
    target_cache.truncate(std::min(keep, target_cache.length()));
    drafter.rollback(keep);
    if (stopped) break;
  }
  return {torch::tensor(ids, torch::kLong), stats};
}

torch::Tensor greedy_generate_cached(g2c::sampling::CachedScoringModel& model,
                                     const torch::Tensor& prompt_ids, std::int64_t max_new_tokens,
                                     std::optional<std::int64_t> eos_id) {
  g2c::sampling::check_prompt_ids(prompt_ids, model.vocab_size());
  if (max_new_tokens < 0) {
    throw ValueError(fmt::format("max_new_tokens must be >= 0; got {}", max_new_tokens));
  }
  check_window("greedy_generate_cached", prompt_ids, max_new_tokens, model.max_seq_len());
  torch::NoGradGuard no_grad;
  const auto prompt = prompt_ids.to(torch::kCPU, torch::kLong).contiguous();
  std::vector<std::int64_t> ids(prompt.data_ptr<std::int64_t>(),
                                prompt.data_ptr<std::int64_t>() + prompt.numel());
  auto cache = model.empty_cache();
  auto input = prompt.unsqueeze(0).to(model.device());  // the prompt first, then one id a pass
  for (std::int64_t step = 0; step < max_new_tokens; ++step) {
    const auto logits = model.forward(input, cache);  // (1, T_new, V)
    const auto next = logits[0][-1].argmax().item<std::int64_t>();
    ids.push_back(next);
    if (eos_id && next == *eos_id) break;
    input = torch::tensor({next}, torch::kLong).view({1, 1}).to(model.device());
  }
  return torch::tensor(ids, torch::kLong);
}

}  // namespace g2c::specdec
