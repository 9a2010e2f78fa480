// Beyond module rl, implemented for you: the two kinds of policy GRPOTrainer trains.
#include "g2c/rl/policy.h"

#include <utility>

#include "g2c/pretrained/logits_model.h"

namespace g2c::rl {

namespace {

class TransformerPolicy : public Policy {
 public:
  explicit TransformerPolicy(g2c::transformer::TransformerLM model)
      : model_(std::move(model)), scorer_(*model_) {}

  g2c::sampling::ScoringModel& scorer() override { return scorer_; }
  torch::Tensor generate(const torch::Tensor& prompt_ids, std::int64_t max_new_tokens,
                         const g2c::sampling::GenerateOptions& options) override {
    return g2c::sampling::generate(*model_, prompt_ids, max_new_tokens, options);
  }
  std::vector<torch::Tensor> trainable_parameters() override {
    std::vector<torch::Tensor> trainable;
    for (const auto& parameter : model_->parameters()) {
      if (parameter.requires_grad()) trainable.push_back(parameter);
    }
    return trainable;
  }
  torch::Device device() const override { return model_->device(); }
  bool same_as(const Policy& other) const override {
    const auto* transformer = dynamic_cast<const TransformerPolicy*>(&other);
    return transformer != nullptr && transformer->model_.get() == model_.get();
  }

 private:
  g2c::transformer::TransformerLM model_;
  g2c::sampling::TransformerLogitsModel scorer_;
};

/// The adapted model (or the base, adapters off) scoring every position, with or without a cache:
/// each call switches the adapters to this policy's setting and back.
class LlamaLoRAScoringModel : public g2c::sampling::CachedScoringModel {
 public:
  using g2c::sampling::CachedScoringModel::forward;
  LlamaLoRAScoringModel(g2c::pretrained::LlamaLoRA lora, bool adapters_on)
      : lora_(std::move(lora)), base_(*lora_->model), adapters_on_(adapters_on) {}

  torch::Tensor forward(const torch::Tensor& context) override {
    return switched([&] { return lora_->forward(context); });  // (1, T, V)
  }
  torch::Tensor forward(const torch::Tensor& ids, g2c::transformer::KVCache& cache) override {
    return switched([&] { return lora_->forward(ids, cache); });  // (1, T_new, V)
  }
  g2c::transformer::KVCache empty_cache() const override { return base_.empty_cache(); }
  std::int64_t max_seq_len() const override { return base_.max_seq_len(); }
  std::int64_t vocab_size() const override { return base_.vocab_size(); }
  torch::Device device() const override { return base_.device(); }

  /// Runs `body` with the adapters switched to this policy's setting, the switch put back after.
  template <typename Body>
  torch::Tensor switched(Body&& body) {
    struct Restore {
      g2c::pretrained::LlamaLoRAImpl& lora;
      bool enabled;
      ~Restore() { lora.set_enabled(enabled); }
    } restore{*lora_, lora_->enabled()};
    lora_->set_enabled(adapters_on_);
    return body();
  }

  g2c::pretrained::LlamaLoRA lora_;
  g2c::pretrained::LlamaScoringModel base_;  // the model's own cache layout and sizes
  bool adapters_on_;
};

class LlamaLoRAPolicy : public Policy {
 public:
  LlamaLoRAPolicy(g2c::pretrained::LlamaLoRA lora, bool adapters_on)
      : scorer_(std::move(lora), adapters_on) {}

  g2c::sampling::ScoringModel& scorer() override { return scorer_; }
  /// The adapted weights merged once, then every token through the base model's own cache.
  torch::Tensor generate(const torch::Tensor& prompt_ids, std::int64_t max_new_tokens,
                         const g2c::sampling::GenerateOptions& options) override {
    torch::NoGradGuard no_grad;
    return scorer_.switched([&] {
      return scorer_.lora_->with_adapters([&] {
        return g2c::sampling::generate_cached(scorer_.base_, prompt_ids, max_new_tokens, options);
      });
    });
  }
  std::vector<torch::Tensor> trainable_parameters() override {
    if (!scorer_.adapters_on_) return {};
    return scorer_.lora_->parameters();
  }
  torch::Device device() const override { return scorer_.device(); }
  bool same_as(const Policy& other) const override {
    const auto* llama = dynamic_cast<const LlamaLoRAPolicy*>(&other);
    return llama != nullptr && llama->scorer_.lora_.get() == scorer_.lora_.get() &&
           llama->scorer_.adapters_on_ == scorer_.adapters_on_;
  }

 private:
  LlamaLoRAScoringModel scorer_;
};

}  // namespace

std::shared_ptr<Policy> transformer_policy(g2c::transformer::TransformerLM model) {
  if (model.is_empty()) return nullptr;
  return std::make_shared<TransformerPolicy>(std::move(model));
}

std::shared_ptr<Policy> llama_lora_policy(g2c::pretrained::LlamaLoRA lora, bool adapters_on) {
  if (lora.is_empty()) return nullptr;
  return std::make_shared<LlamaLoRAPolicy>(std::move(lora), adapters_on);
}

}  // namespace g2c::rl
