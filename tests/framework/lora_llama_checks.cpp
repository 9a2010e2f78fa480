// LoRA on a Llama model's raw projections (g2c/pretrained/lora.h), checked against independent
// oracles: the adapters off (and on with B at zero) against a separate copy of the base model,
// exactly; the adapters on against a copy whose weights were changed by hand to W + scaling · A B;
// gradients reaching A and B and nothing else, against float64 finite differences; the model left
// as the base model after every call, an exception included; the cached forward against the full
// one; what a bad rank and an unknown target get (a packed model: packed_weight_checks.cpp).
// The adapter file: saved and read back bit for bit (and the model it loads into computing what
// the saved one did, exactly); merged into a copy of the base, against the unmerged adapters
// within float rounding; a cut-short, foreign, non-finite or wrongly-sized file refused by name,
// nothing changed.
#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <torch/torch.h>
#include <catch2/catch.hpp>

#include "g2c/core/archive.h"
#include "g2c/core/errors.h"
#include "g2c/pretrained/llama.h"
#include "g2c/pretrained/lora.h"
#include "g2c_test.h"
#include "smollm2.h"
#include "temp_dir.h"
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

namespace {

/// A LoRA on every projection of `model` whose B are random: an adapter that changes the model.
LlamaLoRA trained_looking_lora(LlamaModel model) {
  LlamaLoRA lora(
      model, LlamaLoRAOptions(3).alpha(6.0).targets({"q", "k", "v", "o", "gate", "up", "down"}));
  randomize_b(lora);
  return lora;
}

const nlohmann::json kLineage = {{"data", "tool-calls v1"}, {"seed", 7}, {"steps", 12}};

}  // namespace

TEST_CASE("llama_adapter_saves_and_reloads_bit_for_bit", "[pretrained][lora]") {
  auto [model, copy] = twin_models(31);
  auto lora = trained_looking_lora(model);
  const auto adapter = g2c::pretrained::adapter_of(*lora, "tiny-calc", "tiny", kLineage);
  g2c::testing::TempDir dir;
  g2c::pretrained::save_llama_adapter(dir / "nested/adapter.pt", adapter);
  const auto read = g2c::pretrained::read_llama_adapter(dir / "nested/adapter.pt");
  CHECK(read.name == "tiny-calc");
  CHECK(read.base == "tiny");
  CHECK(read.lineage == kLineage);
  CHECK(read.options.rank() == 3);
  CHECK(read.scaling() == 2.0);
  CHECK(read.options.targets() == lora->options.targets());
  REQUIRE(read.tensors.size() == lora->named_parameters().size());
  for (const auto& item : lora->named_parameters()) {
    INFO(item.key());
    CHECK(torch::equal(read.tensors[item.key()], item.value()));
  }
  // Loaded into a fresh LoRA on the twin base, it computes what the saved one did, to the bit.
  LlamaLoRA reloaded(copy, read.options);
  g2c::pretrained::load_llama_adapter(*reloaded, read);
  const auto ids = torch::randint(0, 20, {2, 7}, torch::kLong);
  torch::NoGradGuard no_grad;
  CHECK(max_abs_diff(reloaded->forward(ids), lora->forward(ids)) == 0.0);
  // Another rank or other targets: refused, the LoRA left as it was.
  LlamaLoRA other(copy, LlamaLoRAOptions(2).targets({"q", "v"}));
  const auto before = other->parameters().front().clone();
  CHECK_THROWS_WITH(g2c::pretrained::load_llama_adapter(*other, read),
                    Catch::Contains("rank 3") && Catch::Contains("build the LlamaLoRA"));
  CHECK(torch::equal(other->parameters().front(), before));
}

TEST_CASE("llama_adapter_merged_equals_unmerged", "[pretrained][lora]") {
  auto [model, copy] = twin_models(32);
  auto lora = trained_looking_lora(model);
  const auto adapter = g2c::pretrained::adapter_of(*lora, "tiny-calc", "tiny");
  const auto ids = torch::randint(0, 20, {2, 9}, torch::kLong);
  torch::NoGradGuard no_grad;
  const auto base = copy->forward(ids);
  g2c::pretrained::merge_llama_adapter(*copy, adapter);
  const auto merged = copy->forward(ids);
  CHECK(max_abs_diff(merged, base) > 1e-3);  // the adapter does something
  CHECK(max_abs_diff(merged, lora->forward(ids)) < 1e-5);
  // Through the cache, a prompt then one token, the merged model continues the same rows.
  auto cache = copy->empty_kv_cache(16);
  const auto head = copy->forward(ids.narrow(1, 0, 8), cache);
  const auto tail = copy->forward(ids.narrow(1, 8, 1), cache);
  CHECK(max_abs_diff(torch::cat({head, tail}, 1), merged) < 1e-4);
  // The LoRA's own base was not touched by merging into the copy.
  lora->set_enabled(false);
  CHECK(max_abs_diff(lora->forward(ids), base) == 0.0);
}

