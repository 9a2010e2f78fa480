#include "exercises/common/tiny_lm.h"

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"

namespace g2c::exercises {

TinyAttentionLMImpl::TinyAttentionLMImpl(const TinyAttentionLMOptions& options_)
    : options(options_) {
  if (options.vocab_size() <= 0 || options.context_length() <= 0 || options.embedding_dim() <= 0 ||
      options.num_heads() < 0) {
    throw ValueError(
        fmt::format("TinyAttentionLM needs vocab_size, context_length and embedding_dim > 0 and "
                    "num_heads >= 0; got {}, {}, {} and {}",
                    options.vocab_size(), options.context_length(), options.embedding_dim(),
                    options.num_heads()));
  }
  reset();
}

void TinyAttentionLMImpl::reset() {
  const auto v = options.vocab_size(), t = options.context_length(), d = options.embedding_dim();
  token_embedding = register_module("token_embedding", g2c::embeddings::TokenEmbedding(v, d));
  position_embedding =
      register_module("position_embedding", g2c::embeddings::LearnedPositionalEmbedding(t, d));
  if (options.num_heads() == 0) {
    self_attention =
        register_module("attention", g2c::attention::SelfAttention(d, options.causal()));
  } else {
    multi_head_attention = register_module(
        "attention", g2c::attention::MultiHeadAttention(d, options.num_heads(), options.causal()));
  }
  head = register_module("head", g2c::nn::Linear(d, v));
}

void TinyAttentionLMImpl::check_ids(const torch::Tensor& ids) const {
  if (!ids.defined() || ids.dim() != 2 || ids.size(1) < 1 ||
      ids.size(1) > options.context_length() || ids.is_floating_point() ||
      ids.scalar_type() == torch::kBool) {
    throw ValueError(fmt::format(
        "TinyAttentionLM expects integer ids of shape (B, T) with 1 <= T <= {}, got {}",
        options.context_length(),
        ids.defined() ? describe_shape(ids, {"B", "T"}) + " " + c10::toString(ids.scalar_type())
                      : "an undefined tensor"));
  }
}

torch::Tensor TinyAttentionLMImpl::embed(const torch::Tensor& ids) {
  check_ids(ids);
  return token_embedding(ids) + position_embedding(ids.size(1));  // (B, T, D) + (T, D)
}

torch::Tensor TinyAttentionLMImpl::forward(const torch::Tensor& ids) {
  const auto x = embed(ids);                                                        // (B, T, D)
  const auto mixed = self_attention ? self_attention(x) : multi_head_attention(x);  // (B, T, D)
  return head(mixed);                                                               // (B, T, V)
}

torch::Tensor TinyAttentionLMImpl::attention_weights(const torch::Tensor& ids) {
  const auto x = embed(ids);
  return self_attention ? self_attention->attention_weights(x)         // (B, T, T)
                        : multi_head_attention->attention_weights(x);  // (B, H, T, T)
}

void TinyAttentionLMImpl::set_causal(bool causal) {
  if (self_attention) {
    self_attention->causal = causal;
  } else {
    multi_head_attention->causal = causal;
  }
}

bool TinyAttentionLMImpl::causal() const {
  return self_attention ? self_attention->causal : multi_head_attention->causal;
}

void TinyAttentionLMImpl::pretty_print(std::ostream& stream) const {
  stream << "g2c::exercises::TinyAttentionLM(vocab_size=" << options.vocab_size()
         << ", context_length=" << options.context_length()
         << ", embedding_dim=" << options.embedding_dim() << ", num_heads=" << options.num_heads()
         << ", causal=" << (causal() ? "true" : "false") << ")";
}

}  // namespace g2c::exercises
