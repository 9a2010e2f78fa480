// LoRA on a Llama model's raw projections (g2c/pretrained/lora.h), checked against independent
// oracles: the adapters off (and on with B at zero) against a separate copy of the base model,
// exactly; the adapters on against a copy whose weights were changed by hand to W + scaling · A B;
// gradients reaching A and B and nothing else, against float64 finite differences; the model left
// as the base model after every call, an exception included; the cached forward against the full
// one; what a bad rank and an unknown target get (a packed model: packed_weight_checks.cpp).
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <torch/torch.h>
#include <catch2/catch.hpp>

#include "g2c/core/errors.h"
#include "g2c/pretrained/llama.h"
#include "g2c/pretrained/lora.h"
#include "g2c_test.h"
#include "tiny_llama.h"
#include "torch_test.h"

using g2c::pretrained::LlamaLoRA;
using g2c::pretrained::LlamaLoRAOptions;
using g2c::pretrained::LlamaModel;
using g2c::testing::max_abs_diff;

namespace {

/// Two models with the same random weights: one to adapt, one to compare with.
std::pair<LlamaModel, LlamaModel> twin_models(std::uint64_t seed) {
  torch::manual_seed(seed);
  LlamaModel model(g2c::testing::tiny_llama_options());
  torch::manual_seed(seed);
  LlamaModel copy(g2c::testing::tiny_llama_options());
  return {model, copy};
}

/// Gives every B random values, so that the adapters change the model.
void randomize_b(LlamaLoRA& lora) {
  torch::NoGradGuard no_grad;
  for (auto& item : lora->named_parameters()) {
    if (item.key().find("lora_B") != std::string::npos) item.value().normal_(0.0, 0.5);
  }
}

}  // namespace

TEST_CASE("llama_lora_off_is_the_base_model_exactly", "[pretrained][lora]") {
  auto [model, copy] = twin_models(21);
  LlamaLoRA lora(model, LlamaLoRAOptions(4).targets({"q", "k", "v", "o", "gate", "up", "down"}));
  const auto ids = torch::randint(0, 20, {2, 9}, torch::kLong);
  torch::NoGradGuard no_grad;
  // B starts at zero: the adapted weights are W + 0, the base's to the bit.
  CHECK(max_abs_diff(lora->forward(ids), copy->forward(ids)) == 0.0);
  randomize_b(lora);
  CHECK(max_abs_diff(lora->forward(ids), copy->forward(ids)) > 1e-3);  // on, the adapters matter
  lora->set_enabled(false);
  CHECK(max_abs_diff(lora->forward(ids), copy->forward(ids)) == 0.0);
  // Outside a call the model is the base model, whatever the switch says.
  lora->set_enabled(true);
  lora->forward(ids);
  CHECK(max_abs_diff(model->forward(ids), copy->forward(ids)) == 0.0);
  CHECK(model->block_list[0]->attention->Wq.is_same(
      model->block_list[0]->attention->named_parameters()["Wq"]));
}

TEST_CASE("llama_lora_on_is_the_base_plus_scaling_a_b", "[pretrained][lora]") {
  auto [model, copy] = twin_models(22);
  LlamaLoRA lora(model, LlamaLoRAOptions(2).alpha(6.0).targets({"q", "v", "down"}));
  CHECK(lora->scaling == 3.0);
  randomize_b(lora);
  torch::NoGradGuard no_grad;
  auto params = lora->named_parameters();
  for (std::size_t l = 0; l < copy->block_list.size(); ++l) {
    auto& block = *copy->block_list[l];
    const auto delta = [&](const std::string& target) {
      const auto prefix = "blocks." + std::to_string(l) + "." + target;
      return 3.0 * params[prefix + "_lora_A"].matmul(params[prefix + "_lora_B"]);
    };
    block.attention->Wq.add_(delta("q"));
    block.attention->Wv.add_(delta("v"));
    block.ffn->W_down.add_(delta("down"));
  }
  const auto ids = torch::randint(0, 20, {1, 11}, torch::kLong);
  CHECK(max_abs_diff(lora->forward(ids), copy->forward(ids)) < 1e-5);
  // The cached forward, a prompt then one token, continues the same rows.
  auto cache = model->empty_kv_cache(16);
  const auto head = lora->forward(ids.narrow(1, 0, 10), cache);
  const auto tail = lora->forward(ids.narrow(1, 10, 1), cache);
  CHECK(max_abs_diff(torch::cat({head, tail}, 1), copy->forward(ids)) < 1e-4);
}

