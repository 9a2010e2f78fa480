// Framework tests of the exercises' shared stack (exercises/common): the tiny attention LM built
// from the course's modules, the batches, the training loop (reproducibility, a step that
// learns, the stop at a non-finite loss), runs side by side, generation and the corpus split.
#include <array>
#include <cmath>
#include <filesystem>
#include <limits>
#include <string>

#include <fmt/format.h>
#include <torch/torch.h>
#include <unistd.h>

#include "exercises/common/batches.h"
#include "exercises/common/corpus.h"
#include "exercises/common/figures.h"
#include "exercises/common/generation.h"
#include "exercises/common/side_by_side.h"
#include "exercises/common/tasks.h"
#include "exercises/common/tiny_lm.h"
#include "exercises/common/training.h"
#include "g2c/core/atomic_file.h"
#include "g2c/core/errors.h"
#include "g2c/nn/optim.h"
#include "torch_test.h"

using Catch::Matchers::Contains;
using g2c::exercises::TargetRule;
using g2c::exercises::TinyAttentionLM;
using g2c::exercises::TinyAttentionLMOptions;
using g2c::exercises::TrainLanguageModelOptions;
using g2c::exercises::WindowSampler;
using g2c::testing::close;
using g2c::testing::max_abs_diff;

namespace {

constexpr std::int64_t kVocab = 11, kContext = 8, kDim = 16;

TinyAttentionLM make_model(std::uint64_t seed, bool causal = true, std::int64_t heads = 0) {
  torch::manual_seed(seed);
  return TinyAttentionLM(
      TinyAttentionLMOptions(kVocab, kContext, kDim).causal(causal).num_heads(heads));
}

/// A stream with structure to learn: a repeating pattern of the vocabulary's ids.
torch::Tensor pattern_stream(std::int64_t length) {
  return torch::arange(length, torch::kLong).remainder(kVocab);
}

/// Per-position losses (B, T') of logits against targets, without reduction.
torch::Tensor position_losses(const torch::Tensor& logits, const torch::Tensor& targets) {
  const auto scored = logits.narrow(1, 0, targets.size(1));
  return torch::nn::functional::cross_entropy(
             scored.reshape({-1, scored.size(2)}), targets.reshape({-1}),
             torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone))
      .view(targets.sizes());
}

/// A dozen AdamW steps on random windows, validation every 4 steps.
g2c::exercises::TrainResult train_model(TinyAttentionLM model, std::uint64_t batch_seed,
                                        std::int64_t steps = 12) {
  g2c::nn::AdamW optimizer(model->parameters(), 1e-2, {0.9, 0.999}, 1e-8, 1e-4);
  const auto stream =
      torch::randint(kVocab, {400}, at::make_generator<at::CPUGeneratorImpl>(3), torch::kLong);
  WindowSampler batches(stream, kContext, 4, TargetRule::kWithinWindow, batch_seed);
  const auto validation =
      WindowSampler(stream, kContext, 4, TargetRule::kWithinWindow, 0).fixed(3, 9);
  return g2c::exercises::train_language_model(
      *model, optimizer, batches, validation,
      TrainLanguageModelOptions().steps(steps).log_every(4).show_progress(false));
}

g2c::exercises::TrainResult train_briefly(std::uint64_t model_seed, std::uint64_t batch_seed) {
  return train_model(make_model(model_seed), batch_seed);
}

/// A model whose logits are NaN while every weight is finite, as with a fully masked attention
/// row: softmax over nothing but -inf.
class FullyMaskedImpl : public g2c::nn::Module {
 public:
  FullyMaskedImpl() { table = register_parameter("table", torch::randn({kVocab, kVocab})); }
  torch::Tensor forward(const torch::Tensor& ids) override {
    const auto scores = torch::full({ids.size(0), ids.size(1), ids.size(1)},
                                    -std::numeric_limits<float>::infinity());
    const auto weights = torch::softmax(scores, -1);    // (B, T, T): all NaN
    return torch::matmul(weights, table.index({ids}));  // (B, T, V)
  }
  torch::Tensor table;
};
TORCH_MODULE(FullyMasked);

}  // namespace

