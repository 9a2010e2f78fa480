// Module 09b — from one long token stream to next-token training batches.
//
// Pretraining reads a corpus as a single 1-D stream of token ids. A training example is any window
// of T + 1 consecutive tokens: its first T are the input, its last T the targets, so target t is
// the token that follows input t:
//   ids = [5, 1, 4, 2, 8, 3], T = 3, start 1 -> x = [1, 4, 2], y = [4, 2, 8].
// Every position of a window is a prediction, so one (B, T) batch holds B·T next-token examples.
#pragma once

#include <cstdint>
#include <optional>

#include "g2c/core/torch.h"

namespace g2c::pretraining {

/// The two contiguous parts of a token stream.
struct TokenSplit {
  torch::Tensor train;  // ids[:split]
  torch::Tensor val;    // ids[split:]
};

/// Splits a 1-D stream at split = floor(n · train_fraction) into ids[:split] and ids[split:]
/// (views, not copies). Contiguous, not shuffled: the validation text is text the model never sees,
/// not windows interleaved with training windows. ValueError when ids is not 1-D, when
/// train_fraction is not strictly between 0 and 1, or when either part would be empty. Example:
/// split_token_stream(arange(10), 0.7) -> {arange(7), arange(7, 10)}.
TokenSplit split_token_stream(const torch::Tensor& ids, double train_fraction = 0.9);

/// A (B, T) batch of inputs and their next-token targets: y[b][t] is the token after x[b][t].
struct LMBatch {
  torch::Tensor x;  // (B, T) int64
  torch::Tensor y;  // (B, T) int64
};

/// A token stream that draws its own batches: a corpus too large to hold as one tensor (memory-
/// mapped shards on disk, say). get_lm_batch(stream, …) delegates to it.
class TokenStream {
 public:
  virtual ~TokenStream() = default;
  /// Number of tokens in the stream.
  virtual std::int64_t size() const = 0;
  /// B windows of T + 1 tokens, as get_lm_batch(ids, …) would draw them.
  virtual LMBatch get_lm_batch(std::int64_t batch_size, std::int64_t context_length,
                               std::optional<at::Generator> generator) = 0;
};

/// B windows with starts drawn uniformly from [0, n - T) with `generator` (the global CPU generator
/// when none): x[b] = ids[s : s+T], y[b] = ids[s+1 : s+T+1], both (B, T) int64 on the device of
/// ids. ValueError when ids is not a 1-D integer tensor, when it has n <= T tokens (a window needs
/// T + 1), or when batch_size or context_length is below 1.
/// Example: get_lm_batch(arange(100), 8, 5) -> x (8, 5), y = x + 1.
LMBatch get_lm_batch(const torch::Tensor& ids, std::int64_t batch_size, std::int64_t context_length,
                     std::optional<at::Generator> generator = std::nullopt);

/// Delegates to stream.get_lm_batch(batch_size, context_length, generator).
LMBatch get_lm_batch(TokenStream& stream, std::int64_t batch_size, std::int64_t context_length,
                     std::optional<at::Generator> generator = std::nullopt);

/// Where a trainer's batches come from: a 1-D tensor of token ids, or a TokenStream that draws its
/// own (a mixture of corpora, shards on disk). Either converts to it implicitly, so
/// trainer.train_step(split.train) and trainer.train_step(mixture) both read. A stream is held by
/// reference: it must outlive the source.
class TokenSource {
 public:
  TokenSource(const torch::Tensor& ids) : ids_(ids) {}    // NOLINT: implicit by design
  TokenSource(TokenStream& stream) : stream_(&stream) {}  // NOLINT: implicit by design
  /// The stream's or the tensor's get_lm_batch.
  LMBatch get_lm_batch(std::int64_t batch_size, std::int64_t context_length,
                       std::optional<at::Generator> generator = std::nullopt) const;
  /// Tokens in the source.
  std::int64_t size() const;

 private:
  torch::Tensor ids_;
  TokenStream* stream_ = nullptr;
};

/// Delegates to source.get_lm_batch(batch_size, context_length, generator).
LMBatch get_lm_batch(const TokenSource& source, std::int64_t batch_size,
                     std::int64_t context_length,
                     std::optional<at::Generator> generator = std::nullopt);

}  // namespace g2c::pretraining
