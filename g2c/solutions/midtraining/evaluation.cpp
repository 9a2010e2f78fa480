// Reference solution for g2c/midtraining/evaluation.cpp: the loss on each domain.
#include "g2c/midtraining/evaluation.h"
#include "g2c/nn/device.h"
#include "g2c/pretraining/loss.h"

namespace g2c::midtraining {

Named<double> evaluate_domain_losses(g2c::nn::Module& model,
                                     const Named<g2c::pretraining::TokenSource>& domains,
                                     const DomainEvalOptions& options) {
  check_domain_evaluation(domains, options);
  const auto device = g2c::nn::resolve_device(options.device());
  model.to(device);
  torch::NoGradGuard no_grad;
  Named<double> losses;
  for (const auto& [name, source] : domains) {
    // A generator of its own: the same windows whichever other domains are evaluated.
    auto generator = at::make_generator<at::CPUGeneratorImpl>(options.seed());
    double total = 0.0;
    for (std::int64_t i = 0; i < options.eval_iters(); ++i) {
      const auto batch =
          source.get_lm_batch(options.batch_size(), options.context_length(), generator);
      const auto logits = model.forward(batch.x.to(device));  // (B, T, V)
      total += g2c::pretraining::lm_cross_entropy(logits, batch.y.to(device)).item<double>();
    }
    losses.emplace_back(name, total / static_cast<double>(options.eval_iters()));
  }
  return losses;
}

}  // namespace g2c::midtraining