TEST_CASE("tiny_lm_output_shapes", "[exercises]") {
  const std::int64_t heads = GENERATE(0, 1, 4);
  auto model = make_model(0, /*causal=*/true, heads);
  const auto ids = torch::randint(kVocab, {3, 5}, torch::kLong);
  CHECK(model(ids).sizes() == torch::IntArrayRef({3, 5, kVocab}));
  CHECK(model->embed(ids).sizes() == torch::IntArrayRef({3, 5, kDim}));
  const auto weights = model->attention_weights(ids);
  if (heads == 0) {
    CHECK(weights.sizes() == torch::IntArrayRef({3, 5, 5}));
  } else {
    CHECK(weights.sizes() == torch::IntArrayRef({3, heads, 5, 5}));
  }
}

TEST_CASE("tiny_lm_is_the_course_modules_composed", "[exercises]") {
  auto model = make_model(1);
  std::vector<std::string> names;
  for (const auto& item : model->named_parameters()) names.push_back(item.key());
  CHECK(names == std::vector<std::string>{
                     "token_embedding.weight", "position_embedding.weight", "attention.q_proj.W",
                     "attention.q_proj.b", "attention.k_proj.W", "attention.k_proj.b",
                     "attention.v_proj.W", "attention.v_proj.b", "attention.out_proj.W",
                     "attention.out_proj.b", "head.W", "head.b"});
  std::int64_t count = 0;
  for (const auto& p : model->parameters()) count += p.numel();
  CHECK(count ==
        kVocab * kDim + kContext * kDim + 4 * (kDim * kDim + kDim) + kDim * kVocab + kVocab);

  // The same computation written out with LibTorch's own operators on the model's weights.
  const auto ids = torch::randint(kVocab, {2, 6}, torch::kLong);
  const auto x = torch::embedding(model->token_embedding->weight, ids) +
                 model->position_embedding->weight.narrow(0, 0, 6);
  auto& attention = *model->self_attention;
  const auto q = torch::matmul(x, attention.q_proj->W) + attention.q_proj->b;
  const auto k = torch::matmul(x, attention.k_proj->W) + attention.k_proj->b;
  const auto v = torch::matmul(x, attention.v_proj->W) + attention.v_proj->b;
  const auto mixed = at::scaled_dot_product_attention(q, k, v, {}, 0.0, /*is_causal=*/true);
  const auto out = torch::matmul(mixed, attention.out_proj->W) + attention.out_proj->b;
  const auto expected = torch::matmul(out, model->head->W) + model->head->b;
  const auto actual = model(ids);
  INFO("max |difference| = " << max_abs_diff(actual, expected));
  CHECK(close(actual, expected, 1e-5));
}

TEST_CASE("tiny_lm_rejects_ids_of_the_wrong_shape", "[exercises]") {
  auto model = make_model(0);
  CHECK_THROWS_AS(model(torch::zeros({2, kContext + 1}, torch::kLong)), g2c::ValueError);
  CHECK_THROWS_WITH(model(torch::zeros({2, 3, 4}, torch::kLong)), Contains("(B, T)"));
  CHECK_THROWS_AS(model(torch::zeros({2, 3})), g2c::ValueError);
}

TEST_CASE("causal_loss_is_independent_of_future_tokens", "[exercises]") {
  const bool causal = GENERATE(true, false);
  auto model = make_model(2, causal);
  const auto ids = torch::randint(kVocab, {2, kContext}, torch::kLong);
  const auto targets = torch::randint(kVocab, {2, kContext}, torch::kLong);
  auto changed = ids.clone();
  changed.narrow(1, 4, kContext - 4).copy_((ids.narrow(1, 4, kContext - 4) + 1) % kVocab);
  torch::NoGradGuard no_grad;
  const auto before = position_losses(model(ids), targets).narrow(1, 0, 4);
  const auto after = position_losses(model(changed), targets).narrow(1, 0, 4);
  const double difference = max_abs_diff(before, after);
  INFO("causal " << causal << ", largest change of the losses at positions 0-3: " << difference);
  if (causal) {
    CHECK(difference < 1e-6);
  } else {
    CHECK(difference > 1e-4);
  }
}

