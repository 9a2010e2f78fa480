// Module 13b framework tests: LoRA on the course's own TransformerLM, against independent oracles.
// The LoRA model must equal a plain model whose weights are W + scaling · A B (float64, 1e-12);
// merging must not change the logits; gradients match finite differences; injection replaces
// exactly the named layers and keeps every other name; the fused fast path must not drop an
// unmerged adapter; adapter files round-trip and refuse a model they do not fit, changing nothing.
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "g2c/core/archive.h"
#include "g2c/core/atomic_file.h"
#include "g2c/core/errors.h"
#include "g2c/lora/adapter.h"
#include "g2c/lora/inject.h"
#include "g2c/lora/layer.h"
#include "g2c/transformer/fused.h"
#include "g2c/transformer/layer_norm.h"
#include "g2c/transformer/transformer_lm.h"
#include "one_thread.h"
#include "torch_test.h"

using g2c::lora::count_parameters;
using g2c::lora::inject_lora;
using g2c::lora::load_lora_adapter;
using g2c::lora::load_lora_state_dict;
using g2c::lora::lora_layers;
using g2c::lora::lora_state_dict;
using g2c::lora::LoRALinear;
using g2c::lora::LoRALinearImpl;
using g2c::lora::LoRALinearOptions;
using g2c::lora::LoRAModel;
using g2c::lora::mark_only_lora_trainable;
using g2c::lora::save_lora_adapter;
using g2c::nn::Linear;
using g2c::testing::close;
using g2c::testing::max_abs_diff;
using g2c::transformer::TransformerLM;
using g2c::transformer::TransformerLMOptions;

namespace fs = std::filesystem;

