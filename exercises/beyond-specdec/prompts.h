// What the specdec exercises share: prompts cut from TinyShakespeare's held-out text and ids read
// back as a vector, so that the programs compare outputs token for token.
#pragma once

#include <cstdint>
#include <vector>

#include <torch/torch.h>

#include "exercises/common/data.h"
#include "g2c/pretraining/data.h"
#include "g2c/sampling/text_generation.h"

namespace g2c::exercises {

/// A 1-D id tensor (any device) as a vector.
inline std::vector<std::int64_t> id_vector(const torch::Tensor& ids) {
  const auto flat = ids.to(torch::kCPU, torch::kLong).contiguous();
  return {flat.data_ptr<std::int64_t>(), flat.data_ptr<std::int64_t>() + flat.numel()};
}

/// `count` prompts of `length` ids each from the held-out tenth of module 10's text (the first
/// 1,000,000 characters of TinyShakespeare, split 90/10 as module 12 splits it), encoded by
/// `model`'s tokenizer, at starts drawn from a generator seeded `seed`.
inline std::vector<torch::Tensor> held_out_prompts(const g2c::sampling::TextModel& model,
                                                   std::int64_t count, std::int64_t length,
                                                   std::uint64_t seed) {
  const auto text = load_tinyshakespeare().substr(0, 1'000'000);
  const auto held_out = g2c::pretraining::split_token_stream(model.encode(text), 0.9).val;
  auto generator = at::make_generator<at::CPUGeneratorImpl>(seed);
  const auto starts = torch::randint(held_out.numel() - length, {count}, generator,
                                     torch::TensorOptions().dtype(torch::kLong));
  std::vector<torch::Tensor> prompts;
  for (std::int64_t p = 0; p < count; ++p) {
    prompts.push_back(held_out.narrow(0, starts[p].item<std::int64_t>(), length));
  }
  return prompts;
}

}  // namespace g2c::exercises
