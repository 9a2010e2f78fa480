// Module 06 — cutting a token stream into training examples.
//
// An example is a context of N consecutive tokens and the token that follows it:
//   ids = [5, 1, 4, 2, 8], N = 2, start 1 -> x = [1, 4], y = 2.
#pragma once

#include <cstdint>
#include <optional>

#include "g2c/core/torch.h"

namespace g2c::lm {

struct Batch {
  torch::Tensor x;  // (B, N) int64 contexts
  torch::Tensor y;  // (B) int64 next tokens
};

/// `batch_size` examples with starts drawn uniformly from [0, n - N): x (B, N), y (B), on the
/// device of `ids`. ValueError when ids has fewer than context_length + 1 tokens.
Batch get_batch(const torch::Tensor& ids, std::int64_t context_length, std::int64_t batch_size,
                std::optional<at::Generator> generator = std::nullopt);

/// ValueError unless ids is a 1-D integer tensor of at least context_length + 1 tokens, which is
/// what one (context, next token) example needs. `what` names the argument in the message.
void check_stream(const torch::Tensor& ids, std::int64_t context_length, const char* what = "ids");

}  // namespace g2c::lm
