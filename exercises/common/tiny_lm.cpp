#include "exercises/common/tiny_lm.h"

#include <cmath>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"
#include "g2c/nn/losses.h"

namespace g2c::exercises {

TinyAttentionLMImpl::TinyAttentionLMImpl(const TinyAttentionLMOptions& options_)
    : options(options_) {
  const auto v = options.vocab_size(), t = options.context_length(), d = options.embedding_dim();
  if (v <= 0 || t <= 1 || d <= 0) {
    throw ValueError(
        fmt::format("TinyAttentionLM needs vocab_size > 0, context_length > 1, embedding_dim > 0; "
                    "got {}, {}, {}",
                    v, t, d));
  }
  const double bound = 1.0 / std::sqrt(static_cast<double>(d));  // as module 05's embeddings
  token_embedding =
      register_parameter("token_embedding", torch::empty({v, d}).uniform_(-bound, bound));
  position_embedding =
      register_parameter("position_embedding", torch::empty({t, d}).uniform_(-bound, bound));
  if (options.num_heads() == 0) {
    attention =
        register_module("attention", g2c::attention::SelfAttention(d, options.causal()).ptr());
  } else {
    attention = register_module(
        "attention",
        g2c::attention::MultiHeadAttention(d, options.num_heads(), options.causal()).ptr());
  }
  head = register_module("head", g2c::nn::Linear(d, v));
}

torch::Tensor TinyAttentionLMImpl::embed(const torch::Tensor& ids) {
  if (ids.dim() != 2 || ids.size(1) > options.context_length() ||
      ids.scalar_type() != torch::kLong) {
    throw ValueError(fmt::format("TinyAttentionLM expects int64 ids (B, T<={}), got {} {}",
                                 options.context_length(), c10::toString(ids.scalar_type()),
                                 describe_shape(ids, {"B", "T"})));
  }
  const std::int64_t length = ids.size(1);
  return token_embedding.index_select(0, ids.flatten())
             .view({ids.size(0), length, -1}) +    // (B, T, D)
         position_embedding.narrow(0, 0, length);  // + (T, D)
}

torch::Tensor TinyAttentionLMImpl::forward(const torch::Tensor& ids) {
  return head(attention->forward(embed(ids)));  // (B, T, D) -> (B, T, D) -> (B, T, V)
}

torch::Tensor TinyAttentionLMImpl::attention_weights(const torch::Tensor& ids) {
  const auto x = embed(ids);
  if (auto* single = dynamic_cast<g2c::attention::SelfAttentionImpl*>(attention.get())) {
    return single->attention_weights(x);  // (B, T, T)
  }
  return dynamic_cast<g2c::attention::MultiHeadAttentionImpl&>(*attention)
      .attention_weights(x);  // (B, H, T, T)
}

torch::Tensor TinyAttentionLMImpl::next_token_loss(const torch::Tensor& ids) {
  const auto logits = forward(ids);                               // (B, T, V)
  const auto predictions = logits.narrow(1, 0, ids.size(1) - 1);  // (B, T-1, V)
  const auto targets = ids.narrow(1, 1, ids.size(1) - 1);         // (B, T-1)
  return g2c::nn::CrossEntropyLoss()(predictions.reshape({-1, options.vocab_size()}),
                                     targets.reshape({-1}));
}

std::vector<std::int64_t> TinyAttentionLMImpl::generate(std::vector<std::int64_t> prompt,
                                                        std::int64_t count,
                                                        at::Generator& generator) {
  torch::NoGradGuard no_grad;
  if (prompt.empty()) throw ValueError("generate needs a prompt of at least one token");
  for (std::int64_t i = 0; i < count; ++i) {
    const auto window =
        std::min<std::int64_t>(static_cast<std::int64_t>(prompt.size()), options.context_length());
    const std::vector<std::int64_t> context(prompt.end() - window, prompt.end());
    const auto ids = torch::tensor(context, torch::kLong).unsqueeze(0).to(device());  // (1, T)
    const auto logits = forward(ids).select(1, window - 1).squeeze(0);                // (V)
    const auto probabilities = torch::softmax(logits.to(torch::kDouble), /*dim=*/-1).cpu();
    prompt.push_back(torch::multinomial(probabilities, 1, /*replacement=*/false, generator)
                         .item<std::int64_t>());
  }
  return prompt;
}

}  // namespace g2c::exercises

namespace g2c::exercises {

torch::Tensor sample_windows(const torch::Tensor& stream, std::int64_t batch, std::int64_t length,
                             at::Generator& generator) {
  if (stream.numel() < length) {
    throw ValueError(fmt::format("a stream of {} tokens is shorter than one window of {}",
                                 stream.numel(), length));
  }
  const auto starts =
      torch::randint(stream.numel() - length + 1, {batch}, generator, torch::kLong);  // (B)
  const auto offsets = torch::arange(length, torch::kLong);                           // (T)
  return stream.index({starts.unsqueeze(1) + offsets.unsqueeze(0)});                  // (B, T)
}

}  // namespace g2c::exercises
