#include "g2c/linear_attention/hybrid.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"

namespace g2c::linear_attention {

namespace {

void check_kind(const std::string& kind, const std::string& where) {
  const auto& kinds = layer_kinds();
  if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) {
    throw ValueError(fmt::format("{} must be \"linear\" or \"full\", got \"{}\"", where, kind));
  }
}

std::int64_t tensor_bytes(const torch::Tensor& tensor) {
  return tensor.defined() ? tensor.numel() * static_cast<std::int64_t>(tensor.element_size()) : 0;
}

}  // namespace

HybridBlockImpl::HybridBlockImpl(std::int64_t embedding_dim_, std::int64_t num_heads_,
                                 const std::string& kind_, std::int64_t hidden_dim)
    : embedding_dim(embedding_dim_), num_heads(num_heads_), kind(kind_) {
  check_kind(kind, "HybridBlock's kind");
  ln1 = register_module("ln1", g2c::transformer::LayerNorm(embedding_dim));
  if (kind == "full") {
    full_attn = g2c::attention::MultiHeadAttention(embedding_dim, num_heads, /*causal=*/true);
    attn = register_module("attn", full_attn.ptr());
  } else {
    linear_attn = LinearAttention(embedding_dim, num_heads);
    attn = register_module("attn", linear_attn.ptr());
  }
  ln2 = register_module("ln2", g2c::transformer::LayerNorm(embedding_dim));
  ffn = register_module("ffn", g2c::transformer::FeedForward(embedding_dim, hidden_dim));
}

torch::Tensor HybridBlockImpl::forward(const torch::Tensor& x) {
  if (!x.defined() || x.dim() != 3 || x.size(2) != embedding_dim) {
    throw ValueError(
        fmt::format("HybridBlock expects x of shape (B, T, D={}); got {}", embedding_dim,
                    x.defined() ? describe_shape(x, {"B", "T", "D"}) : "an undefined tensor"));
  }
  const auto normed = ln1(x);
  const auto h = x + (full_attn ? full_attn(normed) : linear_attn(normed));  // (B, T, D)
  return h + ffn(ln2(h));                                                    // (B, T, D)
}

torch::Tensor HybridBlockImpl::forward_step(const torch::Tensor& x,
                                            g2c::attention::LayerKVCache& cache,
                                            std::optional<LinearAttentionState>& state) {
  const auto normed = ln1(x);  // (B, 1, D)
  torch::Tensor mixed;
  if (full_attn) {
    mixed = full_attn->forward_cached(normed, cache);  // (B, 1, D)
  } else {
    auto [out, next] = linear_attn->step(normed.squeeze(1), state);  // (B, D)
    state = std::move(next);
    mixed = out.unsqueeze(1);
  }
  const auto h = x + mixed;
  return h + ffn(ln2(h));
}

void HybridBlockImpl::pretty_print(std::ostream& stream) const {
  stream << "g2c::linear_attention::HybridBlock(embedding_dim=" << embedding_dim
         << ", num_heads=" << num_heads << ", kind=" << kind << ")";
}

std::int64_t HybridState::bytes() const {
  std::int64_t total = 0;
  for (const auto& cache : caches) total += tensor_bytes(cache.k) + tensor_bytes(cache.v);
  for (const auto& state : states) {
    if (state) total += tensor_bytes(state->S) + tensor_bytes(state->z);
  }
  return total;
}

