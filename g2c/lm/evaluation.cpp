// Module 06 — your work: perplexity.
#include "g2c/lm/evaluation.h"

#include "g2c/core/errors.h"
#include "g2c/nn/losses.h"  // module 03's CrossEntropyLoss

namespace g2c::lm {

double perplexity(LanguageModelImpl& model, const torch::Tensor& ids, std::int64_t batch_size,
                  const std::string& device) {
  // TODO: check_stream(ids, N) (and batch_size >= 1); move the model to resolve_device(device);
  // without gradients, run every window (context ids[s:s+N], target ids[s+N]) in batches; sum
  // module 03's cross-entropy (in double) x batch size; return exp(total / number of windows).
  throw g2c::todo("perplexity", "g2c/lm/evaluation.cpp", "06");
}

}  // namespace g2c::lm
