// Beyond module midtraining, implemented for you: the evaluator's checks.
#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/midtraining/evaluation.h"

namespace g2c::midtraining {

void check_domain_evaluation(const Named<g2c::pretraining::TokenSource>& domains,
                             const DomainEvalOptions& options) {
  if (domains.empty()) {
    throw ValueError("evaluate_domain_losses needs at least one domain (a name and its tokens)");
  }
  for (const auto& [name, value] : {std::pair{"batch_size", options.batch_size()},
                                    std::pair{"context_length", options.context_length()},
                                    std::pair{"eval_iters", options.eval_iters()}}) {
    if (value < 1) {
      throw ValueError(fmt::format("evaluate_domain_losses: {} must be >= 1, got {}", name, value));
    }
  }
}

}  // namespace g2c::midtraining
