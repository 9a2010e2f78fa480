// Reference solution for g2c/midtraining/mixture.cpp: one batch of the mixture.
#include "g2c/midtraining/mixture.h"

namespace g2c::midtraining {

g2c::pretraining::LMBatch TokenMixture::get_lm_batch(std::int64_t batch_size,
                                                     std::int64_t context_length,
                                                     std::optional<at::Generator> generator) {
  check_batch_dimensions(batch_size, context_length);
  const auto num_sources = static_cast<std::int64_t>(sources.size());
  const auto choices =
      torch::multinomial(weights, batch_size, /*replacement=*/true, generator);  // (B)
  const auto rows = torch::bincount(choices, {}, num_sources);                   // (E)

  std::vector<torch::Tensor> xs, ys;
  for (std::int64_t e = 0; e < num_sources; ++e) {
    const std::int64_t count = rows[e].item<std::int64_t>();
    if (count == 0) continue;
    const auto batch = sources[e].get_lm_batch(count, context_length, generator);  // (c_e, T)
    xs.push_back(batch.x);
    ys.push_back(batch.y);
    example_counts[e] += count;
  }
  // Mix the sources' rows: a batch ordered by source would hand the optimizer grouped domains.
  const auto order = torch::randperm(batch_size, generator, torch::kLong);  // (B)
  return {torch::cat(xs).index_select(0, order.to(xs.front().device())),
          torch::cat(ys).index_select(0, order.to(ys.front().device()))};
}

}  // namespace g2c::midtraining
