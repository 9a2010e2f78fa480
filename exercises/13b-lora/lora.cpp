// Exercise 13b — LoRA against full fine-tuning. The same SFT run as 13_sft (the same data, steps,
// batches and your SFTTrainer) twice from the same base: once updating every weight, once with
// the base frozen and small low-rank adapters on the attention projections (your LoRALinear
// forward, injected by inject_lora, frozen by your mark_only_lora_trainable). Side by side:
// parameters trained, the size of what has to be saved, time per step and held-out accuracy.
// Then the adapters are merged into the weights (your merge) and the merged model's logits are
// compared with the unmerged ones, and unmerged again (your unmerge) to get the base back.
#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "exercises/13-sft/sft_runs.h"
#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "g2c/core/errors.h"
#include "g2c/lora/adapter.h"
#include "g2c/lora/inject.h"
#include "g2c/sampling/text_generation.h"
#include "g2c/sft/trainer.h"

namespace exercise_13b_lora {

namespace {

namespace fs = std::filesystem;

struct Config {
  double lr_full = 1e-3;  // full fine-tuning, as 13_sft
  double lr_lora = 3e-3;  // adapters start from zero and are few: a larger step is usual
  std::int64_t rank = 8;
  double alpha = 16.0;
  std::vector<std::string> targets = {"q_proj", "v_proj"};
};

/// Logits of a few held-out prompts, (N, T, V) on the CPU: what merging must not change.
torch::Tensor probe_logits(g2c::transformer::TransformerLM& model, const torch::Tensor& ids) {
  torch::NoGradGuard no_grad;
  const bool was_training = model->is_training();
  model->eval();
  auto logits = model->forward(ids.to(model->device())).to(torch::kCPU);
  model->train(was_training);
  return logits;
}

double max_difference(const torch::Tensor& a, const torch::Tensor& b) {
  return (a.to(torch::kDouble) - b.to(torch::kDouble)).abs().max().item<double>();
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Module 13b: LoRA against full fine-tuning. The same SFT run twice from one base model:\n"
      "every weight trained, then only low-rank adapters on the attention projections; compares\n"
      "parameters trained, saved size, time per step and held-out accuracy, then merges the\n"
      "adapters and checks the logits. Writes lora.json, adapter.pt and figures."};
  g2c::exercises::CommonOptions options;
  options.out = "results/13b-lora";
  options.steps = 250;
  Config config;
  g2c::exercises::SFTRunOptions run;
  run.eval_items = 100;
  g2c::exercises::add_common_options(app, options);
  g2c::exercises::add_sft_run_options(app, run);
  app.add_option("--lr-full", config.lr_full, "Peak learning rate of full fine-tuning");
  app.add_option("--lr-lora", config.lr_lora, "Peak learning rate of the adapters");
  app.add_option("--rank", config.rank, "LoRA rank r").positive();
  app.add_option("--alpha", config.alpha, "LoRA alpha (scaling = alpha / r)");
  app.add_option("--targets", config.targets, "Linear layers to adapt, by name");
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    auto text_model = g2c::sampling::load_text_model(run.base, device);
    const auto& tokenizer = text_model.tokenizer;
    const auto model_options = text_model.artifact.model->options;
    const std::int64_t context = model_options.max_seq_len();
    const auto data =
        g2c::exercises::prepare_sft_data(tokenizer, model_options.vocab_size(), context,
                                         options.seed, run.chat_repeat, run.eval_items);
    const auto score = [&](g2c::transformer::TransformerLM& model) {
      return g2c::exercises::score_model(model, tokenizer, data, run.max_new_tokens);
    };
    const auto train = [&](const std::string& label, g2c::transformer::TransformerLM& model,
                           double lr) {
      const auto trainer_options =
          g2c::exercises::sft_trainer_options(run, options, context, lr, device);
      const auto start = std::chrono::steady_clock::now();
      auto tuned =
          g2c::exercises::fine_tune(label, data.examples, model, trainer_options, !options.quiet);
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      return std::pair{std::move(tuned), seconds};
    };
    // A few held-out prompts as one batch (T = the shortest, so no padding): the merge probe.
    std::vector<torch::Tensor> probes;
    for (std::size_t i = 0; i < std::min<std::size_t>(4, data.val_speaker.size()); ++i) {
      probes.push_back(torch::tensor(tokenizer.encode(data.val_speaker[i].prompt), torch::kLong));
    }
    std::int64_t shortest = context;
    for (const auto& p : probes) shortest = std::min(shortest, p.size(0));
    for (auto& p : probes) p = p.narrow(0, 0, shortest);
    const auto probe_ids = torch::stack(probes);  // (N, T)

