// Module 16 — your work: one prompt through a model in this process.
#include <chrono>

#include "g2c/core/errors.h"
#include "g2c/inference/local.h"

namespace g2c::inference {

InferenceResult LocalTransformerBackend::complete(const std::string& prompt,
                                                  const CompletionOptions& options) {
  // TODO: options.max_new_tokens <= 0 -> ValueError. Encode the prompt with tokenizer_ (no ids ->
  // ValueError, before generating). Put the ids in a 1-D int64 tensor on model_->device(), then
  // time generate_(*model_, ids, max_new_tokens, GenerateOptions with the temperature, top_k,
  // top_p and eos_id_) with std::chrono::steady_clock, in milliseconds. The new ids are the
  // result's after the prompt's; decode them. Return InferenceResult(prompt, completion, prompt
  // ids, new ids, latency_ms, info_, {{"sampling", options.to_json()}, {"eos_id", eos_id_ or
  // null}}).
  // Hints, one step at a time: scripts/hint.sh 16 LocalTransformerBackend::complete
  throw g2c::todo("LocalTransformerBackend::complete", "g2c/inference/local.cpp", "16");
}

}  // namespace g2c::inference
