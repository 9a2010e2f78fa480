// What the fine-tuning programs of modules 13 and 13b share, compiled once: the SFT examples made
// from the task data, the held-out scoring, one fine-tuning run through your SFTTrainer, and the
// base model loaded afresh for each run.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "exercises/common/cli.h"
#include "exercises/common/task_scores.h"
#include "exercises/common/tasks.h"
#include "g2c/pretraining/trainer.h"
#include "g2c/sft/data.h"
#include "g2c/sft/trainer.h"
#include "g2c/tokenizer/text_tokenizer.h"
#include "g2c/transformer/transformer_lm.h"

namespace g2c::exercises {

/// The options both programs take, with their defaults.
struct SFTRunOptions {
  std::string base = "ShakespeareLM-1M";  // the base model artifact
  std::int64_t batch_size = 16;
  std::int64_t warmup = 20;
  std::int64_t eval_items = 120;  // held-out items scored per task
  std::int64_t max_new_tokens = 40;
  // The hand-written chat pairs are 40 among 8,000 task items: repeated, so that SFT sees them
  // often enough for the chat demo (g2c-chat) to show them.
  std::int64_t chat_repeat = 20;
  bool fused = false;  // the model and AdamW through LibTorch's fused kernels
};

/// Adds --base, --batch, --warmup, --eval-items, --max-new-tokens and --fused; --chat-repeat too
/// when the program fine-tunes on the chat pairs (`chat_pairs`; 14_dpo trains on preference pairs
/// and has none).
void add_sft_run_options(g2c::CommandLine& app, SFTRunOptions& run, bool chat_pairs = true);

/// The trainer options of one run at peak learning rate `lr`: AdamW, warmup then cosine down to
/// lr / 10, weight decay 0.01, clipping at 1.0, batches drawn by a generator seeded with the run's
/// seed (so every run of a program sees the same batches).
g2c::sft::SFTTrainerOptions sft_trainer_options(const SFTRunOptions& run,
                                                const CommonOptions& options, std::int64_t context,
                                                double lr, const torch::Device& device);

struct SFTData {
  TaskData tasks;
  std::filesystem::path folder;                   // where the task data lives
  std::vector<g2c::sft::SFTExample> examples;     // mask on the replies
  std::vector<g2c::sft::SFTExample> every_token;  // the same ids, mask on every token (ablation)
  std::int64_t too_long = 0;  // items longer than the context, left out (never cut mid-reply)
  std::vector<TaskItem> val_speaker, val_completion;  // the held-out items scored
  std::string majority;            // the most frequent speaker of the training items
  Proportion majority_baseline;    // always answering it, on val_speaker
  nlohmann::json to_json() const;  // manifest, folder, counts, baseline
};

/// The task data of this seed (stored_task_data: read back from artifacts/datasets when it is
/// there and current, else built and written), renders every training item
/// with the chat template (the chat pairs `chat_repeat` times each) at the model's vocabulary
/// size, and picks `eval_items` held-out items per task. Prints what it did.
SFTData prepare_sft_data(const g2c::tokenizer::TextTokenizer& tokenizer, std::int64_t vocab_size,
                         std::int64_t context, std::uint64_t seed, std::int64_t chat_repeat,
                         std::int64_t eval_items);

struct Scores {
  TaskScore speaker;
  TaskScore completion;
  nlohmann::json to_json() const;
};

/// Greedy replies to the held-out items of both tasks.
Scores score_model(g2c::transformer::TransformerLM& model,
                   const g2c::tokenizer::TextTokenizer& tokenizer, const SFTData& data,
                   std::int64_t max_new_tokens);

/// One line: speaker exact, completion first word, and how many replies stopped at <|end|>.
void print_scores(const std::string& label, const Scores& scores);

/// A base model artifact read once, from which every run starts: each call gives a new model
/// with its own copy of the base's weights on `device` (on the fast path, g2c/transformer/fused.h,
/// when `fused`), so a run that trains one leaves the next run's untouched.
///   const BaseModelCopies base("ShakespeareLM-1M", device, /*fused=*/false);
///   auto model = base();  // a fresh copy, the artifact not read again
class BaseModelCopies {
 public:
  BaseModelCopies(const std::string& base, torch::Device device, bool fused);
  g2c::transformer::TransformerLM operator()() const;

 private:
  g2c::transformer::TransformerLM source_;  // as read, on the device; never trained
  torch::Device device_;
  bool fused_;
};

/// What a fine-tuning run leaves besides the tuned model.
struct FineTuneRun {
  g2c::pretraining::TrainingHistory history;
  /// Bytes of the optimizer's own tensors (AdamW: m and v, one pair per parameter it was given,
  /// read off the optimizer itself); 0 for SGD, which keeps none.
  std::int64_t optimizer_state_bytes = 0;
};

/// One run of your SFTTrainer through module 10's loop, with a progress line labelled `label`
/// (RunLog). TrainingDiverged (exit status 4) when the loss stops being finite.
FineTuneRun fine_tune(const std::string& label, std::vector<g2c::sft::SFTExample> examples,
                      g2c::transformer::TransformerLM& model,
                      const g2c::sft::SFTTrainerOptions& options, bool show_progress);

}  // namespace g2c::exercises
