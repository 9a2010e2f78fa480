#include "exercises/13-sft/sft_runs.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "exercises/common/data.h"
#include "exercises/common/run_log.h"
#include "g2c/core/errors.h"
#include "g2c/nn/optim.h"
#include "g2c/pretraining/model_artifact.h"
#include "g2c/sft/chat_template.h"
#include "g2c/sft/course_encoder.h"
#include "g2c/transformer/fused.h"

namespace g2c::exercises {

void add_sft_run_options(g2c::CommandLine& app, SFTRunOptions& run, bool chat_pairs) {
  app.add_option("--base", run.base, "Base model artifact (name, alias or folder)");
  app.add_option("--batch", run.batch_size, "Examples per step").positive();
  app.add_option("--warmup", run.warmup, "Warmup steps");
  app.add_option("--eval-items", run.eval_items, "Held-out items scored per task").positive();
  app.add_option("--max-new-tokens", run.max_new_tokens, "Reply length limit when scoring")
      .positive();
  if (chat_pairs) {
    app.add_option("--chat-repeat", run.chat_repeat,
                   "Times each hand-written chat pair appears in the training examples")
        .positive();
  }
  app.add_flag("--fused", run.fused,
               "Fast path: the model and AdamW through LibTorch's fused kernels (the same model)");
}

g2c::sft::SFTTrainerOptions sft_trainer_options(const SFTRunOptions& run,
                                                const CommonOptions& options, std::int64_t context,
                                                double lr, const torch::Device& device) {
  auto sft = g2c::sft::SFTTrainerOptions(context, /*pad_id=*/0, run.batch_size, options.steps, lr);
  sft.trainer()
      .min_lr(lr / 10)
      .warmup_steps(run.warmup)
      .weight_decay(0.01)
      .grad_clip(1.0)
      .log_every(10)
      .generator(at::make_generator<at::CPUGeneratorImpl>(options.seed))
      .device(device.str())
      .fused_kernels(run.fused);
  return sft;
}

nlohmann::json SFTData::to_json() const {
  auto out = tasks.manifest;
  out["folder"] = folder.string();
  out["sft_examples"] = examples.size();
  out["too_long"] = too_long;
  out["scored"] = {{"speaker", val_speaker.size()}, {"completion", val_completion.size()}};
  out["majority_baseline"] = {{"speaker", majority}, {"accuracy", majority_baseline.to_json()}};
  return out;
}

SFTData prepare_sft_data(const g2c::tokenizer::TextTokenizer& tokenizer, std::int64_t vocab_size,
                         std::int64_t context, std::uint64_t seed, std::int64_t chat_repeat,
                         std::int64_t eval_items) {
  SFTData data;
  auto stored = stored_task_data(load_tinyshakespeare(), {.seed = seed});
  data.tasks = std::move(stored.data);
  data.folder = stored.folder;
  fmt::print("task data: {} training items, {} held out, {} {}\n", data.tasks.train.size(),
             data.tasks.val.size(), stored.read ? "read from" : "written to", data.folder.string());

  const g2c::sft::ChatTemplate chat;
  const g2c::sft::CourseEncoder encoder(tokenizer);
  for (const auto& item : data.tasks.train) {
    auto example = chat.render_with_mask(item.messages(), encoder, vocab_size);
    if (static_cast<std::int64_t>(example.ids.size()) > context) {
      ++data.too_long;
      continue;
    }
    const auto copies = item.task == "chat" ? chat_repeat : 1;
    for (std::int64_t c = 0; c < copies; ++c) data.examples.push_back(example);
    std::fill(example.mask.begin(), example.mask.end(), 1);  // the ablation: every token counts
    for (std::int64_t c = 0; c < copies; ++c) data.every_token.push_back(example);
  }

  data.val_speaker = items_of(data.tasks.val, "speaker");
  data.val_completion = items_of(data.tasks.val, "completion");
  data.val_speaker.resize(std::min<std::size_t>(data.val_speaker.size(), eval_items));
  data.val_completion.resize(std::min<std::size_t>(data.val_completion.size(), eval_items));

  // What a model reaches without reading the line: always the most frequent training speaker.
  std::map<std::string, std::int64_t> counts;
  for (const auto& item : items_of(data.tasks.train, "speaker")) counts[item.answer] += 1;
  data.majority = std::max_element(counts.begin(), counts.end(), [](const auto& a, const auto& b) {
                    return a.second < b.second;
                  })->first;
  data.majority_baseline.total = static_cast<std::int64_t>(data.val_speaker.size());
  for (const auto& item : data.val_speaker)
    data.majority_baseline.hits += item.answer == data.majority;
  fmt::print(
      "{} SFT examples (chat pairs x{}; {} longer than the context {} left out); scoring "
      "{} + {} held-out items; always answering {} scores {}\n",
      data.examples.size(), chat_repeat, data.too_long, context, data.val_speaker.size(),
      data.val_completion.size(), data.majority, data.majority_baseline.to_string());
  return data;
}

nlohmann::json Scores::to_json() const {
  return {{"speaker", speaker.to_json()}, {"completion", completion.to_json()}};
}

Scores score_model(g2c::transformer::TransformerLM& model,
                   const g2c::tokenizer::TextTokenizer& tokenizer, const SFTData& data,
                   std::int64_t max_new_tokens) {
  return {score_task(*model, tokenizer, data.val_speaker, max_new_tokens),
          score_task(*model, tokenizer, data.val_completion, max_new_tokens)};
}

void print_scores(const std::string& label, const Scores& scores) {
  fmt::print("{:<28} speaker {}   completion first word {}   stops {}\n", label,
             scores.speaker.exact.to_string(), scores.completion.first_word.to_string(),
             scores.speaker.stopped.to_string());
  std::fflush(stdout);  // before the next progress line, in a log file too
}

BaseModelCopies::BaseModelCopies(const std::string& base, torch::Device device, bool fused)
    : source_(g2c::pretraining::load_model_artifact(base, device).model),
      device_(device),
      fused_(fused) {}

g2c::transformer::TransformerLM BaseModelCopies::operator()() const {
  auto copy = fused_ ? g2c::transformer::fused_transformer_lm(source_->options)
                     : g2c::transformer::TransformerLM(source_->options);
  copy->to(device_);
  torch::NoGradGuard no_grad;
  const auto parameters = source_->named_parameters();
  for (auto& parameter : copy->named_parameters()) {
    parameter.value().copy_(parameters[parameter.key()]);
  }
  copy->train(source_->is_training());  // buffers (masks, tables) come from the options
  return copy;
}

FineTuneRun fine_tune(const std::string& label, std::vector<g2c::sft::SFTExample> examples,
                      g2c::transformer::TransformerLM& model,
                      const g2c::sft::SFTTrainerOptions& options, bool show_progress) {
  g2c::sft::SFTTrainer sft(model, std::move(examples), options);
  std::int64_t state_bytes = 0;
  if (const auto* adamw = dynamic_cast<const g2c::nn::AdamW*>(sft.trainer.optimizer.get())) {
    for (const auto* moments : {&adamw->m, &adamw->v}) {
      for (const auto& t : *moments) state_bytes += t.numel() * t.element_size();
    }
  }
  RunLog log({.label = label,
              .steps = options.trainer().max_steps(),
              .show = show_progress,
              .advice = "Try a lower --lr."});
  auto history = sft.train({}, g2c::pretraining::RunOptions().on_log(log.callback()));
  log.finish();
  return {std::move(history), state_bytes};
}

}  // namespace g2c::exercises
