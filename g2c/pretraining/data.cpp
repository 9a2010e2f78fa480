#include "g2c/pretraining/data.h"

#include <cmath>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"

namespace g2c::pretraining {

namespace {

bool is_integer_ids(const torch::Tensor& ids) {
  return !ids.is_floating_point() && !ids.is_complex() && ids.scalar_type() != torch::kBool;
}

}  // namespace

TokenSplit split_token_stream(const torch::Tensor& ids, double train_fraction) {
  if (!ids.defined() || ids.dim() != 1) {
    throw ValueError(fmt::format(
        "split_token_stream expects a 1-D tensor of token ids, got {}; flatten it first "
        "(ids.reshape(-1))",
        ids.defined() ? describe_shape(ids) : "an undefined tensor"));
  }
  if (!(train_fraction > 0.0 && train_fraction < 1.0)) {
    throw ValueError(fmt::format(
        "train_fraction must be between 0 and 1 (exclusive), got {}; 0.9 keeps 90% for training",
        train_fraction));
  }
  const auto n = ids.size(0);
  const auto split = static_cast<std::int64_t>(std::floor(static_cast<double>(n) * train_fraction));
  if (split <= 0 || split >= n) {
    throw ValueError(
        fmt::format("split_token_stream of {} tokens at train_fraction {} leaves an empty {} split "
                    "(split index {}); use a longer stream or a fraction closer to 0.5",
                    n, train_fraction, split <= 0 ? "train" : "validation", split));
  }
  return {ids.slice(/*dim=*/0, 0, split), ids.slice(/*dim=*/0, split, n)};
}

LMBatch get_lm_batch(const torch::Tensor& ids, std::int64_t batch_size, std::int64_t context_length,
                     std::optional<at::Generator> generator) {
  if (batch_size < 1 || context_length < 1) {
    throw ValueError(
        fmt::format("get_lm_batch needs batch_size >= 1 and context_length >= 1, got {} and {}",
                    batch_size, context_length));
  }
  if (!ids.defined() || ids.dim() != 1 || !is_integer_ids(ids)) {
    throw ValueError(fmt::format("get_lm_batch expects a 1-D integer tensor of token ids, got {}",
                                 ids.defined()
                                     ? describe_shape(ids) + " " + c10::toString(ids.scalar_type())
                                     : "an undefined tensor"));
  }
  const auto n = ids.size(0);
  if (n <= context_length) {
    throw ValueError(fmt::format(
        "get_lm_batch needs at least context_length + 1 = {} tokens (a window of T inputs and the "
        "token after the last), got {}; use a shorter context_length or a longer stream",
        context_length + 1, n));
  }
  // Starts in [0, n - T): the window s … s+T (inclusive) always fits.
  const auto starts = torch::randint(0, n - context_length, {batch_size}, generator,
                                     torch::TensorOptions().dtype(torch::kLong));  // (B)
  const auto offsets = torch::arange(context_length + 1, torch::kLong);            // (T + 1)
  const auto windows =
      ids.index({(starts.unsqueeze(1) + offsets).to(ids.device())}).to(torch::kLong);  // (B, T+1)
  return {windows.slice(/*dim=*/1, 0, context_length),
          windows.slice(/*dim=*/1, 1, context_length + 1)};
}

LMBatch get_lm_batch(TokenStream& stream, std::int64_t batch_size, std::int64_t context_length,
                     std::optional<at::Generator> generator) {
  return stream.get_lm_batch(batch_size, context_length, std::move(generator));
}

LMBatch TokenSource::get_lm_batch(std::int64_t batch_size, std::int64_t context_length,
                                  std::optional<at::Generator> generator) const {
  if (stream_) return stream_->get_lm_batch(batch_size, context_length, std::move(generator));
  return g2c::pretraining::get_lm_batch(ids_, batch_size, context_length, std::move(generator));
}

std::int64_t TokenSource::size() const {
  return stream_ ? stream_->size() : (ids_.defined() ? ids_.numel() : 0);
}

LMBatch get_lm_batch(const TokenSource& source, std::int64_t batch_size,
                     std::int64_t context_length, std::optional<at::Generator> generator) {
  return source.get_lm_batch(batch_size, context_length, std::move(generator));
}

}  // namespace g2c::pretraining
