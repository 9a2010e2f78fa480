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
//
// The adapter file. What a run keeps is A and B alone — 3.3 MB at rank 8 on every projection,
// beside a 270 MB base — with where they came from (the base, the data, the seed, the steps):
//   save_llama_adapter(path, adapter_of(*lora, "SmolLM2-135M-Instruct-calculator", base, lineage))
//   auto smol = load_pretrained_model("SmolLM2-135M-Instruct", LoadOptions().packed(true));
//   apply_llama_adapter(smol, path);   // the base plus the adapter, served under the adapter's
//   name
// The file is an archive (g2c/core/archive.h), format "g2c.llama_lora_adapter", version 1:
//   name, base            the adapted model's name and its base's
//   lora                  {rank, alpha, targets}
//   base_sizes            {vocab_size, embedding_dim, num_layers, num_heads, num_kv_heads,
//                          hidden_dim}: the base it was trained on
//   lineage               JSON: data, seed, steps, metrics (whatever the trainer passed)
//   names, tensors        "blocks.3.q_lora_A" -> A (in, r), … in the LlamaLoRA's order
// Applied for good (merge_llama_adapter), the adapter is added into each targeted weight: W + s·A B
// for float32 weights; on the packed fast path the blocks stay as they are and the product gains
// a low-rank term, x @ W + (x @ A)(s·B) (PackedWeight::with_low_rank).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include "g2c/core/torch.h"
#include "g2c/nn/module.h"
#include "g2c/pretrained/generation.h"
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

 public:
  /// alpha / rank: what A B is multiplied by.
  double scaling() const {
    return alpha_.value_or(static_cast<double>(rank_)) / static_cast<double>(rank_);
  }
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

/// A LlamaLoRA's adapters as a file holds them, with their settings and lineage.
struct LlamaAdapter {
  std::string name;  // the adapted model's name: "SmolLM2-135M-Instruct-calculator"
  std::string base;  // its base model's: "SmolLM2-135M-Instruct"
  LlamaLoRAOptions options{1};
  LlamaOptions base_sizes;                            // the base it was trained on
  nlohmann::json lineage = nlohmann::json::object();  // data, seed, steps, metrics
  /// "blocks.<l>.<target>_lora_A" (in, r) and "_lora_B" (r, out), CPU float32, the LlamaLoRA's
  /// order.
  torch::OrderedDict<std::string, torch::Tensor> tensors;

  double scaling() const { return options.scaling(); }
};

/// `lora`'s adapters (detached CPU copies) with its settings, named `name`, on base `base`.
/// ValueError for an empty name or base.
LlamaAdapter adapter_of(const LlamaLoRAImpl& lora, const std::string& name, const std::string& base,
                        const nlohmann::json& lineage = nlohmann::json::object());

/// Writes `adapter` to `path` (parent folders created) atomically: a reader sees the previous file
/// or the whole new one, never a part.
void save_llama_adapter(const std::filesystem::path& path, const LlamaAdapter& adapter);

/// The adapter at `path`, every part checked before it is returned: ValueError naming the file
/// for a missing, cut-short or damaged file, another format, settings that do not describe its
/// tensors (names, count, shapes for the sizes and rank it states) or values that are not finite.
LlamaAdapter read_llama_adapter(const std::filesystem::path& path);

/// Copies the adapter's A and B into `lora` (to go on training, or to compare). ValueError, with
/// nothing changed, unless `lora` has the adapter's targets, rank, alpha and base sizes.
void load_llama_adapter(LlamaLoRAImpl& lora, const LlamaAdapter& adapter);

/// Adds the adapter into `model` for good: W + scaling · A B in each targeted float32 weight (a new
/// tensor: a LlamaLoRA holding the old one keeps it), or the low-rank term on a packed weight.
/// ValueError, with nothing changed, when the model's sizes are not the adapter's base sizes.
void merge_llama_adapter(LlamaModelImpl& model, const LlamaAdapter& adapter);

/// The adapter at `path` read and merged into `pretrained`, which takes the adapter's name (what
/// g2c-serve serves it as, and backends report). ValueError, with nothing changed, when the
/// adapter was trained on another base (it names both).
LlamaAdapter apply_llama_adapter(PretrainedModel& pretrained, const std::filesystem::path& path);

}  // namespace g2c::pretrained