TEST_CASE("llama_lora_trains_a_and_b_only", "[pretrained][lora]") {
  auto [model, copy] = twin_models(23);
  LlamaLoRA lora(model, LlamaLoRAOptions(3));
  randomize_b(lora);
  CHECK(lora->parameters().size() == 2 * 2 * 2);  // 2 blocks x {q, v} x {A, B}
  // (D 16, r 3): q (16, 16) and v (16, 8) in each of 2 blocks.
  CHECK(lora->adapter_parameters() == 2 * (16 * 3 + 3 * 16 + 16 * 3 + 3 * 8));
  CHECK(lora->base_parameters() == copy->options.num_parameters());
  for (const auto& parameter : model->parameters()) CHECK_FALSE(parameter.requires_grad());
  const auto ids = torch::randint(0, 20, {2, 7}, torch::kLong);
  const auto targets = torch::randint(0, 20, {2, 7}, torch::kLong);
  const auto loss = [&] {
    const auto logits = lora->forward(ids);
    return torch::nn::functional::cross_entropy(logits.reshape({-1, 20}), targets.reshape(-1));
  };
  loss().backward();
  for (const auto& parameter : lora->parameters()) {
    REQUIRE(parameter.grad().defined());
    CHECK(parameter.grad().abs().sum().item<double>() > 0.0);
  }
  for (const auto& parameter : model->parameters()) CHECK_FALSE(parameter.grad().defined());
  // One entry of one A against a central difference of the loss (float32: a loose tolerance).
  auto a = lora->named_parameters()["blocks.1.v_lora_A"];
  const double analytic = a.grad()[2][1].item<double>();
  const double h = 1e-2;
  double plus = 0.0, minus = 0.0;
  {
    torch::NoGradGuard no_grad;
    a[2][1] += h;
    plus = loss().item<double>();
    a[2][1] -= 2 * h;
    minus = loss().item<double>();
    a[2][1] += h;
  }
  CHECK(std::abs((plus - minus) / (2 * h) - analytic) < 2e-3 + 2e-2 * std::abs(analytic));
}

TEST_CASE("llama_lora_puts_the_base_back_when_a_call_fails", "[pretrained][lora]") {
  auto [model, copy] = twin_models(24);
  LlamaLoRA lora(model, LlamaLoRAOptions(2));
  randomize_b(lora);
  CHECK_THROWS_AS(lora->forward(torch::tensor({{3, 25}}, torch::kLong)),
                  g2c::ValueError);  // id 25 >= V
  const auto ids = torch::randint(0, 20, {1, 5}, torch::kLong);
  torch::NoGradGuard no_grad;
  CHECK(max_abs_diff(model->forward(ids), copy->forward(ids)) == 0.0);
}

TEST_CASE("llama_lora_refuses_what_it_cannot_adapt", "[pretrained][lora]") {
  auto [model, copy] = twin_models(25);
  CHECK_THROWS_WITH(LlamaLoRA(model, LlamaLoRAOptions(0)), Catch::Contains("rank must be >= 1"));
  CHECK_THROWS_WITH(LlamaLoRA(model, LlamaLoRAOptions(2).targets({"q", "x"})),
                    Catch::Contains("unknown target 'x'"));
  CHECK_THROWS_WITH(LlamaLoRA(model, LlamaLoRAOptions(2).targets({"q", "q"})),
                    Catch::Contains("each projection once"));
  CHECK_THROWS_AS(LlamaLoRA(model, LlamaLoRAOptions(2).targets({})), g2c::ValueError);
  CHECK_THROWS_AS(LlamaLoRA(LlamaModel(nullptr), LlamaLoRAOptions(2)), g2c::ValueError);
}
