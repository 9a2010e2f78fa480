#include "g2c/moe/model.h"

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"
#include "g2c/moe/sorted_dispatch.h"

namespace g2c::moe {

MoEBlockImpl::MoEBlockImpl(std::int64_t embedding_dim_, std::int64_t num_heads,
                           std::int64_t num_experts, std::int64_t top_k, std::int64_t hidden_dim,
                           bool causal, bool sorted_dispatch)
    : embedding_dim(embedding_dim_) {
  ln1 = register_module("ln1", g2c::transformer::LayerNorm(embedding_dim));
  attn =
      register_module("attn", g2c::attention::MultiHeadAttention(embedding_dim, num_heads, causal));
  ln2 = register_module("ln2", g2c::transformer::LayerNorm(embedding_dim));
  moe_ffn = register_module(
      "moe_ffn", sorted_dispatch
                     ? sorted_moe_feed_forward(embedding_dim, num_experts, top_k, hidden_dim)
                     : MoEFeedForward(embedding_dim, num_experts, top_k, hidden_dim));
}

torch::Tensor MoEBlockImpl::forward(const torch::Tensor& x) {
  if (!x.defined() || x.dim() != 3 || x.size(2) != embedding_dim) {
    throw ValueError(
        fmt::format("MoEBlock expects x of shape (B, T, D={}); got {}", embedding_dim,
                    x.defined() ? describe_shape(x, {"B", "T", "D"}) : "an undefined tensor"));
  }
  const auto h = x + attn(ln1(x));  // (B, T, D)
  return h + moe_ffn(ln2(h));       // (B, T, D)
}

MoETransformerLMImpl::MoETransformerLMImpl(std::int64_t vocab_size_, std::int64_t embedding_dim_,
                                           std::int64_t num_layers_, std::int64_t num_heads_,
                                           std::int64_t max_seq_len_, std::int64_t num_experts_,
                                           std::int64_t top_k_, std::int64_t hidden_dim_,
                                           bool sorted_dispatch)
    : vocab_size(vocab_size_),
      embedding_dim(embedding_dim_),
      num_layers(num_layers_),
      num_heads(num_heads_),
      max_seq_len(max_seq_len_),
      num_experts(num_experts_),
      top_k(top_k_),
      hidden_dim(hidden_dim_ == 0 ? 4 * embedding_dim_ : hidden_dim_) {
  if (vocab_size < 1 || embedding_dim < 1 || num_layers < 1 || num_heads < 1 || max_seq_len < 1) {
    throw ValueError(fmt::format(
        "MoETransformerLM needs vocab_size, embedding_dim, num_layers, num_heads and max_seq_len "
        ">= 1, got {}, {}, {}, {} and {}",
        vocab_size, embedding_dim, num_layers, num_heads, max_seq_len));
  }
  token_embed =
      register_module("token_embed", g2c::embeddings::TokenEmbedding(vocab_size, embedding_dim));
  pos_embed = register_module(
      "pos_embed", g2c::embeddings::LearnedPositionalEmbedding(max_seq_len, embedding_dim));
  auto list = register_module("blocks", torch::nn::ModuleList());
  for (std::int64_t l = 0; l < num_layers; ++l) {
    MoEBlock block(embedding_dim, num_heads, num_experts, top_k, hidden_dim, /*causal=*/true,
                   sorted_dispatch);
    list->push_back(block);
    blocks.push_back(block);
  }
  ln_final = register_module("ln_final", g2c::transformer::LayerNorm(embedding_dim));
  head = register_module("head", g2c::transformer::HeadBias(vocab_size));
  head_bias = head->bias;
}

torch::Tensor MoETransformerLMImpl::forward(const torch::Tensor& ids) {
  auto x = g2c::transformer::embed_sequence(ids, token_embed, pos_embed,
                                            "MoETransformerLM");              // (B, T, D)
  for (auto& block : blocks) x = block(x);                                    // (B, T, D)
  return g2c::transformer::tied_logits(x, ln_final, token_embed, head_bias);  // (B, T, V)
}

torch::Tensor MoETransformerLMImpl::load_balancing_loss() {
  std::vector<torch::Tensor> losses;
  for (auto& block : blocks) losses.push_back(block->moe_ffn->load_balancing_loss());
  return torch::stack(losses).mean();
}

std::int64_t MoETransformerLMImpl::total_parameter_count() const {
  std::int64_t total = 0;
  for (const auto& p : parameters()) total += p.numel();
  return total;
}

std::int64_t MoETransformerLMImpl::active_parameter_count() const {
  const std::int64_t per_expert = blocks.front()->moe_ffn->expert_parameter_count();
  return total_parameter_count() - num_layers * (num_experts - top_k) * per_expert;
}

void MoETransformerLMImpl::pretty_print(std::ostream& stream) const {
  stream << "g2c::moe::MoETransformerLM(vocab_size=" << vocab_size
         << ", embedding_dim=" << embedding_dim << ", num_layers=" << num_layers
         << ", num_heads=" << num_heads << ", max_seq_len=" << max_seq_len
         << ", num_experts=" << num_experts << ", top_k=" << top_k << ", hidden_dim=" << hidden_dim
         << ")";
}

}  // namespace g2c::moe
