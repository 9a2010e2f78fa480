#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"
#include "g2c/transformer/block.h"

namespace g2c::transformer {

BlockImpl::BlockImpl(const BlockOptions& options_)
    : options(options_),
      embedding_dim(options_.embedding_dim()),
      num_heads(options_.num_heads()),
      hidden_dim(options_.hidden_dim() == 0 ? 4 * options_.embedding_dim() : options_.hidden_dim()),
      causal(options_.causal()) {
  if (embedding_dim <= 0 || num_heads <= 0 || hidden_dim <= 0) {
    throw ValueError(fmt::format(
        "Block needs embedding_dim > 0, num_heads > 0 and hidden_dim > 0 (0 for 4·D), got {}, {} "
        "and {}",
        embedding_dim, num_heads, options_.hidden_dim()));
  }
  reset();  // MultiHeadAttention checks that num_heads divides embedding_dim
}

void BlockImpl::reset() {
  ln1 = register_module("ln1", LayerNorm(embedding_dim));
  attn =
      register_module("attn", g2c::attention::MultiHeadAttention(embedding_dim, num_heads, causal));
  ln2 = register_module("ln2", LayerNorm(embedding_dim));
  ffn = register_module("ffn", FeedForward(embedding_dim, hidden_dim));
}

torch::Tensor BlockImpl::forward_cached(const torch::Tensor& x,
                                        g2c::attention::LayerKVCache& cache) {
  check_input(x);  // attn->forward_cached refuses T != 1 and a non-causal block
  auto stream = x + attn->forward_cached(ln1(x), cache);  // (B, 1, D)
  return stream + ffn(ln2(stream));                       // (B, 1, D)
}

void BlockImpl::check_input(const torch::Tensor& x) const {
  if (!x.defined() || x.dim() != 3 || x.size(2) != embedding_dim) {
    throw ValueError(fmt::format(
        "Block(embedding_dim={}) expects x of shape (B, T, D={}), got {}", embedding_dim,
        embedding_dim, x.defined() ? describe_shape(x, {"B", "T", "D"}) : "an undefined tensor"));
  }
}

void BlockImpl::pretty_print(std::ostream& stream) const {
  stream << "g2c::transformer::Block(embedding_dim=" << embedding_dim << ", num_heads=" << num_heads
         << ", hidden_dim=" << hidden_dim << ", causal=" << (causal ? "true" : "false") << ")";
}

}  // namespace g2c::transformer
