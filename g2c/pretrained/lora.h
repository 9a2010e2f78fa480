// Module 16, implemented for you — LoRA on a Llama model's raw projections (SmolLM2).
//
// Module 13b's LoRA wraps a Linear layer. A LlamaModel has none: its attention holds the raw
// tensors Wq, Wk, Wv, Wo and its feed-forward W_gate, W_up, W_down, each used as x @ W. The rules
// are 13b's all the same:
//   W' = W + scaling · A B       A (in, r) ~ Uniform(−1/√in, 1/√in), B (r, out) = 0, scaling = α/r
// so with B at zero the adapted model computes bit for bit what the base does, and only A and B
// train. Here the delta is put into the model for one call at a time: forward() sets each targeted
// member to W + scaling · A B (a fresh autograd graph through A and B), runs the model, and puts
// the base tensor back. Outside a call the model is the base model, untouched, so the frozen
// reference that RL and preference training need is the same model with the adapters off — one
// copy in memory, and (tests/framework/lora_llama_checks.cpp) equal to a separate copy exactly.
//
//   auto model = g2c::pretrained::load_llama(path);                 // float32 weights
//   g2c::pretrained::LlamaLoRA lora(model, g2c::pretrained::LlamaLoRAOptions(8));  // q and v
//   g2c::nn::AdamW optimizer(lora->parameters(), …);                 // A and B only
//   auto logits = lora->forward(ids);             // (B, T, V), the adapters on, with gradients
//   auto reference = model->forward(ids);         // the base: the adapters are off outside a call
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "g2c/core/torch.h"
#include "g2c/nn/module.h"
#include "g2c/pretrained/llama.h"
#include "g2c/transformer/kv_cache.h"

namespace g2c::pretrained {

struct LlamaLoRAOptions {
  /* implicit */ LlamaLoRAOptions(std::int64_t rank) : rank_(rank) {}
  /// r: A (in, r), B (r, out). At least 1.
  TORCH_ARG(std::int64_t, rank);
  /// The numerator of scaling = alpha / rank; unset: alpha = rank, scaling 1 (module 13b's rule).
  TORCH_ARG(std::optional<double>, alpha) = std::nullopt;
  /// Which projections of every block: of "q", "k", "v", "o" (attention) and "gate", "up",
  /// "down" (feed-forward). The RL exercise's choice: query and value.
  TORCH_ARG(std::vector<std::string>, targets) = std::vector<std::string>{"q", "v"};
};

class LlamaLoRAImpl : public g2c::nn::Module {
 public:
  /// Adapters for `model`'s targeted projections, registered as "blocks.<l>.<target>_lora_A" and
  /// "_lora_B"; the model itself is held, not registered, so parameters() lists A and B alone.
  /// The model's own parameters are frozen (requires_grad false). ValueError for rank < 1, an
  /// unknown or repeated target, or a packed model (LoRA changes the float32 weights: load it with
  /// LoadOptions().packed(false)).
  LlamaLoRAImpl(LlamaModel model, const LlamaLoRAOptions& options);

  /// A ~ Uniform(−1/√in, 1/√in), B = 0: the adapted model starts as the base model.
  void reset_parameters();

  /// ids (B, T) -> logits (B, T, V): the model with W + scaling · A B in every targeted
  /// projection, or the base model when the adapters are switched off.
  torch::Tensor forward(const torch::Tensor& ids) override;
  /// The same at positions cache.length() .., appending to `cache` (rollouts through the cache).
  torch::Tensor forward(const torch::Tensor& ids, g2c::transformer::KVCache& cache);

  /// The on/off switch: off, forward is the base model's forward exactly.
  void set_enabled(bool enabled) { enabled_ = enabled; }
  bool enabled() const { return enabled_; }

  /// Runs `body` (returning a tensor) with every targeted member of the model set to its adapted
  /// weight W + scaling · A B, the base put back after it however it ends; with the adapters off,
  /// just `body`. forward() is one call inside it; a caller that makes many calls with the same
  /// weights — a whole rollout, token by token through the cache — merges once for all of them.
  template <typename Body>
  torch::Tensor with_adapters(Body&& body) {
    if (!enabled_) return body();
    struct Restore {
      std::vector<Adapter>& adapters;
      ~Restore() {
        for (auto& adapter : adapters) *adapter.member = adapter.base;
      }
    } restore{adapters_};
    for (auto& adapter : adapters_) {
      *adapter.member = adapter.base + scaling * adapter.A.matmul(adapter.B);  // (in, out)
    }
    return body();
  }

  /// Trainable parameters (A and B) and the model's own, frozen.
  std::int64_t adapter_parameters() const;
  std::int64_t base_parameters() const;

  LlamaModel model;
  LlamaLoRAOptions options;
  double scaling;

 private:
  /// One adapted projection: where it lives in the model, its base tensor and its A and B.
  struct Adapter {
    torch::Tensor* member;  // the model's field, e.g. &blocks[3]->attention->Wq
    torch::Tensor base;     // (in, out), the tensor the field holds outside a call
    torch::Tensor A, B;     // (in, r), (r, out)
  };
  std::vector<Adapter> adapters_;
  bool enabled_ = true;
};
TORCH_MODULE(LlamaLoRA);

}  // namespace g2c::pretrained