TEST_CASE("llama_adapter_refuses_a_corrupt_or_foreign_file", "[pretrained][lora]") {
  auto [model, copy] = twin_models(33);
  auto lora = trained_looking_lora(model);
  auto adapter = g2c::pretrained::adapter_of(*lora, "tiny-calc", "tiny");
  g2c::testing::TempDir dir;
  const auto path = dir / "adapter.pt";
  g2c::pretrained::save_llama_adapter(path, adapter);
  const auto size = std::filesystem::file_size(path);

  SECTION("cut short") {
    std::filesystem::resize_file(path, size / 2);
    CHECK_THROWS_WITH(g2c::pretrained::read_llama_adapter(path),
                      Catch::Contains(path.string()) && Catch::Contains("LoRA adapter"));
  }
  SECTION("missing") {
    CHECK_THROWS_WITH(g2c::pretrained::read_llama_adapter(dir / "none.pt"),
                      Catch::Contains("none.pt"));
  }
  SECTION("another kind of archive") {
    auto dict = g2c::archive_dict();
    dict.insert("name", "tiny-calc");
    g2c::write_archive(dir / "other.pt", dict);
    CHECK_THROWS_WITH(g2c::pretrained::read_llama_adapter(dir / "other.pt"),
                      Catch::Contains("other.pt") && Catch::Contains("g2c.llama_lora_adapter"));
  }
  SECTION("values that are not finite") {
    adapter.tensors["blocks.1.up_lora_B"][0][0] = std::numeric_limits<float>::quiet_NaN();
    g2c::pretrained::save_llama_adapter(path, adapter);
    CHECK_THROWS_WITH(g2c::pretrained::read_llama_adapter(path),
                      Catch::Contains("blocks.1.up_lora_B") && Catch::Contains("not finite"));
  }
  SECTION("a tensor of the wrong shape") {
    adapter.tensors["blocks.0.q_lora_A"] = torch::zeros({5, 3});
    g2c::pretrained::save_llama_adapter(path, adapter);
    CHECK_THROWS_WITH(g2c::pretrained::read_llama_adapter(path),
                      Catch::Contains("blocks.0.q_lora_A") && Catch::Contains("damaged"));
  }
  SECTION("a base of other sizes") {
    const auto read = g2c::pretrained::read_llama_adapter(path);
    LlamaModel wider(g2c::testing::tiny_llama_options().hidden_dim(
        g2c::testing::tiny_llama_options().hidden_dim() * 2));
    const auto before = wider->block_list[0]->attention->Wq.clone();
    CHECK_THROWS_WITH(g2c::pretrained::merge_llama_adapter(*wider, read),
                      Catch::Contains("tiny-calc") && Catch::Contains("on its base"));
    CHECK(torch::equal(wider->block_list[0]->attention->Wq, before));
  }
}

TEST_CASE("smollm2_with_an_adapter_on_the_fast_path_is_the_adapted_model", "[pretrained][lora]") {
  G2C_SKIP_WITHOUT_SMOLLM2();
  // Trained (here: made up) on the float32 model, applied to the packed one that the tools load.
  auto dense = g2c::pretrained::load_pretrained_model("SmolLM2-135M-Instruct");
  LlamaLoRA lora(dense.model, LlamaLoRAOptions(2).targets({"q", "v", "down"}));
  {
    torch::NoGradGuard no_grad;
    for (auto& parameter : lora->parameters()) parameter.normal_(0.0, 0.02);
  }
  g2c::testing::TempDir dir;
  g2c::pretrained::save_llama_adapter(
      dir / "adapter.pt", g2c::pretrained::adapter_of(*lora, "SmolLM2-calc", dense.name, kLineage));
  auto packed = g2c::pretrained::load_pretrained_model("SmolLM2-135M-Instruct",
                                                       g2c::pretrained::LoadOptions().packed(true));
  const auto ids = packed.tokenizer.encode("The capital of France is");
  const auto x = torch::tensor(ids, torch::kLong).unsqueeze(0);  // (1, T)
  torch::NoGradGuard no_grad;
  const auto base = packed.model->forward(x);
  const auto adapter = g2c::pretrained::apply_llama_adapter(packed, dir / "adapter.pt");
  CHECK(packed.name == "SmolLM2-calc");
  CHECK(adapter.lineage == kLineage);
  const auto adapted = packed.model->forward(x);
  CHECK(max_abs_diff(adapted, base) > 1e-2);
  CHECK(max_abs_diff(adapted, lora->forward(x)) < 2e-3);  // Q8_0/Q4_1 kernels vs float32 matmul
  // On another base by name: refused, the model as it was.
  auto renamed = std::move(packed);
  renamed.name = "SmolLM2-360M-Instruct";
  CHECK_THROWS_WITH(g2c::pretrained::apply_llama_adapter(renamed, dir / "adapter.pt"),
                    Catch::Contains("trained on SmolLM2-135M-Instruct, not on SmolLM2-360M"));
  CHECK(max_abs_diff(renamed.model->forward(x), adapted) == 0.0);
}