    std::fflush(stdout);
    // Full fine-tuning: every weight.
    const g2c::exercises::BaseModelCopies base(run.base, device, run.fused);
    auto full = base();
    const auto full_count = g2c::lora::count_parameters(*full);
    const auto [full_run, full_seconds] = train("full fine-tuning", full, config.lr_full);
    const auto full_scores = score(full);
    g2c::exercises::print_scores("full fine-tuning", full_scores);

    // LoRA: the base frozen, adapters on the targets.
    auto adapted = base();
    const auto base_q = adapted->named_parameters()["blocks.0.attn.q_proj.W"].clone();
    const auto replaced =
        g2c::lora::inject_lora(*adapted, config.targets, config.rank, config.alpha);
    const auto lora_count = g2c::lora::mark_only_lora_trainable(*adapted);
    fmt::print(
        "LoRA r {} alpha {} on {} layers: {} of {} parameters trainable ({:.2f}%)\n", config.rank,
        config.alpha, replaced.size(), lora_count.trainable, lora_count.total,
        100.0 * static_cast<double>(lora_count.trainable) / static_cast<double>(lora_count.total));
    const auto [lora_run, lora_seconds] = train("LoRA", adapted, config.lr_lora);
    const auto lora_scores = score(adapted);
    g2c::exercises::print_scores("LoRA", lora_scores);
    const bool base_frozen = torch::equal(
        adapted->named_parameters()["blocks.0.attn.q_proj.W"].to(torch::kCPU), base_q.cpu());

    // What has to be stored: the whole model, or the adapters alone.
    fs::create_directories(options.out);
    const auto adapter_path = options.out / "adapter.pt";
    g2c::lora::save_lora_adapter(adapter_path, *adapted,
                                 {{"base_artifact", run.base},
                                  {"rank", config.rank},
                                  {"alpha", config.alpha},
                                  {"targets", config.targets},
                                  {"steps", options.steps}});
    const auto adapter_bytes = static_cast<std::int64_t>(fs::file_size(adapter_path));
    const auto model_bytes =
        static_cast<std::int64_t>(fs::file_size(text_model.artifact.dir / "model.pt"));

    // Merge: W += scaling · A B in every adapted layer, then the model is a plain one again.
    const auto unmerged_logits = probe_logits(adapted, probe_ids);
    for (auto* layer : g2c::lora::lora_layers(*adapted)) layer->merge();
    const auto merged_logits = probe_logits(adapted, probe_ids);
    const double merge_difference = max_difference(merged_logits, unmerged_logits);
    for (auto* layer : g2c::lora::lora_layers(*adapted)) layer->unmerge();
    const double unmerge_difference = max_difference(
        adapted->named_parameters()["blocks.0.attn.q_proj.W"].to(torch::kCPU), base_q.cpu());
    fmt::print(
        "merged vs unmerged logits: largest difference {:.2e}; after unmerge the base "
        "weight is back to within {:.2e}; base weight untouched by training: {}\n",
        merge_difference, unmerge_difference, base_frozen ? "yes" : "NO");

