// Beyond module midtraining — the loss of one model on several named domains, on windows that do
// not change between the models compared.
//
// Adaptation and retention are read as differences: the midtrained model's loss on code against
// the base's, and on Shakespeare against the base's. A difference means something only when both
// models saw the same windows, so every domain draws its eval_iters batches from a fresh generator
// seeded with `seed`: the same windows for every model, and adding a domain does not move the
// windows of another.
#pragma once

#include <cstdint>
#include <string>

#include "g2c/core/torch.h"
#include "g2c/midtraining/mixture.h"
#include "g2c/nn/module.h"
#include "g2c/pretraining/data.h"

namespace g2c::midtraining {

struct DomainEvalOptions {
  DomainEvalOptions(std::int64_t batch_size, std::int64_t context_length)
      : batch_size_(batch_size), context_length_(context_length) {}
  TORCH_ARG(std::int64_t, batch_size);
  TORCH_ARG(std::int64_t, context_length);
  TORCH_ARG(std::int64_t, eval_iters) = 20;  // batches averaged per domain
  TORCH_ARG(std::string, device) = "auto";   // g2c::nn::resolve_device's names
  TORCH_ARG(std::uint64_t, seed) = 0;        // every domain's generator starts from it
};

/// name -> the mean lm_cross_entropy of `model` over eval_iters batches of that domain, in the
/// domains' order, without autograd, the model moved to the options' device. ValueError (from
/// check_domain_evaluation) for no domains or a size below 1.
Named<double> evaluate_domain_losses(g2c::nn::Module& model,
                                     const Named<g2c::pretraining::TokenSource>& domains,
                                     const DomainEvalOptions& options);

/// ValueError for no domains, or a batch_size, context_length or eval_iters below 1, naming it.
void check_domain_evaluation(const Named<g2c::pretraining::TokenSource>& domains,
                             const DomainEvalOptions& options);

}  // namespace g2c::midtraining
