// LoRA on a Llama model's raw projections: the adapters, and the adapted weights put into the
// model for one call at a time.
#include "g2c/pretrained/lora.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "g2c/core/errors.h"

namespace g2c::pretrained {

namespace {

/// The member of `block` a target names; nullptr for an unknown name.
torch::Tensor* projection(LlamaBlockImpl& block, const std::string& target) {
  if (target == "q") return &block.attention->Wq;
  if (target == "k") return &block.attention->Wk;
  if (target == "v") return &block.attention->Wv;
  if (target == "o") return &block.attention->Wo;
  if (target == "gate") return &block.ffn->W_gate;
  if (target == "up") return &block.ffn->W_up;
  if (target == "down") return &block.ffn->W_down;
  return nullptr;
}

}  // namespace

LlamaLoRAImpl::LlamaLoRAImpl(LlamaModel model_, const LlamaLoRAOptions& options_)
    : model(std::move(model_)), options(options_) {
  if (!model) throw ValueError("LlamaLoRA: an empty model handle");
  if (options.rank() < 1) {
    throw ValueError(fmt::format("LlamaLoRA: rank must be >= 1; got {}", options.rank()));
  }
  if (model->packed() || model->block_list.front()->attention->packed) {
    throw ValueError(
        "LlamaLoRA: the model holds packed weights; LoRA adds to the float32 projections, so load "
        "it with LoadOptions().packed(false)");
  }
  const std::set<std::string> unique(options.targets().begin(), options.targets().end());
  if (options.targets().empty() || unique.size() != options.targets().size()) {
    throw ValueError(
        fmt::format("LlamaLoRA: targets must name each projection once, at least one; got [{}]",
                    fmt::join(options.targets(), ", ")));
  }
  scaling = options.alpha().value_or(static_cast<double>(options.rank())) /
            static_cast<double>(options.rank());
  for (auto& parameter : model->parameters()) parameter.set_requires_grad(false);
  // Names as the model nests them: "blocks.3.q_lora_A" (a parameter name holds no dot).
  const auto blocks = register_module("blocks", std::make_shared<torch::nn::Module>());
  for (std::size_t l = 0; l < model->block_list.size(); ++l) {
    const auto block =
        blocks->register_module(std::to_string(l), std::make_shared<torch::nn::Module>());
    for (const auto& target : options.targets()) {
      auto* member = projection(*model->block_list[l], target);
      if (member == nullptr) {
        throw ValueError(fmt::format(
            "LlamaLoRA: unknown target '{}'; use q, k, v, o (attention) or gate, up, down "
            "(feed-forward)",
            target));
      }
      const auto in = member->size(0), out = member->size(1);
      Adapter adapter{member, *member, {}, {}};
      adapter.A = block->register_parameter(target + "_lora_A", torch::zeros({in, options.rank()}));
      adapter.B =
          block->register_parameter(target + "_lora_B", torch::zeros({options.rank(), out}));
      adapters_.push_back(std::move(adapter));
    }
  }
  reset_parameters();
  to(model->device());
}

void LlamaLoRAImpl::reset_parameters() {
  torch::NoGradGuard no_grad;
  for (auto& adapter : adapters_) {
    const double bound = 1.0 / std::sqrt(static_cast<double>(adapter.A.size(0)));
    adapter.A.uniform_(-bound, bound);
    adapter.B.zero_();
  }
}

torch::Tensor LlamaLoRAImpl::forward(const torch::Tensor& ids) {
  return with_adapters([&] { return model->forward(ids); });  // (B, T, V)
}

torch::Tensor LlamaLoRAImpl::forward(const torch::Tensor& ids, g2c::transformer::KVCache& cache) {
  return with_adapters([&] { return model->forward(ids, cache); });  // (B, T_new, V)
}

std::int64_t LlamaLoRAImpl::adapter_parameters() const {
  std::int64_t count = 0;
  for (const auto& parameter : parameters()) count += parameter.numel();
  return count;
}

std::int64_t LlamaLoRAImpl::base_parameters() const {
  std::int64_t count = 0;
  for (const auto& parameter : model->parameters()) count += parameter.numel();
  return count;
}

}  // namespace g2c::pretrained