    const double full_step_ms = 1000.0 * full_seconds / static_cast<double>(options.steps);
    const double lora_step_ms = 1000.0 * lora_seconds / static_cast<double>(options.steps);
    // The optimizer's state, read off the optimizer each run built: AdamW's m and v for every
    // parameter it was given — all of them for full fine-tuning, the adapters alone for LoRA.
    fmt::print("{:<18} {:>12} {:>14} {:>16} {:>10}   speaker / completion\n", "", "trained",
               "saved", "optimizer state", "ms/step");
    fmt::print("{:<18} {:>12} {:>11.1f} kB {:>13.1f} kB {:>10.0f}   {} / {}\n", "full fine-tuning",
               full_count.trainable, model_bytes / 1e3, full_run.optimizer_state_bytes / 1e3,
               full_step_ms, full_scores.speaker.exact.to_string(),
               full_scores.completion.first_word.to_string());
    fmt::print("{:<18} {:>12} {:>11.1f} kB {:>13.1f} kB {:>10.0f}   {} / {}\n", "LoRA",
               lora_count.trainable, adapter_bytes / 1e3, lora_run.optimizer_state_bytes / 1e3,
               lora_step_ms, lora_scores.speaker.exact.to_string(),
               lora_scores.completion.first_word.to_string());

    nlohmann::json result = g2c::exercises::run_metadata("13b_lora", options, device);
    result["config"] = {{"base", run.base},
                        {"steps", options.steps},
                        {"batch_size", run.batch_size},
                        {"lr_full", config.lr_full},
                        {"lr_lora", config.lr_lora},
                        {"warmup", run.warmup},
                        {"rank", config.rank},
                        {"alpha", config.alpha},
                        {"targets", config.targets},
                        {"eval_items", run.eval_items},
                        {"fused", run.fused}};
    result["dataset"] = data.to_json();
    result["full"] = {{"trainable", full_count.trainable},
                      {"total", full_count.total},
                      {"saved_bytes", model_bytes},
                      {"seconds", full_seconds},
                      {"ms_per_step", full_step_ms},
                      {"scores", full_scores.to_json()},
                      {"history", full_run.history.to_json()},
                      {"optimizer_state_bytes", full_run.optimizer_state_bytes}};
    result["lora"] = {{"replaced", replaced},
                      {"trainable", lora_count.trainable},
                      {"total", lora_count.total},
                      {"saved_bytes", adapter_bytes},
                      {"adapter", adapter_path.string()},
                      {"seconds", lora_seconds},
                      {"ms_per_step", lora_step_ms},
                      {"scores", lora_scores.to_json()},
                      {"history", lora_run.history.to_json()},
                      {"optimizer_state_bytes", lora_run.optimizer_state_bytes},
                      {"base_frozen", base_frozen}};
    result["merge"] = {{"max_logit_difference", merge_difference},
                       {"unmerge_max_weight_difference", unmerge_difference},
                       {"probe_shape", {probe_ids.size(0), probe_ids.size(1)}}};
    result["bars"] = {
        {"labels", {"full fine-tuning", "LoRA"}},
        {"speaker", {full_scores.speaker.exact.value(), lora_scores.speaker.exact.value()}},
        {"completion",
         {full_scores.completion.first_word.value(), lora_scores.completion.first_word.value()}},
        {"stops", {full_scores.speaker.stopped.value(), lora_scores.speaker.stopped.value()}}};
    using g2c::exercises::Figure;
    using g2c::exercises::Series;
    result["figures"] = g2c::exercises::figures(
        {Figure::line("lora_loss.png", "SFT loss: every weight against adapters only", "step",
                      "masked cross-entropy")
             .add(Series(fmt::format("full ({} parameters)", full_count.trainable),
                         "/full/history/step", "/full/history/train_loss"))
             .add(
                 Series(fmt::format("LoRA r {} ({} parameters)", config.rank, lora_count.trainable),
                        "/lora/history/step", "/lora/history/train_loss")),
         Figure::bar("lora_accuracy.png", "Held-out accuracy (95% intervals in lora.json)", "",
                     "accuracy")
             .add(Series("speaker (exact)", "/bars/labels", "/bars/speaker"))
             .add(Series("completion (first word)", "/bars/labels", "/bars/completion"))
             .add(Series("replies ending with <|end|>", "/bars/labels", "/bars/stops"))});
    const auto path = g2c::exercises::save_result(options, "lora.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_13b_lora
