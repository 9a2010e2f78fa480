// Module 16 — your work: one prompt through a model in this process.
#include <chrono>

#include "g2c/core/errors.h"
#include "g2c/inference/local.h"

namespace g2c::inference {

InferenceResult LocalTransformerBackend::complete(const std::string& prompt,
                                                  const CompletionOptions& options) {
  // TODO: One prompt through the model in this process: encode, generate while a clock watches,
  // keep only what the model added, decode. In order: ValueError for max_new_tokens <= 0, then
  // for a prompt that tokenizer_ encodes to no ids (generate_ is never called). The prompt ids go
  // in as a (T) int64 tensor on model_->device(); generate_(*model_, ids, max_new_tokens, …) takes
  // a g2c::sampling::GenerateOptions with options' temperature, top_k, top_p and eos_id_, and
  // returns (T + n) ids: the completion is the decode of the n new ones, never the prompt. Time
  // the call with std::chrono::steady_clock, in ms. The result holds both counts, the latency,
  // info_ and the metadata {"sampling": options.to_json(), "eos_id": eos_id_ or null}.
  // Hints, one step at a time: scripts/hint.sh 16 LocalTransformerBackend::complete
  throw g2c::todo("LocalTransformerBackend::complete", "g2c/inference/local.cpp", "16");
}

}  // namespace g2c::inference