TEST_CASE("window_sampler_cuts_consecutive_windows", "[exercises]") {
  const auto stream = torch::arange(100, torch::kLong);
  WindowSampler within(stream, 6, 5, TargetRule::kWithinWindow, 1);
  const auto a = within.next();
  CHECK(a.inputs.sizes() == torch::IntArrayRef({5, 6}));
  CHECK(torch::equal(a.targets, a.inputs.narrow(1, 1, 5)));
  CHECK(
      torch::equal(a.inputs - a.inputs.select(1, 0).unsqueeze(1), torch::arange(6).expand({5, 6})));

  WindowSampler next(stream, 6, 5, TargetRule::kNextToken, 1);
  const auto b = next.next();
  CHECK(b.targets.sizes() == torch::IntArrayRef({5, 6}));
  CHECK(torch::equal(b.targets, b.inputs + 1));

  WindowSampler two_ahead(stream, 6, 5, TargetRule::kTwoAhead, 1);
  const auto c = two_ahead.next();
  CHECK(c.inputs.sizes() == torch::IntArrayRef({5, 6}));
  CHECK(torch::equal(c.targets, c.inputs.narrow(1, 2, 4)));  // position t -> the token at t + 2
  CHECK_THROWS_AS(WindowSampler(stream, 2, 5, TargetRule::kTwoAhead, 1), g2c::ValueError);

  const auto first = within.fixed(3, 7), second = within.fixed(3, 7);
  for (std::size_t i = 0; i < first.size(); ++i)
    CHECK(torch::equal(first[i].inputs, second[i].inputs));
  CHECK_THROWS_AS(WindowSampler(torch::arange(5, torch::kLong), 6, 2, TargetRule::kWithinWindow, 0),
                  g2c::ValueError);
  CHECK_THROWS_AS(WindowSampler(torch::arange(6, torch::kLong), 6, 2, TargetRule::kNextToken, 0),
                  g2c::ValueError);
}

TEST_CASE("next_token_loss_matches_functional_cross_entropy", "[exercises]") {
  torch::manual_seed(4);
  const auto logits = torch::randn({3, 7, kVocab}) * 5;
  const auto targets = torch::randint(kVocab, {3, 6}, torch::kLong);
  const auto expected = torch::nn::functional::cross_entropy(
      logits.narrow(1, 0, 6).reshape({-1, kVocab}), targets.reshape({-1}));
  CHECK(close(g2c::exercises::next_token_loss(logits, targets), expected, 1e-5));
  CHECK_THROWS_AS(g2c::exercises::next_token_loss(logits, torch::zeros({3, 8}, torch::kLong)),
                  g2c::ValueError);
}

TEST_CASE("one_step_lowers_the_loss_on_a_fixed_batch", "[exercises]") {
  const bool sgd = GENERATE(true, false);
  auto model = make_model(5);
  // A stream exactly one window long: every batch is the same batch.
  const auto stream = torch::randint(kVocab, {kContext}, torch::kLong);
  WindowSampler batches(stream, kContext, 4, TargetRule::kWithinWindow, 0);
  const auto fixed = batches.fixed(1, 0);
  std::unique_ptr<g2c::nn::Optimizer> optimizer;
  if (sgd) {
    optimizer = std::make_unique<g2c::nn::SGD>(model->parameters(), 0.5);
  } else {
    optimizer = std::make_unique<g2c::nn::AdamW>(model->parameters(), 1e-2);
  }
  const double before = g2c::exercises::mean_loss(*model, fixed);
  const auto result = g2c::exercises::train_language_model(
      *model, *optimizer, batches, fixed,
      TrainLanguageModelOptions().steps(1).show_progress(false));
  const double after = g2c::exercises::mean_loss(*model, fixed);
  INFO((sgd ? "SGD" : "AdamW") << ": loss " << before << " -> " << after);
  CHECK(result.final_train_loss == Approx(before).epsilon(1e-6));
  CHECK(after < before);
}

TEST_CASE("the_same_seeds_give_the_same_curve", "[exercises]") {
  const auto first = train_briefly(6, 1), second = train_briefly(6, 1);
  CHECK(first.steps == std::vector<std::int64_t>{0, 4, 8, 11});
  CHECK(first.train_loss == second.train_loss);
  CHECK(first.val_loss == second.val_loss);
  const auto other_batches = train_briefly(6, 2);
  CHECK(other_batches.train_loss != first.train_loss);
  CHECK(first.tokens == 12 * 4 * kContext);
  CHECK(first.train_seconds > 0.0);
  CHECK(first.wall_seconds >= first.train_seconds);
}

TEST_CASE("runs_side_by_side_equal_runs_one_after_the_other", "[exercises]") {
  auto both = [](bool concurrent) {
    // Models are built before the runs start: LibTorch's global generator is shared.
    auto first = make_model(7), second = make_model(7, /*causal=*/false);
    std::vector<g2c::exercises::TrainResult> results(2);
    g2c::exercises::run_side_by_side({[&] { results[0] = train_model(first, 1, 20); },
                                      [&] { results[1] = train_model(second, 2, 20); }},
                                     concurrent, g2c::exercises::threads_per_job(2));
    return results;
  };
  const auto sequential = both(false);
  const auto concurrent = both(true);
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK(sequential[i].train_loss == concurrent[i].train_loss);
    CHECK(sequential[i].val_loss == concurrent[i].val_loss);
  }
  CHECK_THROWS_WITH(g2c::exercises::run_side_by_side(
                        {[] {}, [] { throw g2c::ValueError("second job failed"); }}, true, 1),
                    Contains("second job failed"));
}

