#include "exercises/09-transformer/variants.h"

#include <utility>

#include <fmt/format.h>

#include "g2c/core/errors.h"

namespace g2c::exercises::toy {

std::string wiring_name(Wiring wiring) {
  switch (wiring) {
    case Wiring::pre_norm:
      return "pre_norm";
    case Wiring::post_norm:
      return "post_norm";
    case Wiring::no_residual:
      return "no_residual";
    case Wiring::no_norm:
      return "no_norm";
  }
  return "unknown";
}

Wiring parse_wiring(const std::string& name) {
  for (const auto wiring :
       {Wiring::pre_norm, Wiring::post_norm, Wiring::no_residual, Wiring::no_norm}) {
    if (wiring_name(wiring) == name) return wiring;
  }
  throw ValueError(fmt::format(
      "unknown block wiring '{}': use pre_norm, post_norm, no_residual or no_norm", name));
}

torch::Tensor block_forward(g2c::transformer::BlockImpl& block, const torch::Tensor& x,
                            Wiring wiring) {
  switch (wiring) {
    case Wiring::pre_norm:
      return block.forward(x);
    case Wiring::post_norm: {
      const auto h = block.ln1(x + block.attn(x));  // (B, T, D)
      return block.ln2(h + block.ffn(h));
    }
    case Wiring::no_residual:
      return block.ffn(block.ln2(block.attn(block.ln1(x))));
    case Wiring::no_norm: {
      const auto h = x + block.attn(x);
      return h + block.ffn(h);
    }
  }
  throw ValueError("unknown block wiring");
}

torch::Tensor lm_forward(g2c::transformer::TransformerLMImpl& model, const torch::Tensor& ids,
                         Wiring wiring) {
  if (wiring == Wiring::pre_norm) return model.forward(ids);
  model.check_input(ids);
  const std::int64_t length = ids.size(1);
  auto x = model.token_embed(ids) + model.pos_embed(length);  // (B, T, D)
  for (auto& block : model.blocks) x = block_forward(*block, x, wiring);
  x = model.ln_final(x);
  return torch::matmul(x, model.token_embed->weight.t()) + model.head_bias;  // (B, T, V)
}

WiredTransformerLMImpl::WiredTransformerLMImpl(g2c::transformer::TransformerLM model, Wiring wiring)
    : model(register_module("model", std::move(model))), wiring(wiring) {}

torch::Tensor WiredTransformerLMImpl::forward(const torch::Tensor& ids) {
  return lm_forward(*model, ids, wiring);  // (B, T) -> (B, T, V)
}

void WiredTransformerLMImpl::pretty_print(std::ostream& stream) const {
  stream << "g2c::exercises::toy::WiredTransformerLM(wiring=" << wiring_name(wiring) << ")";
}

std::vector<torch::Tensor> attention_maps(g2c::transformer::TransformerLMImpl& model,
                                          const torch::Tensor& ids) {
  torch::NoGradGuard no_grad;
  model.check_input(ids);
  auto x = model.token_embed(ids) + model.pos_embed(ids.size(1));  // (1, T, D)
  std::vector<torch::Tensor> maps;
  for (auto& block : model.blocks) {
    maps.push_back(block->attn->attention_weights(block->ln1(x))[0]);  // (H, T, T)
    x = block(x);
  }
  return maps;
}

}  // namespace g2c::exercises::toy
