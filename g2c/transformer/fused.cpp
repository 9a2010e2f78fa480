#include "g2c/transformer/fused.h"

#include <memory>
#include <optional>
#include <typeinfo>

#include <fmt/format.h>

#include "g2c/core/errors.h"

namespace g2c::transformer {

namespace {

/// The course's Linear, y = x @ W + b with W (in, out), as one addmm over all leading positions:
/// (…, in) -> (…, out).
torch::Tensor linear(g2c::nn::LinearImpl& layer, const torch::Tensor& x) {
  // A subclass of Linear computes something else from the same W and b (module 13b's LoRALinear
  // adds its adapter's delta until it is merged): it runs its own forward, or reading W and b here
  // would silently drop what it adds.
  if (typeid(layer) != typeid(g2c::nn::LinearImpl)) return layer.forward(x);
  auto sizes = x.sizes().vec();
  // (N, in), N = product of the leading dims; a view when x is contiguous (one operation, not two)
  const auto rows = x.is_contiguous() ? x.view({-1, x.size(-1)}) : x.reshape({-1, x.size(-1)});
  sizes.back() = layer.W.size(1);
  return torch::addmm(layer.b, rows, layer.W).view(sizes);  // (N, out) -> (…, out)
}

torch::Tensor layer_norm(const LayerNormImpl& norm, const torch::Tensor& x) {
  return torch::layer_norm(x, {norm.embedding_dim}, norm.gamma, norm.beta, norm.eps);  // (…, D)
}

/// x (B, T, D) -> (B, T, D): module 08's multi-head attention with the fused kernel. With a
/// cache, x holds the newest positions: their keys and values are appended, and each attends over
/// the cached past and the new positions up to itself (one new position: everything, no mask).
torch::Tensor attention(g2c::attention::MultiHeadAttentionImpl& attn, const torch::Tensor& x,
                        g2c::attention::LayerKVCache* cache = nullptr) {
  const auto batch = x.size(0), length = x.size(1);
  const std::int64_t past = cache != nullptr ? cache->length() : 0;
  auto split = [&](const torch::Tensor& t) {  // (B, T, D) -> (B, H, T, d)
    // One position: (B, 1, H, d) and (B, H, 1, d) are the same numbers in the same order, so a
    // view does what the transpose does, in one operation instead of two.
    if (length == 1) return t.view({batch, attn.num_heads, 1, attn.head_dim});
    return t.view({batch, length, attn.num_heads, attn.head_dim}).transpose(1, 2);
  };
  const auto q = split(linear(*attn.q_proj, x));
  auto k = split(linear(*attn.k_proj, x));
  auto v = split(linear(*attn.v_proj, x));
  if (cache != nullptr) {
    cache->append(k, v);
    k = cache->k;  // (B, H, T_past + 1, d)
    v = cache->v;
  }
  // Several new positions behind a cached past: new position i (absolute past + i) may read keys
  // 0 .. past + i. (T, past + T), true = may attend (the fused kernel's convention).
  std::optional<torch::Tensor> allowed;
  if (cache != nullptr && length > 1) {
    const auto opts = torch::TensorOptions().dtype(torch::kLong).device(x.device());
    allowed = torch::arange(past + length, opts).unsqueeze(0) <=
              (torch::arange(length, opts) + past).unsqueeze(1);
  }
  // softmax(Q Kᵀ / √d, causally masked over a whole sequence) V; the default scale is 1/√d.
  const auto mixed = at::scaled_dot_product_attention(
      q, k, v, allowed, /*dropout_p=*/0.0,
      /*is_causal=*/attn.causal && cache == nullptr);  // (B, H, T, d)
  const auto merged = length == 1 && mixed.is_contiguous()
                          ? mixed.view({batch, 1, attn.embedding_dim})  // the same, see split
                          : mixed.transpose(1, 2).contiguous().view(
                                {batch, length, attn.embedding_dim});  // (B, T, D)
  return linear(*attn.out_proj, merged);
}

/// The feed-forward half of a block: h + fc2(gelu(fc1(ln2(h)))), (B, T, D) -> (B, T, D).
torch::Tensor feed_forward(BlockImpl& block, const torch::Tensor& h) {
  const auto hidden = torch::gelu(linear(*block.ffn->fc1, layer_norm(*block.ln2, h)),
                                  /*approximate=*/"none");  // (B, T, 4·D), exact erf GELU
  return h + linear(*block.ffn->fc2, hidden);               // (B, T, D)
}

}  // namespace

torch::Tensor fused_block_forward(BlockImpl& block, const torch::Tensor& x) {
  block.check_input(x);
  const auto h = x + attention(*block.attn, layer_norm(*block.ln1, x));  // (B, T, D)
  return feed_forward(block, h);
}

torch::Tensor fused_block_forward_cached(BlockImpl& block, const torch::Tensor& x,
                                         g2c::attention::LayerKVCache& cache) {
  block.check_input(x);
  if (x.size(1) != 1 || !block.causal) {
    return block.forward_cached(x, cache);  // the lesson's path says what is wrong
  }
  const auto h = x + attention(*block.attn, layer_norm(*block.ln1, x), &cache);  // (B, 1, D)
  return feed_forward(block, h);
}

torch::Tensor fused_forward_extend(TransformerLMImpl& model, const torch::Tensor& ids,
                                   KVCache& cache) {
  model.check_input(ids);
  if (ids.size(1) < 1) {
    throw ValueError("fused_forward_extend needs at least one new position, ids (B, T_new >= 1)");
  }
  if (cache.size() != model.num_layers) {
    throw ValueError(
        fmt::format("the cache has {} layers but the model has {} blocks; start with "
                    "model->empty_kv_cache()",
                    cache.size(), model.num_layers));
  }
  const std::int64_t start = cache.length(), added = ids.size(1);
  if (start + added > model.max_seq_len) {
    throw ValueError(fmt::format(
        "fused_forward_extend: the cache holds {} positions and {} more would pass max_seq_len {}",
        start, added, model.max_seq_len));
  }
  auto x = torch::embedding(model.token_embed->weight, ids) +
           model.pos_embed->weight.narrow(/*dim=*/0, start, added);  // (B, T_new, D)
  for (std::size_t l = 0; l < model.blocks.size(); ++l) {
    auto& block = *model.blocks[l];
    const auto h = x + attention(*block.attn, layer_norm(*block.ln1, x), &cache.layers[l]);
    x = feed_forward(block, h);  // (B, T_new, D)
  }
  x = layer_norm(*model.ln_final, x);                                   // (B, T_new, D)
  return torch::linear(x, model.token_embed->weight, model.head_bias);  // (B, T_new, V)
}

torch::Tensor FusedTransformerLMImpl::forward(const torch::Tensor& ids) {
  check_input(ids);
  const std::int64_t length = ids.size(1);
  g2c::embeddings::check_seq_len(length, max_seq_len);
  auto x = torch::embedding(token_embed->weight, ids) +
           pos_embed->weight.narrow(/*dim=*/0, /*start=*/0, length);  // (B, T, D) + (T, D)
  for (auto& block : blocks) x = fused_block_forward(*block, x);      // (B, T, D)
  x = layer_norm(*ln_final, x);                                       // (B, T, D)
  // The tied head: x @ token_embedᵀ + bias, (B, T, D) -> (B, T, V).
  return torch::linear(x, token_embed->weight, head_bias);
}

torch::Tensor FusedTransformerLMImpl::forward_cached(const torch::Tensor& ids, KVCache& cache) {
  const std::int64_t position = check_cached_step(ids, cache);  // where this token sits
  auto x = torch::embedding(token_embed->weight, ids) +
           pos_embed->weight[position];  // (B, 1, D) + (D): the row of this position
  for (std::size_t l = 0; l < blocks.size(); ++l) {
    x = fused_block_forward_cached(*blocks[l], x, cache.layers[l]);  // appends to layer l's cache
  }
  x = layer_norm(*ln_final, x);                             // (B, 1, D)
  return torch::linear(x, token_embed->weight, head_bias);  // (B, 1, V), the tied head
}

void FusedTransformerLMImpl::pretty_print(std::ostream& stream) const {
  stream << "g2c::transformer::FusedTransformerLM(vocab_size=" << vocab_size
         << ", embedding_dim=" << embedding_dim << ", num_layers=" << num_layers
         << ", num_heads=" << num_heads << ", max_seq_len=" << max_seq_len
         << ", hidden_dim=" << hidden_dim << ")";
}

TransformerLM fused_transformer_lm(const TransformerLMOptions& options) {
  // Through the base pointer: the handle's templated constructor would take a derived pointer for
  // constructor arguments.
  const std::shared_ptr<TransformerLMImpl> impl = std::make_shared<FusedTransformerLMImpl>(options);
  return TransformerLM(impl);
}

}  // namespace g2c::transformer