TEST_CASE("training_stops_at_a_fully_masked_row_with_a_diagnosis", "[exercises]") {
  FullyMasked model;
  g2c::nn::SGD optimizer(model->parameters(), 0.1);
  WindowSampler batches(pattern_stream(50), 4, 2, TargetRule::kWithinWindow, 0);
  CHECK_THROWS_AS(g2c::exercises::train_language_model(
                      *model, optimizer, batches, {},
                      TrainLanguageModelOptions().steps(5).show_progress(false).label("masked")),
                  g2c::exercises::TrainingDiverged);
  CHECK_THROWS_WITH(
      g2c::exercises::train_language_model(
          *model, optimizer, batches, {},
          TrainLanguageModelOptions().steps(5).show_progress(false).label("masked").files_to_check(
              {"g2c/attention/self_attention.cpp"})),
      Contains("NaN at step 0") && Contains("fully masked") &&
          Contains("g2c/attention/self_attention.cpp"));
}

TEST_CASE("training_stops_when_a_huge_learning_rate_breaks_the_weights", "[exercises]") {
  auto model = make_model(8);
  g2c::nn::SGD optimizer(model->parameters(), 1e12);
  WindowSampler batches(pattern_stream(200), kContext, 8, TargetRule::kWithinWindow, 0);
  try {
    g2c::exercises::train_language_model(
        *model, optimizer, batches, {}, TrainLanguageModelOptions().steps(50).show_progress(false));
    FAIL("training with lr 1e12 did not stop");
  } catch (const g2c::exercises::TrainingDiverged& error) {
    const std::string message = error.what();
    INFO(message);
    CHECK_THAT(message, Contains("learning rate"));
    CHECK_THAT(message, Contains("after"));
  }
}

TEST_CASE("continue_text_samples_through_module_06", "[exercises]") {
  auto model = make_model(9);
  const std::vector<std::int64_t> prompt{1, 2, 3, 4, 5, 6, 7};
  auto draw = [&](std::uint64_t seed) {
    return g2c::exercises::continue_text(model.ptr(), kVocab, kContext - 1, prompt, 12,
                                         at::make_generator<at::CPUGeneratorImpl>(seed));
  };
  const auto first = draw(3);
  CHECK(first.size() == 12);
  for (const auto id : first) CHECK((id >= 0 && id < kVocab));
  CHECK(draw(3) == first);
  CHECK_THROWS_AS(g2c::exercises::continue_text(model.ptr(), kVocab, kContext - 1, {1, 2}, 3,
                                                at::make_generator<at::CPUGeneratorImpl>(0)),
                  g2c::ValueError);
}

TEST_CASE("corpus_split_is_ninety_ten", "[exercises]") {
  const auto corpus = g2c::exercises::split_corpus(torch::arange(105, torch::kLong));
  CHECK(corpus.train.numel() == 94);
  CHECK(corpus.val.numel() == 11);
  CHECK(corpus.val[0].item<std::int64_t>() == 94);

  const auto random = g2c::exercises::random_corpus(8, 400, 7);
  CHECK(torch::equal(random.train, g2c::exercises::random_corpus(8, 400, 7).train));
  CHECK(random.val.numel() == 100);
  CHECK(random.decode({3, 0}) == "3 0 ");
  CHECK(random.val_prefix(2).size() == 2);
  CHECK_THROWS_AS(random.val_prefix(101), g2c::ValueError);
}

