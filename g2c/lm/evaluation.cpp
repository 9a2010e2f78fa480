// Module 06 — your work: perplexity.
#include "g2c/lm/evaluation.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/lm/batching.h"
#include "g2c/nn/device.h"
#include "g2c/nn/losses.h"  // module 03's CrossEntropyLoss

namespace g2c::lm {

double perplexity(LanguageModelImpl& model, const torch::Tensor& ids, std::int64_t batch_size,
                  const std::string& device) {
  // TODO: exp of the mean next-token cross-entropy over every window of the stream (N context ids,
  // then the target): all len - N of them, in batches of batch_size, each batch's mean loss
  // weighted by its size, summed in double; autograd off, on the resolved device. Check the stream
  // (check_stream) and refuse batch_size < 1 with a ValueError. Operations: arange-built window
  // indices, model.logits, module 03's CrossEntropyLoss, std::exp.
  // Hints, one step at a time: scripts/hint.sh 06 perplexity
  throw g2c::todo("perplexity", "g2c/lm/evaluation.cpp", "06");
}

}  // namespace g2c::lm
