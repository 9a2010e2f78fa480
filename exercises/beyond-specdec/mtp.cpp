// Beyond specdec — a multi-token-prediction head on a frozen ladder model, and the model drafting
// for itself. The head (your MTPHead: one combiner, one block, a LayerNorm, the base's tied
// unembedding) learns on TinyShakespeare to predict the token two ahead from the frozen base's
// hidden state and the next token, with module 03b's AdamW on the head's parameters alone, through
// the exercises' one training loop. Then, on held-out windows: the head's two-ahead loss (your
// mtp_loss) and top-1 accuracy against the base's next-token ones, before and after training. Then
// self-speculation (mtp_generate: each base pass verifies the head's draft with your greedy_verify
// and drafts again from the same hidden states) against a separate drafter at k 1 (the lesson's
// loop), on prompts from the held-out text: identity with greedy decoding, acceptance, tokens per
// base pass, and the clock against module 11's generate, timed in alternation. Writes
// specdec_mtp.json and specdec_mtp_*.png.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "exercises/beyond-specdec/prompts.h"
#include "exercises/common/batches.h"
#include "exercises/common/cli.h"
#include "exercises/common/data.h"
#include "exercises/common/figures.h"
#include "exercises/common/timing.h"
#include "exercises/common/training.h"
#include "g2c/core/errors.h"
#include "g2c/nn/optim.h"
#include "g2c/pretraining/data.h"
#include "g2c/sampling/generate.h"
#include "g2c/sampling/logits_model.h"
#include "g2c/sampling/text_generation.h"
#include "g2c/specdec/generate.h"
#include "g2c/specdec/mtp.h"

namespace exercise_beyond_specdec_mtp {

namespace {

using g2c::exercises::Figure;
using g2c::exercises::Series;

/// The head as a model of the exercises' training loop: ids (B, T) -> (B, T − 1, V), row t the
/// head's logits for the token at t + 2 (TargetRule::kTwoAhead's targets). Only the head is
/// registered: the loop's optimizer and device see the head alone; the base stays frozen.
class TwoAheadModelImpl : public g2c::nn::Module {
 public:
  explicit TwoAheadModelImpl(g2c::specdec::MTPHead head_) : head(std::move(head_)) {
    register_module("head", head);
  }
  torch::Tensor forward(const torch::Tensor& ids) override {
    const auto hidden = g2c::specdec::hidden_states(*head->base, ids);  // (B, T, D), no gradient
    const auto length = ids.size(1) - 1;
    return head(hidden.narrow(1, 0, length), ids.narrow(1, 1, length));  // (B, T - 1, V)
  }
  g2c::specdec::MTPHead head;
};
TORCH_MODULE(TwoAheadModel);

struct Scores {
  double base_loss = 0.0, base_accuracy = 0.0;  // next token
  double head_loss = 0.0, head_accuracy = 0.0;  // two ahead
};

/// The base's next-token and the head's two-ahead loss and top-1 accuracy over `batches`.
Scores score(g2c::transformer::TransformerLMImpl& base, g2c::specdec::MTPHeadImpl& head,
             const std::vector<g2c::exercises::TokenBatch>& batches) {
  torch::NoGradGuard no_grad;
  Scores total;
  for (const auto& batch : batches) {
    const auto ids = batch.inputs.to(base.device());
    const std::int64_t length = ids.size(1);
    const auto hidden = base.hidden_states(ids);  // (B, T, D)
    const auto next_logits = torch::matmul(hidden, base.token_embed->weight.t()) + base.head_bias;
    const auto rows = next_logits.narrow(1, 0, length - 1);  // (B, T-1, V)
    const auto next_targets = ids.narrow(1, 1, length - 1);
    total.base_loss += torch::nn::functional::cross_entropy(rows.reshape({-1, rows.size(2)}),
                                                            next_targets.reshape(-1))
                           .item<double>();
    total.base_accuracy +=
        (rows.argmax(-1) == next_targets).to(torch::kDouble).mean().item<double>();
    const auto two_ahead =
        head.forward(hidden.narrow(1, 0, length - 1), next_targets);  // (B, T-1, V)
    total.head_loss += g2c::specdec::mtp_loss(two_ahead, ids).item<double>();
    total.head_accuracy +=
        (two_ahead.narrow(1, 0, length - 2).argmax(-1) == ids.narrow(1, 2, length - 2))
            .to(torch::kDouble)
            .mean()
            .item<double>();
  }
  const auto n = static_cast<double>(batches.size());
  return {total.base_loss / n, total.base_accuracy / n, total.head_loss / n,
          total.head_accuracy / n};
}

nlohmann::json to_json(const Scores& s) {
  return {{"base_next_token_loss", s.base_loss},
          {"base_next_token_accuracy", s.base_accuracy},
          {"head_two_ahead_loss", s.head_loss},
          {"head_two_ahead_accuracy", s.head_accuracy}};
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Beyond specdec: an MTP head trained on a frozen ShakespeareLM, its two-ahead loss and\n"
      "accuracy, and the model drafting for itself (self-speculation) against a separate\n"
      "drafter. Writes specdec_mtp.json and specdec_mtp_*.png (run 12_scaling first)."};
  g2c::exercises::CommonOptions options;
  options.out = "results/beyond-specdec";
  options.steps = 300;
  g2c::exercises::add_common_options(app, options);
  std::string base_name = "ShakespeareLM-0.8M", drafter_name = "ShakespeareLM-0.1M";
  std::int64_t batch = 16, eval_batches = 16, prompts = 20, prompt_tokens = 32, new_tokens = 80,
               repeats = 3;
  double lr = 1e-3;
  app.add_option("--base", base_name, "The frozen base model (name, alias or folder)");
  app.add_option("--drafter", drafter_name, "The separate drafter it is compared with");
  app.add_option("--batch", batch, "Rows per training step").range(1, 4096);
  app.add_option("--lr", lr, "AdamW's learning rate for the head").positive();
  app.add_option("--eval-batches", eval_batches, "Held-out batches scored").range(1, 10000);
  app.add_option("--prompts", prompts, "Prompts cut from the held-out text").range(1, 1000);
  app.add_option("--prompt-tokens", prompt_tokens, "Tokens per prompt").range(1, 4096);
  app.add_option("--new-tokens", new_tokens, "Tokens generated per prompt").range(1, 4096);
  app.add_option("--repeats", repeats, "Timed runs per measurement (the median is kept)")
      .range(1, 100);
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    auto base = g2c::sampling::load_text_model(base_name, device);
    auto& base_model = base.artifact.model;
    base_model->eval();
    for (auto& p : base_model->parameters()) p.requires_grad_(false);
    const std::int64_t context = base_model->max_seq_len;
    if (prompt_tokens + new_tokens >= context) {
      throw g2c::ValueError(fmt::format(
          "--prompt-tokens {} + --new-tokens {} must stay below the base's window of {}: "
          "self-speculation crops to it and greedy decoding would then differ",
          prompt_tokens, new_tokens, context));
    }

