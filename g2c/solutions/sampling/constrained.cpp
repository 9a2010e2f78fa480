// Module 18 — reference solution for g2c/sampling/constrained.cpp.
#include "g2c/sampling/constrained.h"

#include <algorithm>
#include <limits>

namespace g2c::sampling {

torch::Tensor allowed_token_mask(const JsonPrefixAutomaton& automaton, const JsonState& state,
                                 const std::vector<std::string>& pieces) {
  const auto vocab = static_cast<std::int64_t>(pieces.size());
  auto allowed = torch::zeros({vocab}, torch::kBool);  // (V)
  auto flags = allowed.accessor<bool, 1>();
  for (std::int64_t i = 0; i < vocab; ++i) {
    const auto& piece = pieces[static_cast<std::size_t>(i)];
    flags[i] = !piece.empty() && automaton.advance(state, piece).has_value();
  }
  return allowed;
}

torch::Tensor generate_json(LogitsModel& model, const torch::Tensor& prompt_ids,
                            const std::vector<std::string>& pieces,
                            const GenerateJsonOptions& options) {
  check_generate_json_arguments(model, prompt_ids, pieces, options);
  torch::NoGradGuard no_grad;
  const auto& automaton = options.automaton();
  MaskCache own_cache;
  MaskCache& cache = options.mask_cache() != nullptr ? *options.mask_cache() : own_cache;
  const auto sampling = options.sampling();
  auto ids = prompt_ids.to(torch::kCPU, torch::kLong).clone();  // (T), the sequence so far
  auto state = automaton.initial();
  for (std::int64_t step = 0; step < options.max_new_tokens(); ++step) {
    auto found = cache.find(state);
    if (found == cache.end()) {
      found = cache.emplace(state, allowed_token_mask(automaton, state, pieces)).first;
    }
    const auto& allowed = found->second;     // (V)
    if (!allowed.any().item<bool>()) break;  // the grammar says stop
    const auto start = std::max<std::int64_t>(0, ids.size(0) - model.max_seq_len());
    const auto context = ids.narrow(0, start, ids.size(0) - start).unsqueeze(0).to(model.device());
    // (1, T_ctx) -> (1, T', V) -> the last position (1, V), masked before any warper.
    const auto logits = model.forward(context).select(/*dim=*/1, -1).to(torch::kCPU);
    const auto masked =
        logits.masked_fill(allowed.logical_not(), -std::numeric_limits<double>::infinity());
    const auto next = sample_next_token(masked, ids, sampling);  // (1)
    ids = torch::cat({ids, next});
    // The mask admitted only pieces that advance, so the state is never nullopt here.
    state = automaton.advance(state, pieces[static_cast<std::size_t>(next.item<std::int64_t>())])
                .value();
    if (automaton.is_complete(state)) break;
  }
  return ids;
}

}  // namespace g2c::sampling
