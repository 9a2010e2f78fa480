// Other ways to wire a transformer block, for the module 09 experiments. Each variant runs on an
// ordinary TransformerLM's own parameters (its ln1, attn, ln2, ffn per block, the embeddings,
// ln_final and the tied head), so every variant starts from exactly the same weights and only the
// wiring differs:
//
//   pre_norm      x = x + attn(ln1(x));  x = x + ffn(ln2(x))     the course's Block (your forward)
//   post_norm     x = ln1(x + attn(x));  x = ln2(x + ffn(x))     the 2017 paper's order
//   no_residual   x = attn(ln1(x));      x = ffn(ln2(x))         no skip connections
//   no_norm       x = x + attn(x);       x = x + ffn(x)          no LayerNorm inside the blocks
//
// ln_final stays in every variant (as in the Python edition, only the blocks are swapped).
// WiredTransformerLM is a model with its wiring, as the exercises' training loop takes it.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "g2c/nn/module.h"
#include "g2c/transformer/transformer_lm.h"

namespace g2c::exercises::toy {

enum class Wiring { pre_norm, post_norm, no_residual, no_norm };

/// "pre_norm", "post_norm", "no_residual", "no_norm".
std::string wiring_name(Wiring wiring);
/// The inverse; ValueError listing the four names for anything else.
Wiring parse_wiring(const std::string& name);

/// One block with the given wiring: x (B, T, D) -> (B, T, D). pre_norm calls block.forward.
torch::Tensor block_forward(g2c::transformer::BlockImpl& block, const torch::Tensor& x,
                            Wiring wiring);

/// The whole model with every block wired the given way: ids (B, T) -> logits (B, T, V).
/// pre_norm calls model.forward.
torch::Tensor lm_forward(g2c::transformer::TransformerLMImpl& model, const torch::Tensor& ids,
                         Wiring wiring);

/// A TransformerLM run with every block wired one way, as a g2c::nn::Module that
/// g2c::exercises::train_language_model can train: forward(ids (B, T)) = lm_forward(*model, ids,
/// wiring) -> logits (B, T, V). The model is its only child ("model"), so parameters(), device(),
/// train() and eval() are the model's own and the weights are shared, not copied. Example:
/// WiredTransformerLM(model, Wiring::post_norm)->forward(ids (2, 8)) -> (2, 8, V).
class WiredTransformerLMImpl : public g2c::nn::Module {
 public:
  WiredTransformerLMImpl(g2c::transformer::TransformerLM model, Wiring wiring);

  torch::Tensor forward(const torch::Tensor& ids) override;

  /// g2c::exercises::toy::WiredTransformerLM(wiring=post_norm)
  void pretty_print(std::ostream& stream) const override;

  g2c::transformer::TransformerLM model;
  Wiring wiring;
};
TORCH_MODULE(WiredTransformerLM);

/// The pre-norm model's attention weights, layer by layer: ids (1, T) -> one (H, T, T) per block,
/// each computed on that block's ln1 of the residual stream entering it.
std::vector<torch::Tensor> attention_maps(g2c::transformer::TransformerLMImpl& model,
                                          const torch::Tensor& ids);

}  // namespace g2c::exercises::toy