    // The head, trained on the two-ahead targets of TinyShakespeare's first 90 %.
    const auto text = g2c::exercises::load_tinyshakespeare().substr(0, 1'000'000);
    const auto split = g2c::pretraining::split_token_stream(base.encode(text), 0.9);
    torch::manual_seed(options.seed);
    g2c::specdec::MTPHead head(base_model);
    TwoAheadModel model(head);
    model->to(device);
    g2c::exercises::WindowSampler batches(split.train, context, batch,
                                          g2c::exercises::TargetRule::kTwoAhead, options.seed + 1);
    const auto validation = g2c::exercises::WindowSampler(split.val, context, batch,
                                                          g2c::exercises::TargetRule::kTwoAhead, 0)
                                .fixed(eval_batches, 0);
    const auto before = score(*base_model, *head, validation);
    std::int64_t trainable = 0;
    for (const auto& p : model->parameters()) trainable += p.numel();
    g2c::nn::AdamW optimizer(model->parameters(), lr, {0.9, 0.95}, 1e-8, 0.01);
    const auto run = g2c::exercises::train_language_model(
        *model, optimizer, batches, validation,
        g2c::exercises::TrainLanguageModelOptions()
            .steps(options.steps)
            .log_every(std::max<std::int64_t>(1, options.steps / 15))
            .label("MTP head")
            .show_progress(!options.quiet)
            .files_to_check({"g2c/specdec/mtp.cpp"}));
    model->eval();
    const auto after = score(*base_model, *head, validation);
    fmt::print(
        "{} frozen ({} parameters); the head: {} parameters, {} steps of {} x {} in {:.0f} s\n"
        "held out: the base's next token loss {:.3f}, top-1 {:.3f}; the head two ahead: loss "
        "{:.3f} -> {:.3f}, top-1 {:.3f} -> {:.3f}\n",
        base.artifact.summary.name, g2c::transformer::parameter_count(base_model->options),
        trainable, options.steps, batch, context, run.wall_seconds, after.base_loss,
        after.base_accuracy, before.head_loss, after.head_loss, before.head_accuracy,
        after.head_accuracy);