TEST_CASE("figure_builders_write_the_keys_plot_py_reads", "[exercises]") {
  using g2c::exercises::Figure;
  using g2c::exercises::Panel;
  using g2c::exercises::Points;
  using g2c::exercises::Series;
  // plot.py iterates series, hlines, panels and contours: one entry must still arrive as an array
  // of one, not as the entry itself.
  const nlohmann::json line = Figure::line("loss.png", "Loss", "step", "nats")
                                  .add(Series("train", "/x", "/y").style("--").marker("o"))
                                  .hline(1.0, "ln V")
                                  .logy()
                                  .json();
  CHECK(line == nlohmann::json::parse(R"({"file": "loss.png", "kind": "line", "title": "Loss",
      "xlabel": "step", "ylabel": "nats", "logy": true,
      "series": [{"label": "train", "x": "/x", "y": "/y", "style": "--", "marker": "o"}],
      "hlines": [{"y": 1.0, "label": "ln V"}]})"));
  // Unset keys are left out, so plot.py's defaults apply: no label, x = 0, 1, 2, ...
  const nlohmann::json bar =
      Figure::bar("b.png", "", "", "").add(Series("", nullptr, {1, 2})).json();
  CHECK(bar == nlohmann::json::parse(R"({"file": "b.png", "kind": "bar", "title": "",
      "series": [{"y": [1, 2]}]})"));
  const nlohmann::json maps =
      Figure::heatmaps("h.png", "Heads")
          .columns(2)
          .add(Panel("/w").title("head 0").range(0.0, 1.0).contour({0.5}, "black"))
          .add(Panel("/v").add(Points("/px", "/py").label("data")))
          .json();
  REQUIRE(maps["panels"].size() == 2);
  CHECK(maps["panels"][0] == nlohmann::json::parse(R"({"matrix": "/w", "title": "head 0",
      "vmin": 0.0, "vmax": 1.0, "contours": [{"levels": [0.5], "color": "black"}]})"));
  CHECK(maps["panels"][1]["points"] ==
        nlohmann::json::parse(R"([{"x": "/px", "y": "/py", "label": "data"}])"));
  const nlohmann::json list = g2c::exercises::figures({Figure::line("a.png", "A", "", "")});
  REQUIRE(list.is_array());
  CHECK(list.size() == 1);
  CHECK(list[0]["file"] == "a.png");
}

// Modules 13-15 share their task data through artifacts/datasets/shakespeare-tasks: what one
// program wrote the next one reads back, item for item, and anything that would make other items
// (another seed or corpus) or a damaged file builds it again.
TEST_CASE("stored_task_data_reads_back_what_it_wrote", "[exercises]") {
  namespace fs = std::filesystem;
  const auto root =
      fs::temp_directory_path() / ("g2c-exercises-tasks-" + std::to_string(::getpid()));
  fs::remove_all(root);
  ::setenv("G2C_ARTIFACTS_DIR", root.c_str(), /*overwrite=*/1);
  std::string corpus;
  for (int i = 0; i < 90; ++i) {
    corpus +=
        fmt::format("{}:\nO speak again, bright angel, for line {}.\n\n",
                    std::array{"ROMEO", "JULIET", "NURSE"}[static_cast<std::size_t>(i % 3)], i);
  }
  const g2c::exercises::TaskDataOptions options{.seed = 3,
                                                .max_train_per_task = 20,
                                                .max_val_per_task = 10,
                                                .speakers = 2,
                                                .chunk_chars = 300,
                                                .held_out_every = 2};
  const auto lines = [](const std::vector<g2c::exercises::TaskItem>& items) {
    std::vector<std::string> out;
    for (const auto& item : items) out.push_back(item.to_json().dump());
    return out;
  };

  const auto written = g2c::exercises::stored_task_data(corpus, options);
  CHECK_FALSE(written.read);
  REQUIRE_FALSE(written.data.val.empty());
  const auto read = g2c::exercises::stored_task_data(corpus, options);
  CHECK(read.read);
  CHECK(lines(read.data.train) == lines(written.data.train));
  CHECK(lines(read.data.val) == lines(written.data.val));
  CHECK(read.data.speakers == written.data.speakers);
  CHECK(read.data.manifest == written.data.manifest);

  auto other_seed = options;
  other_seed.seed = 4;
  CHECK_FALSE(g2c::exercises::stored_task_data(corpus, other_seed).read);
  CHECK_FALSE(g2c::exercises::stored_task_data(corpus, options).read);  // seed 4's were stored
  const auto longer = corpus + "ROMEO:\nOne line more.\n\n";
  CHECK_FALSE(g2c::exercises::stored_task_data(longer, options).read);
  CHECK(g2c::exercises::stored_task_data(longer, options).read);
  g2c::write_file_atomic(written.folder / "val.jsonl", "{\"task\": \"speaker\"\n");
  const auto rebuilt = g2c::exercises::stored_task_data(longer, options);
  CHECK_FALSE(rebuilt.read);
  CHECK(g2c::exercises::stored_task_data(longer, options).read);
  ::unsetenv("G2C_ARTIFACTS_DIR");
  fs::remove_all(root);
}
