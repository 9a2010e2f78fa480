#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"
#include "g2c/transformer/transformer_lm.h"

namespace g2c::transformer {

namespace {

std::int64_t resolved_hidden_dim(const TransformerLMOptions& options) {
  return options.hidden_dim() == 0 ? 4 * options.embedding_dim() : options.hidden_dim();
}

}  // namespace

std::int64_t parameter_count(const TransformerLMOptions& options) {
  const std::int64_t v = options.vocab_size(), d = options.embedding_dim(),
                     l = options.num_layers(), t = options.max_seq_len(),
                     h = resolved_hidden_dim(options);
  const std::int64_t attention = 4 * (d * d + d);       // q, k, v, out: W (D, D) and b (D)
  const std::int64_t feed_forward = 2 * d * h + h + d;  // fc1 (D, H) + (H), fc2 (H, D) + (D)
  const std::int64_t norms = 4 * d;                     // ln1, ln2: gamma and beta
  return v * d + t * d + l * (attention + feed_forward + norms) + 2 * d + v;
}

torch::Tensor embed_sequence(const torch::Tensor& ids, g2c::embeddings::TokenEmbedding& token_embed,
                             g2c::embeddings::LearnedPositionalEmbedding& pos_embed,
                             const char* model) {
  if (!ids.defined() || ids.dim() != 2) {
    throw ValueError(fmt::format("{} expects token ids of shape (B, T); got {}", model,
                                 ids.defined() ? describe_shape(ids) : "an undefined tensor"));
  }
  g2c::embeddings::check_ids(ids, fmt::format("{} ids", model).c_str(), token_embed->vocab_size,
                             "vocab_size");
  const std::int64_t length = ids.size(1);
  g2c::embeddings::check_seq_len(length, pos_embed->max_seq_len);
  return token_embed(ids) + pos_embed(length);  // (B, T, D)
}

torch::Tensor tied_logits(const torch::Tensor& x, LayerNorm& ln_final,
                          const g2c::embeddings::TokenEmbedding& token_embed,
                          const torch::Tensor& head_bias) {
  return torch::matmul(ln_final(x), token_embed->weight.t()) + head_bias;  // (B, T, V)
}

HeadBiasImpl::HeadBiasImpl(std::int64_t vocab_size_) : vocab_size(vocab_size_) {
  if (vocab_size <= 0) {
    throw ValueError(fmt::format("HeadBias needs vocab_size > 0, got {}", vocab_size));
  }
  reset();
}

void HeadBiasImpl::reset() {
  bias = register_parameter("bias", torch::zeros({vocab_size}));  // (V)
}

void HeadBiasImpl::pretty_print(std::ostream& stream) const {
  stream << "g2c::transformer::HeadBias(vocab_size=" << vocab_size << ")";
}

TransformerLMImpl::TransformerLMImpl(const TransformerLMOptions& options_)
    : options(options_),
      vocab_size(options_.vocab_size()),
      embedding_dim(options_.embedding_dim()),
      num_layers(options_.num_layers()),
      num_heads(options_.num_heads()),
      max_seq_len(options_.max_seq_len()),
      hidden_dim(resolved_hidden_dim(options_)) {
  if (vocab_size <= 0 || embedding_dim <= 0 || num_layers < 0 || num_heads <= 0 ||
      max_seq_len <= 0 || options_.hidden_dim() < 0) {
    throw ValueError(fmt::format(
        "TransformerLM needs positive vocab_size, embedding_dim, num_heads and max_seq_len, "
        "num_layers >= 0 (0: embeddings, final norm and head only) and hidden_dim >= 0 (0 for "
        "4·D); got vocab_size {}, embedding_dim {}, num_layers {}, num_heads {}, max_seq_len {} "
        "and hidden_dim {}",
        vocab_size, embedding_dim, num_layers, num_heads, max_seq_len, options_.hidden_dim()));
  }
  if (embedding_dim % num_heads != 0) {
    throw ValueError(fmt::format("embedding_dim (D={}) must be divisible by num_heads (H={})",
                                 embedding_dim, num_heads));
  }
  reset();
}

void TransformerLMImpl::reset() {
  token_embed =
      register_module("token_embed", g2c::embeddings::TokenEmbedding(vocab_size, embedding_dim));
  pos_embed = register_module(
      "pos_embed", g2c::embeddings::LearnedPositionalEmbedding(max_seq_len, embedding_dim));
  // A ModuleList registers the blocks as "blocks.0", "blocks.1", …; `blocks` keeps them typed.
  auto list = register_module("blocks", torch::nn::ModuleList());
  blocks.clear();
  for (std::int64_t l = 0; l < num_layers; ++l) {
    Block block(BlockOptions(embedding_dim, num_heads).hidden_dim(hidden_dim).causal(true));
    list->push_back(block);
    blocks.push_back(block);
  }
  ln_final = register_module("ln_final", LayerNorm(embedding_dim));
  head = register_module("head", HeadBias(vocab_size));
  head_bias = head->bias;
}

torch::Tensor TransformerLMImpl::hidden_states(const torch::Tensor& ids) {
  auto x = embed_sequence(ids, token_embed, pos_embed, "TransformerLM");  // (B, T, D)
  for (auto& block : blocks) x = block(x);                                // (B, T, D)
  return ln_final(x);                                                     // (B, T, D)
}

KVCache TransformerLMImpl::empty_kv_cache() const {
  if (num_layers == 0) {
    throw ValueError(
        "a TransformerLM with no blocks has no keys or values to cache: run forward() on the "
        "whole sequence instead");
  }
  return KVCache::empty(num_layers, /*capacity=*/max_seq_len);  // the most positions it can hold
}

std::int64_t TransformerLMImpl::check_cached_step(const torch::Tensor& ids,
                                                  const KVCache& cache) const {
  if (!ids.defined() || ids.dim() != 2 || ids.size(1) != 1) {
    throw ValueError(fmt::format(
        "forward_cached takes exactly one new token per sequence, ids of shape (B, T=1); got {}",
        ids.defined() ? describe_shape(ids, {"B", "T"}) : "an undefined tensor"));
  }
  if (cache.size() != num_layers) {
    throw ValueError(
        fmt::format("the cache has {} layers but the model has {} blocks; start with "
                    "model->empty_kv_cache()",
                    cache.size(), num_layers));
  }
  const std::int64_t position = cache.length();  // where this token sits in the sequence
  if (position >= max_seq_len) {
    throw ValueError(fmt::format(
        "the KV cache already holds {} positions, max_seq_len is {}: the position table has no "
        "row for another token",
        position, max_seq_len));
  }
  check_input(ids);
  return position;
}

torch::Tensor TransformerLMImpl::forward_cached(const torch::Tensor& ids, KVCache& cache) {
  const std::int64_t position = check_cached_step(ids, cache);  // where this token sits
  // subtle: the row of *this* position. pos_embed(1) would be row 0 at every step: the model would
  // still produce fluent-looking text while believing every token is the first one.
  const auto tok = token_embed(ids);                                  // (B, 1, D)
  const auto pos = pos_embed->weight.narrow(/*dim=*/0, position, 1);  // (1, D)
  auto x = tok + pos;                                                 // (B, 1, D)
  for (std::size_t l = 0; l < blocks.size(); ++l) {
    x = blocks[l]->forward_cached(x, cache.layers[l]);  // appends to layer l's cache
  }
  x = ln_final(x);                                               // (B, 1, D)
  return torch::matmul(x, token_embed->weight.t()) + head_bias;  // (B, 1, V), the tied head
}

void TransformerLMImpl::check_input(const torch::Tensor& ids) const {
  if (!ids.defined() || ids.dim() != 2) {
    throw ValueError(fmt::format("TransformerLM expects token ids of shape (B, T); got {}",
                                 ids.defined() ? describe_shape(ids) : "an undefined tensor"));
  }
  g2c::embeddings::check_ids(ids, "TransformerLM ids", vocab_size, "vocab_size");
}

void TransformerLMImpl::pretty_print(std::ostream& stream) const {
  stream << "g2c::transformer::TransformerLM(vocab_size=" << vocab_size
         << ", embedding_dim=" << embedding_dim << ", num_layers=" << num_layers
         << ", num_heads=" << num_heads << ", max_seq_len=" << max_seq_len
         << ", hidden_dim=" << hidden_dim << ")";
}

}  // namespace g2c::transformer