    // Self-speculation against a separate drafter at k 1, and module 11's greedy generate.
    const auto prompt_ids =
        g2c::exercises::held_out_prompts(base, prompts, prompt_tokens, options.seed);
    const auto greedy = g2c::sampling::GenerateOptions().temperature(0.0);
    auto drafter = g2c::sampling::load_text_model(drafter_name, device);
    drafter.artifact.model->eval();
    g2c::sampling::TransformerLogitsModel base_scorer(*base_model),
        drafter_scorer(*drafter.artifact.model);
    struct Way {
      std::string name;
      std::function<g2c::specdec::SpeculativeResult(const torch::Tensor&)> run;
    };
    const std::vector<Way> ways = {{"self-speculation (MTP head)",
                                    [&](const torch::Tensor& prompt) {
                                      return g2c::specdec::mtp_generate(*base_model, *head, prompt,
                                                                        new_tokens);
                                    }},
                                   {fmt::format("{} drafting, k 1", drafter.artifact.summary.name),
                                    [&](const torch::Tensor& prompt) {
                                      return g2c::specdec::speculative_generate(
                                          base_scorer, drafter_scorer, prompt, new_tokens, 1);
                                    }}};
    std::vector<std::vector<std::int64_t>> reference;
    for (const auto& prompt : prompt_ids) {
      reference.push_back(g2c::exercises::id_vector(
          g2c::sampling::generate(base_model, prompt, new_tokens, greedy)));
    }
    const double total_tokens = static_cast<double>(prompts * new_tokens);
    nlohmann::json ways_json = nlohmann::json::array();
    bool all_identical = true;
    for (const auto& way : ways) {
      g2c::specdec::SpecStats total;
      std::int64_t identical = 0;
      for (std::size_t p = 0; p < prompt_ids.size(); ++p) {
        const auto result = way.run(prompt_ids[p]);
        identical += g2c::exercises::id_vector(result.ids) == reference[p] ? 1 : 0;
        total += result.stats;
      }
      all_identical = all_identical && identical == prompts;
      const auto [way_seconds, greedy_seconds, ratio] = g2c::exercises::paired_seconds(
          [&] {
            for (const auto& prompt : prompt_ids) way.run(prompt);
          },
          [&] {
            for (const auto& prompt : prompt_ids) {
              g2c::sampling::generate(base_model, prompt, new_tokens, greedy);
            }
          },
          repeats);
      fmt::print(
          "{}: identical {}/{}, acceptance {:.2f}, {:.2f} tokens per base pass, {:.0f} tokens/s "
          "against greedy's {:.0f} ({:.2f}x)\n",
          way.name, identical, prompts, total.acceptance_rate(), total.tokens_per_pass(),
          total_tokens / way_seconds, total_tokens / greedy_seconds, 1.0 / ratio);
      ways_json.push_back({{"name", way.name},
                           {"identical_prompts", identical},
                           {"acceptance_rate", total.acceptance_rate()},
                           {"tokens_per_pass", total.tokens_per_pass()},
                           {"target_passes", total.target_passes},
                           {"tokens_per_second", total_tokens / way_seconds},
                           {"greedy_tokens_per_second", total_tokens / greedy_seconds},
                           {"speedup_over_greedy", 1.0 / ratio}});
    }
    fmt::print("greedy output identical on every prompt: {}\n", all_identical ? "yes" : "NO");

    auto result = g2c::exercises::run_metadata("beyond_specdec_mtp", options, device);
    result["config"] = {{"base", base.artifact.summary.name},
                        {"drafter", drafter.artifact.summary.name},
                        {"steps", options.steps},
                        {"batch_size", batch},
                        {"context_length", context},
                        {"lr", lr},
                        {"eval_batches", eval_batches},
                        {"prompts", prompts},
                        {"prompt_tokens", prompt_tokens},
                        {"new_tokens", new_tokens},
                        {"repeats", repeats}};
    result["head"] = {{"parameters", trainable},
                      {"base_parameters", g2c::transformer::parameter_count(base_model->options)},
                      {"seconds", run.wall_seconds},
                      {"before", to_json(before)},
                      {"after", to_json(after)}};
    result["run"] = {
        {"steps", run.steps}, {"train_loss", run.train_loss}, {"val_loss", run.val_loss}};
    result["ways"] = ways_json;
    result["all_identical"] = all_identical;
    nlohmann::json names = nlohmann::json::array(), acceptance = nlohmann::json::array(),
                   per_pass = nlohmann::json::array();
    for (const auto& way : ways_json) {
      names.push_back(way["name"]);
      acceptance.push_back(way["acceptance_rate"]);
      per_pass.push_back(way["tokens_per_pass"]);
    }
    result["way_names"] = names;
    auto curve = Figure::line("specdec_mtp_loss.png", "The MTP head learning the token two ahead",
                              "step", "two-ahead cross-entropy (nats)");
    curve.add(Series("train batch", "/run/steps", "/run/train_loss"));
    curve.add(Series("held out", "/run/steps", "/run/val_loss").marker("o"));
    curve.hline(after.base_loss, "the base, one ahead (held out)");
    auto bars = Figure::bar("specdec_mtp_drafting.png",
                            "Drafting one token ahead: the model itself against a separate drafter",
                            "", "per base pass");
    bars.add(Series("acceptance rate", "/way_names", acceptance));
    bars.add(Series("tokens per pass", "/way_names", per_pass));
    result["figures"] = g2c::exercises::figures({curve, bars});
    const auto path = g2c::exercises::save_result(options, "specdec_mtp.json", result);
    g2c::exercises::plot_result(options, path);
    if (!all_identical) {
      throw g2c::RuntimeError("a speculative output differs from greedy decoding: see above");
    }
  });
}

}  // namespace exercise_beyond_specdec_mtp
