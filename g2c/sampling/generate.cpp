// Module 11 — your work: the decoding step and the generation loop.
#include "g2c/sampling/generate.h"

#include <algorithm>

#include "g2c/core/errors.h"
#include "g2c/sampling/checks.h"

namespace g2c::sampling {

torch::Tensor sample_next_token(const torch::Tensor& logits, const torch::Tensor& history,
                                const GenerateOptions& options) {
  // TODO: One decoding step, logits (B, V) on the CPU -> next ids (B). Temperature 0 is greedy: the
  // argmax, no warper, no draw. Otherwise the warpers in order — repetition penalty, temperature,
  // top-k (if set), top-p (if set) — then softmax and one draw per row from the caller's generator
  // (so a seed gives the same text). Operations: argmax, softmax, multinomial.
  // Hints, one step at a time: scripts/hint.sh 11 sample_next_token
  throw g2c::todo("sample_next_token", "g2c/sampling/generate.cpp", "11");
}

torch::Tensor generate(g2c::transformer::TransformerLMImpl& model, const torch::Tensor& prompt_ids,
                       std::int64_t max_new_tokens, const GenerateOptions& options) {
  // TODO: Autoregressive generation of up to max_new_tokens after a (T) prompt, returning prompt +
  // new ids as a CPU int64 tensor: at each step the model sees the last max_seq_len ids at most (a
  // batch of one on its device), the logits of the last position go to the CPU, sample_next_token
  // draws the next id, it is appended; stop right after eos_id (kept). Autograd off for the whole
  // loop. Check the arguments first (check_generate_arguments).
  // Hints, one step at a time: scripts/hint.sh 11 generate
  throw g2c::todo("generate", "g2c/sampling/generate.cpp", "11");
}

}  // namespace g2c::sampling
