// Beyond module midtraining — your work: the loss on each domain.
#include "g2c/midtraining/evaluation.h"
#include "g2c/core/errors.h"
#include "g2c/nn/device.h"
#include "g2c/pretraining/loss.h"

namespace g2c::midtraining {

Named<double> evaluate_domain_losses(g2c::nn::Module& model,
                                     const Named<g2c::pretraining::TokenSource>& domains,
                                     const DomainEvalOptions& options) {
  // TODO: check_domain_evaluation(domains, options) first. Resolve the options' device
  // (g2c::nn::resolve_device), move the model there, and turn autograd off. For each domain, in
  // order: a fresh CPU generator seeded with options.seed() — one per domain, so adding a domain
  // does not move another's windows —, then eval_iters batches of (batch_size, context_length)
  // from the domain with that generator, each scored by lm_cross_entropy(model(x), y) on the
  // device. Return {name, the mean of its eval_iters losses} per domain, in the domains' order.
  // Operations: at::make_generator<at::CPUGeneratorImpl>(seed), get_lm_batch, lm_cross_entropy.
  // Hints, one step at a time: scripts/hint.sh midtraining evaluate_domain_losses
  throw g2c::todo("evaluate_domain_losses", "g2c/midtraining/evaluation.cpp", "midtraining");
}

}  // namespace g2c::midtraining