HybridTransformerLMImpl::HybridTransformerLMImpl(std::int64_t vocab_size_,
                                                 std::int64_t embedding_dim_,
                                                 std::vector<std::string> layer_pattern_,
                                                 std::int64_t num_heads_, std::int64_t max_seq_len_,
                                                 std::int64_t hidden_dim_)
    : vocab_size(vocab_size_),
      embedding_dim(embedding_dim_),
      layer_pattern(std::move(layer_pattern_)),
      num_layers(static_cast<std::int64_t>(layer_pattern.size())),
      num_heads(num_heads_),
      max_seq_len(max_seq_len_),
      hidden_dim(hidden_dim_ == 0 ? 4 * embedding_dim_ : hidden_dim_) {
  if (layer_pattern.empty()) {
    throw ValueError(
        "HybridTransformerLM's layer_pattern must have at least one entry, e.g. {\"linear\", "
        "\"linear\", \"linear\", \"full\"}");
  }
  for (std::size_t l = 0; l < layer_pattern.size(); ++l) {
    check_kind(layer_pattern[l], fmt::format("layer_pattern entry {}", l));
  }
  if (vocab_size < 1 || embedding_dim < 1 || num_heads < 1 || max_seq_len < 1) {
    throw ValueError(fmt::format(
        "HybridTransformerLM needs vocab_size, embedding_dim, num_heads and max_seq_len >= 1, got "
        "{}, {}, {} and {}",
        vocab_size, embedding_dim, num_heads, max_seq_len));
  }
  token_embed =
      register_module("token_embed", g2c::embeddings::TokenEmbedding(vocab_size, embedding_dim));
  pos_embed = register_module(
      "pos_embed", g2c::embeddings::LearnedPositionalEmbedding(max_seq_len, embedding_dim));
  auto list = register_module("blocks", torch::nn::ModuleList());
  for (const auto& kind : layer_pattern) {
    HybridBlock block(embedding_dim, num_heads, kind, hidden_dim);
    list->push_back(block);
    blocks.push_back(block);
  }
  ln_final = register_module("ln_final", g2c::transformer::LayerNorm(embedding_dim));
  head = register_module("head", g2c::transformer::HeadBias(vocab_size));
  head_bias = head->bias;
}

torch::Tensor HybridTransformerLMImpl::forward(const torch::Tensor& ids) {
  auto x = g2c::transformer::embed_sequence(ids, token_embed, pos_embed,
                                            "HybridTransformerLM");           // (B, T, D)
  for (auto& block : blocks) x = block(x);                                    // (B, T, D)
  return g2c::transformer::tied_logits(x, ln_final, token_embed, head_bias);  // (B, T, V)
}

HybridState HybridTransformerLMImpl::empty_state() const {
  HybridState state;
  state.caches.resize(blocks.size());
  for (auto& cache : state.caches) cache.capacity = max_seq_len;
  state.states.resize(blocks.size());
  return state;
}

torch::Tensor HybridTransformerLMImpl::forward_step(const torch::Tensor& ids, HybridState& state) {
  if (!ids.defined() || ids.dim() != 2 || ids.size(1) != 1) {
    throw ValueError(fmt::format(
        "forward_step takes exactly one new token per sequence, ids of shape (B, T=1); got {}",
        ids.defined() ? describe_shape(ids, {"B", "T"}) : "an undefined tensor"));
  }
  if (state.caches.size() != blocks.size() || state.states.size() != blocks.size()) {
    throw ValueError(fmt::format(
        "the state has {} caches and {} recurrent states but the model has {} layers; start with "
        "model->empty_state()",
        state.caches.size(), state.states.size(), blocks.size()));
  }
  if (state.position >= max_seq_len) {
    throw ValueError(fmt::format(
        "the state already holds {} positions, max_seq_len is {}: the position table has no row "
        "for another token",
        state.position, max_seq_len));
  }
  g2c::embeddings::check_ids(ids, "HybridTransformerLM ids", vocab_size, "vocab_size");
  // The row of this position, as module 09's forward_cached reads it.
  auto x = token_embed(ids) + pos_embed->weight.narrow(0, state.position, 1);  // (B, 1, D)
  for (std::size_t l = 0; l < blocks.size(); ++l) {
    x = blocks[l]->forward_step(x, state.caches[l], state.states[l]);  // (B, 1, D)
  }
  state.position += 1;
  return g2c::transformer::tied_logits(x, ln_final, token_embed, head_bias);  // (B, 1, V)
}

std::int64_t HybridTransformerLMImpl::parameter_count() const {
  std::int64_t total = 0;
  for (const auto& p : parameters()) total += p.numel();
  return total;
}

void HybridTransformerLMImpl::pretty_print(std::ostream& stream) const {
  stream << "g2c::linear_attention::HybridTransformerLM(vocab_size=" << vocab_size
         << ", embedding_dim=" << embedding_dim << ", layer_pattern=["
         << fmt::format("{}", fmt::join(layer_pattern, ", ")) << "], num_heads=" << num_heads
         << ", max_seq_len=" << max_seq_len << ", hidden_dim=" << hidden_dim << ")";
}

}  // namespace g2c::linear_attention