namespace {

[[maybe_unused]] const bool kOneThread = g2c::testing::use_one_intra_op_thread();

const TransformerLMOptions kOptions(/*vocab_size=*/17, /*embedding_dim=*/12, /*num_layers=*/2,
                                    /*num_heads=*/3, /*max_seq_len=*/10);
const std::vector<std::string> kTargets = {"q_proj", "v_proj"};

/// Random parameters everywhere (LayerNorm's gamma = 1, beta = 0, zero biases and B = 0 would
/// hide a mistake in how they are used).
void randomize(torch::nn::Module& model, std::uint64_t seed) {
  auto generator = at::make_generator<at::CPUGeneratorImpl>(seed);
  torch::NoGradGuard no_grad;
  for (auto& p : model.parameters()) {
    p.copy_(0.3 * torch::randn(p.sizes(), generator, torch::kDouble));
  }
}

/// A TransformerLM of kOptions in `dtype`, random parameters, LoRA (rank, alpha) on q_proj and
/// v_proj with random adapters.
TransformerLM lora_lm(torch::Dtype dtype, std::int64_t rank = 4, double alpha = 10.0,
                      const TransformerLMOptions& options = kOptions) {
  torch::manual_seed(7);
  TransformerLM model(options);
  model->to(dtype);
  inject_lora(*model, kTargets, rank, alpha);
  randomize(*model, 11);
  return model;
}

torch::Tensor some_ids(std::int64_t batch = 3, std::int64_t length = 9) {
  auto generator = at::make_generator<at::CPUGeneratorImpl>(5);
  return torch::randint(0, kOptions.vocab_size(), {batch, length}, generator, torch::kLong);
}

/// An empty folder of its own under the system's temporary folder.
fs::path temporary_folder(const std::string& name) {
  const auto folder =
      fs::temp_directory_path() / ("g2c-framework-lora-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(folder);
  fs::create_directories(folder);
  return folder;
}

std::vector<torch::Tensor> snapshot(const torch::nn::Module& model) {
  std::vector<torch::Tensor> copies;
  for (const auto& p : model.parameters()) copies.push_back(p.detach().clone());
  return copies;
}

bool unchanged(const torch::nn::Module& model, const std::vector<torch::Tensor>& before) {
  const auto now = model.parameters();
  for (std::size_t i = 0; i < now.size(); ++i) {
    if (!torch::equal(now[i], before[i])) return false;
  }
  return now.size() == before.size();
}

}  // namespace

TEST_CASE("lora_model_equals_a_plain_model_with_the_summed_weights", "[lora]") {
  // The oracle: a plain TransformerLM with the same parameters, its q_proj and v_proj weights set
  // to W + scaling · A B by hand, in float64.
  auto model = lora_lm(torch::kDouble);
  torch::manual_seed(7);
  TransformerLM plain(kOptions);
  plain->to(torch::kDouble);
  {
    torch::NoGradGuard no_grad;
    const auto own = model->named_parameters();
    for (auto& item : plain->named_parameters()) item.value().copy_(own[item.key()]);
    for (std::size_t l = 0; l < plain->blocks.size(); ++l) {
      for (const auto& [target, source] :
           {std::pair{plain->blocks[l]->attn->q_proj, model->blocks[l]->attn->q_proj},
            std::pair{plain->blocks[l]->attn->v_proj, model->blocks[l]->attn->v_proj}}) {
        auto lora = std::dynamic_pointer_cast<LoRALinearImpl>(source.ptr());
        REQUIRE(lora);
        target->W.add_(lora->scaling * torch::matmul(lora->lora_A, lora->lora_B));
      }
    }
  }
  const auto ids = some_ids();
  const auto expected = plain->forward(ids);
  const auto actual = model->forward(ids);
  INFO("max |difference| = " << max_abs_diff(actual, expected));
  CHECK(close(actual, expected, 1e-12));
}

TEST_CASE("merge_is_exact_in_float64_on_a_transformer_lm", "[lora]") {
  auto model = lora_lm(torch::kDouble);
  const auto before = snapshot(*model);
  const auto ids = some_ids();
  const auto unmerged = model->forward(ids).detach();
  for (auto* layer : lora_layers(*model)) layer->merge();
  const auto merged = model->forward(ids).detach();
  INFO("merged vs unmerged logits: max |difference| = " << max_abs_diff(merged, unmerged));
  CHECK(close(merged, unmerged, 1e-12));
  for (auto* layer : lora_layers(*model)) layer->merge();  // a second merge changes nothing
  CHECK(close(model->forward(ids), unmerged, 1e-12));
  for (auto* layer : lora_layers(*model)) layer->unmerge();
  const auto after = model->parameters();
  for (std::size_t i = 0; i < after.size(); ++i) CHECK(close(after[i], before[i], 1e-14));
  CHECK(close(model->forward(ids), unmerged, 1e-12));
}

TEST_CASE("lora_forward_gradients_match_finite_differences", "[lora]") {
  torch::manual_seed(3);
  Linear base(5, 3);
  base->to(torch::kDouble);
  LoRALinear lora(base, LoRALinearOptions(2).alpha(3.0));
  randomize(*lora, 4);
  auto x = torch::randn({2, 4, 5}, torch::kDouble).requires_grad_(true);
  const auto weights = torch::randn({2, 4, 3}, torch::kDouble);
  g2c::testing::check_gradients([&] { return (lora(x) * weights).sum(); },
                                {lora->lora_A, lora->lora_B, lora->W, lora->b, x}, 1e-8);
}

TEST_CASE("inject_on_a_transformer_lm_replaces_exactly_the_named_layers", "[lora]") {
  torch::manual_seed(7);
  TransformerLM model(kOptions);
  std::vector<std::string> names_before;
  for (const auto& item : model->named_parameters()) names_before.push_back(item.key());
  const auto count_before = count_parameters(*model).total;

  const auto replaced = inject_lora(*model, kTargets, /*rank=*/3);
  CHECK(replaced == std::vector<std::string>{"blocks.0.attn.q_proj", "blocks.0.attn.v_proj",
                                             "blocks.1.attn.q_proj", "blocks.1.attn.v_proj"});
  CHECK(lora_layers(*model).size() == 4);
  for (const auto& block : model->blocks) {
    auto& attn = *block->attn;
    for (const auto* plain : {&attn.k_proj, &attn.out_proj, &block->ffn->fc1, &block->ffn->fc2}) {
      CHECK(typeid(**plain) == typeid(g2c::nn::LinearImpl));
    }
    // The field forward() calls and the registry hold the same layer.
    CHECK(attn.named_children()["q_proj"].get() == attn.q_proj.get());
    CHECK(attn.named_children()["v_proj"].get() == attn.v_proj.get());
  }

  // Every old name stays, in order, and each adapter sits right after its layer's W and b.
  std::vector<std::string> expected;
  for (const auto& name : names_before) {
    expected.push_back(name);
    for (const auto& layer : replaced) {
      if (name == layer + ".b") {
        expected.push_back(layer + ".lora_A");
        expected.push_back(layer + ".lora_B");
      }
    }
  }
  std::vector<std::string> names_after;
  for (const auto& item : model->named_parameters()) names_after.push_back(item.key());
  CHECK(names_after == expected);
  const std::int64_t D = kOptions.embedding_dim();
  const std::int64_t adapter = 4 * 3 * (D + D);  // 4 layers, A (D, 3) + B (3, D)
  CHECK(count_parameters(*model).total == count_before + adapter);
  const auto [trainable, total] = mark_only_lora_trainable(*model);
  CHECK(trainable == adapter);
  CHECK(total == count_before + adapter);
  CHECK(LoRAModel(model).named_trainable_parameters().size() == 8);
}

TEST_CASE("fused_path_equals_lesson_path_with_lora_unmerged", "[lora]") {
  const auto dtype = GENERATE(torch::kDouble, torch::kFloat);
  auto lesson = lora_lm(dtype);
  torch::manual_seed(7);
  auto fused = g2c::transformer::fused_transformer_lm(kOptions);
  fused->to(dtype);
  inject_lora(*fused, kTargets, 4, 10.0);
  {
    torch::NoGradGuard no_grad;
    const auto lesson_params = lesson->parameters();
    const auto fused_params = fused->parameters();
    REQUIRE(lesson_params.size() == fused_params.size());
    for (std::size_t i = 0; i < lesson_params.size(); ++i) fused_params[i].copy_(lesson_params[i]);
  }
  const auto ids = some_ids();
  const auto weights = torch::randn({3, 9, kOptions.vocab_size()}, dtype);
  const auto expected = lesson->forward(ids);
  const auto actual = fused->forward(ids);
  const double atol = dtype == torch::kDouble ? 1e-10 : 2e-5;
  INFO(c10::toString(dtype) << ": the fused path must add each unmerged adapter's delta; max "
                            << "|difference| = " << max_abs_diff(actual, expected));
  CHECK(close(actual, expected, atol));
  (expected * weights).sum().backward();
  (actual * weights).sum().backward();
  const auto lesson_layers = lora_layers(*lesson);
  const auto fused_layers = lora_layers(*fused);
  for (std::size_t i = 0; i < lesson_layers.size(); ++i) {
    CHECK(close(fused_layers[i]->lora_A.grad(), lesson_layers[i]->lora_A.grad(), atol));
    CHECK(close(fused_layers[i]->lora_B.grad(), lesson_layers[i]->lora_B.grad(), atol));
  }
  // Merged, both paths compute the plain model again.
  for (auto* layer : fused_layers) layer->merge();
  CHECK(close(fused->forward(ids), expected, atol));
}

TEST_CASE("lora_layer_is_built_on_the_base_weights_device_and_dtype", "[lora]") {
  Linear base(6, 2);
  base->to(torch::kDouble);
  LoRALinear lora(base, 2);
  CHECK(lora->lora_A.scalar_type() == torch::kDouble);
  CHECK(lora->lora_B.scalar_type() == torch::kDouble);
  // Moving the LoRA layer moves the one W it shares with the base layer.
  lora->to(torch::kFloat);
  CHECK(lora->W.is_same(base->W));
  CHECK(base->W.scalar_type() == torch::kFloat);
  CHECK(lora->lora_A.scalar_type() == torch::kFloat);
}

TEST_CASE("lora_layer_rejects_bad_input", "[lora]") {
  LoRALinear lora(Linear(6, 2), 2);
  CHECK_THROWS_AS(lora(torch::randn({3, 5})), g2c::ValueError);
  CHECK_THROWS_AS(LoRALinear(Linear(6, 2), -1), g2c::ValueError);
  CHECK_THROWS_AS(LoRALinear(Linear(6, 2), LoRALinearOptions(2).alpha(std::nan(""))),
                  g2c::ValueError);
  std::ostringstream printed;
  printed << *lora;
  CHECK(printed.str() ==
        "g2c::lora::LoRALinear(in_features=6, out_features=2, rank=2, alpha=2, merged=false)");
}

namespace {

/// A parent that registers its layer the LibTorch way, without register_layer.
struct PlainParentImpl : g2c::nn::Module {
  PlainParentImpl() { proj = register_module("proj", Linear(4, 4)); }
  torch::Tensor forward(const torch::Tensor& x) override { return proj(x); }
  Linear proj{nullptr};
};
TORCH_MODULE(PlainParent);

}  // namespace

TEST_CASE("inject_and_replace_layer_refuse_what_they_cannot_swap", "[lora]") {
  PlainParent parent;
  CHECK_THROWS_WITH(inject_lora(*parent, {"proj"}, 2), Catch::Contains("register_layer"));
  CHECK(typeid(*parent->proj) == typeid(g2c::nn::LinearImpl));  // nothing changed

  torch::manual_seed(7);
  TransformerLM model(kOptions);
  CHECK_THROWS_AS(inject_lora(*model, kTargets, 0), g2c::ValueError);
  CHECK(lora_layers(*model).empty());
  auto& attn = *model->blocks[0]->attn;
  CHECK_THROWS_AS(attn.replace_layer("nope", Linear(12, 12).ptr()), g2c::ValueError);
  CHECK_THROWS_AS(attn.replace_layer("q_proj", g2c::transformer::LayerNorm(12).ptr()),
                  g2c::ValueError);
  CHECK(typeid(*attn.q_proj) == typeid(g2c::nn::LinearImpl));
  // The message lists the model's Linear names, so a typo is easy to fix.
  CHECK_THROWS_WITH(inject_lora(*model, {"query"}, 2), Catch::Contains("q_proj"));
}

TEST_CASE("attention_variants_see_the_adapters", "[lora]") {
  // forward_masked packs the projections' W and b into one matmul; with adapters in place it must
  // run each layer's forward instead: with nothing masked it equals forward(), merged or not.
  torch::manual_seed(3);
  TransformerLM model(kOptions);
  inject_lora(*model, kTargets, 2);
  for (auto* layer : lora_layers(*model)) {
    torch::NoGradGuard no_grad;
    layer->lora_B.normal_();  // a delta that is not zero
  }
  auto& attn = *model->blocks[0]->attn;
  attn.eval();
  const auto x = torch::randn({2, 5, kOptions.embedding_dim()});
  const auto unmerged = attn.forward(x);
  CHECK(max_abs_diff(attn.forward_masked(x, {}), unmerged) < 1e-5);
  for (auto* layer : lora_layers(*model)) layer->merge();
  CHECK(max_abs_diff(attn.forward_masked(x, {}), unmerged) < 1e-5);
}

TEST_CASE("load_lora_state_dict_changes_nothing_on_error", "[lora]") {
  auto model = lora_lm(torch::kFloat, /*rank=*/4);
  const auto before = snapshot(*model);
  auto state = lora_state_dict(*model);
  // Every tensor right but the last one: the check must come before any copy.
  for (auto& item : state) item.value() = item.value() + 1.0;
  auto& last = state[state.keys().back()];
  last = torch::zeros({last.size(0) + 1, last.size(1)});
  CHECK_THROWS_AS(load_lora_state_dict(*model, state), g2c::ValueError);
  CHECK(unchanged(*model, before));
}

TEST_CASE("adapter_file_round_trip", "[lora]") {
  const auto folder = temporary_folder("round-trip");
  const auto path = folder / "adapters" / "adapter.pt";
  auto trained = lora_lm(torch::kFloat);
  const nlohmann::json info = {{"base_artifact", "ShakespeareLM-1M"}, {"steps", 200}};
  save_lora_adapter(path, *trained, info);
  REQUIRE(fs::exists(path));
  for (const auto& entry : fs::directory_iterator(path.parent_path())) {
    CHECK(entry.path().filename() == "adapter.pt");  // no temporary file left behind
  }

  // The same base (same seed), other adapters: the file brings the trained ones back.
  torch::manual_seed(7);
  TransformerLM fresh(kOptions);
  {
    torch::NoGradGuard no_grad;  // the trained model's base parameters, adapters not yet
    const auto source = trained->named_parameters();
    for (auto& item : fresh->named_parameters()) item.value().copy_(source[item.key()]);
  }
  inject_lora(*fresh, kTargets, 4, 10.0);
  const auto ids = some_ids();
  CHECK_FALSE(torch::allclose(fresh->forward(ids), trained->forward(ids)));
  const auto loaded = load_lora_adapter(path, *fresh);
  CHECK(loaded.info == info);
  CHECK_FALSE(std::filesystem::exists(path.string() + ".bak"));  // one file, written whole
  CHECK(torch::equal(fresh->forward(ids), trained->forward(ids)));
  const auto state = lora_state_dict(*fresh);
  for (const auto& item : lora_state_dict(*trained))
    CHECK(torch::equal(state[item.key()], item.value()));

  // A file for Python's torch.load: a plain dict with names parallel to tensors.
  const auto archive = g2c::read_archive(path, g2c::ArchiveKind::plain("LoRA adapter"));
  CHECK(archive.string("format") == "g2c.lora_adapter");
  CHECK(archive.json("names").size() == 8);
  CHECK(archive.tensors("tensors").size() == 8);
  fs::remove_all(folder);
}

TEST_CASE("adapter_file_refuses_a_model_that_does_not_fit", "[lora]") {
  const auto folder = temporary_folder("refuse");
  const auto path = folder / "adapter.pt";
  save_lora_adapter(path, *lora_lm(torch::kFloat, /*rank=*/4, /*alpha=*/10.0));

  auto check_refused = [&](TransformerLM model, const std::string& what) {
    INFO(what);
    const auto before = snapshot(*model);
    CHECK_THROWS_AS(load_lora_adapter(path, *model), g2c::ValueError);
    CHECK(unchanged(*model, before));
  };
  check_refused(lora_lm(torch::kFloat, /*rank=*/2, /*alpha=*/10.0), "another rank");
  check_refused(lora_lm(torch::kFloat, 4, /*alpha=*/4.0), "another alpha");
  auto wider = kOptions;
  wider.embedding_dim(15);
  check_refused(lora_lm(torch::kFloat, 4, 10.0, wider), "another D");
  torch::manual_seed(7);
  TransformerLM fewer(kOptions);
  inject_lora(*fewer, {"q_proj"}, 4, 10.0);
  check_refused(fewer, "other targets");
  torch::manual_seed(7);
  check_refused(TransformerLM(kOptions), "no adapters at all");
  CHECK_THROWS_AS(save_lora_adapter(folder / "none.pt", *TransformerLM(kOptions)), g2c::ValueError);
  fs::remove_all(folder);
}

TEST_CASE("adapter_file_cut_short_or_foreign_is_a_value_error", "[lora]") {
  const auto folder = temporary_folder("damaged");
  const auto path = folder / "adapter.pt";
  auto model = lora_lm(torch::kFloat);
  save_lora_adapter(path, *model);
  const auto bytes = g2c::read_file(path);
  const auto before = snapshot(*model);

  g2c::write_file_atomic(path, bytes.substr(0, bytes.size() / 2));
  CHECK_THROWS_AS(load_lora_adapter(path, *model), g2c::ValueError);
  CHECK(unchanged(*model, before));

  auto foreign = g2c::archive_dict();
  foreign.insert("format", std::string("g2c.checkpoint"));
  g2c::write_archive(path, foreign);
  CHECK_THROWS_WITH(load_lora_adapter(path, *model), Catch::Contains("not a g2c LoRA adapter"));

  CHECK_THROWS_AS(load_lora_adapter(folder / "missing.pt", *model), g2c::ValueError);
  CHECK(unchanged(*model, before));
  fs::remove_all(folder);
}

TEST_CASE("lora_model_view_lists_the_adapters_and_sets_the_mode", "[lora]") {
  auto model = lora_lm(torch::kFloat);
  mark_only_lora_trainable(*model);
  LoRAModel view(model);
  std::set<std::string> names;
  for (const auto& item : view.named_trainable_parameters()) names.insert(item.key());
  CHECK(names.size() == 8);
  for (const auto& name : names) CHECK(name.find(".lora_") != std::string::npos);
  CHECK(view.train(false).model().is_training() == false);
  CHECK(view.train().model().is_training());
  CHECK_THROWS_AS(LoRAModel(std::shared_ptr<g2c::nn::Module>()), g2c::ValueError);
}

TEST_CASE("lora_model_on_the_accelerator_matches_the_cpu", "[lora]") {
  const auto accelerator = g2c::testing::accelerator_device();
  if (!accelerator) G2C_SKIP(g2c::testing::kNoAccelerator);
  // In float64 where the accelerator has it (CUDA), the two devices agree to rounding (5e-16 on
  // an H200), so an adapter left behind or applied differently stands out. MPS has no float64:
  // float32 there, compared relative to the size of the logits. Devices are compared by type: the
  // parameters land on "cuda:0", the accelerator is named "cuda".
  const bool in_double = accelerator->is_cuda();
  auto model = lora_lm(in_double ? torch::kDouble : torch::kFloat);
  LoRAModel view(model);
  const auto ids = some_ids();
  const auto on_cpu = model->forward(ids).detach();
  view.to(*accelerator);
  for (const auto& p : model->parameters()) CHECK(p.device().type() == accelerator->type());
  const auto there = model->forward(ids.to(*accelerator)).cpu();
  const double size = on_cpu.abs().max().item<double>();
  INFO("max |difference| = " << max_abs_diff(there, on_cpu) << ", largest |logit| " << size);
  CHECK(close(there, on_cpu, in_double ? 1e-9 * size : 1e-5 * size));
}
