// Exercise 07.3 — strip the mask, the course's main experiment.
//
// One tiny attention-only language model (exercises/common/tiny_lm.h: your TokenEmbedding,
// LearnedPositionalEmbedding, SelfAttention and Linear) is trained twice from the same initial
// weights: causal = true and causal = false. Without the mask, position t reads token t + 1, the
// very token it must predict: its loss collapses towards 0 while the text it generates is garbage
// (at generation time there is no future to copy from). With the mask the loss stays honest.
// Both runs' curves go to one JSON file and one plot; a sample from each model is printed.
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/corpus.h"
#include "exercises/common/figures.h"
#include "exercises/common/generation.h"
#include "exercises/common/side_by_side.h"
#include "exercises/common/tiny_lm.h"
#include "exercises/common/training.h"
#include "g2c/nn/optim.h"

namespace exercise_07_strip_mask {

namespace {

using g2c::exercises::TargetRule;

/// Every setting of the experiment. Two presets below; command-line options change single fields.
struct Config {
  std::string data;               // "tinyshakespeare", or "random" (the control experiment)
  std::string tokenizer;          // "bpe" (ShakespeareTokenizer capped at bpe_vocab), "char", "-"
  std::int64_t bpe_vocab = 2048;  // the 64 -> V output layer and its softmax cost most of a step
  std::int64_t context_length;    // T; the loss scores every position except the last
  std::int64_t embedding_dim;     // D
  std::int64_t batch_size;        // B
  std::string optimizer;          // "adamw" or "sgd"
  double lr;
  double weight_decay;
  std::int64_t steps;
  std::int64_t log_every;  // train and validation loss recorded every N steps and at the last
  std::int64_t val_batches = 16;  // batches averaged for each validation loss
  std::int64_t sample_tokens;     // generated after the prompt, per model
  std::int64_t random_vocab = 8;  // --data random: ids uniform over this many
  std::int64_t random_tokens = 4096;
  bool fused = false;  // --path fast: LibTorch's fused cross-entropy and AdamW around the attention
};

// Which path runs by default: the fast one where modules 03 and 03b are the reference's (the
// reference build: the course's main job at full speed), the lesson's where they are the student's
// own (a student build runs the student's loss and AdamW). CMake sets it per build.
#ifndef G2C_STRIP_MASK_FAST_BY_DEFAULT
#define G2C_STRIP_MASK_FAST_BY_DEFAULT 0
#endif
constexpr bool kFastByDefault = G2C_STRIP_MASK_FAST_BY_DEFAULT != 0;

/// Where every random draw of the experiment comes from.
struct Seeds {
  std::uint64_t model = 0;  // --seed: the initial weights, the same for both runs
  std::uint64_t causal_batches = 1;
  std::uint64_t non_causal_batches = 2;
  std::uint64_t validation = 1234;   // the fixed validation batches
  std::uint64_t random_stream = 7;   // --data random: the token stream (its validation: 8)
  std::uint64_t sample_offset = 99;  // sampling draws from model seed + 99
};

/// TinyShakespeare: 32 BPE tokens span about 100 characters, more than 64 characters do, and keep
/// the default run near a minute on two cores.
Config tinyshakespeare_preset(const std::string& tokenizer) {
  return {.data = "tinyshakespeare",
          .tokenizer = tokenizer,
          .context_length = tokenizer == "char" ? 64 : 32,
          .embedding_dim = 64,
          .batch_size = 32,
          .optimizer = "adamw",
          .lr = 3e-3,
          .weight_decay = 1e-4,
          .steps = 2000,
          .log_every = 50,
          .sample_tokens = 200};
}

/// The Python edition's control experiment, exactly: random tokens cannot be predicted, so an
/// honest model sits at ln 8; one that sees the future copies it.
Config random_preset() {
  return {.data = "random",
          .tokenizer = "-",
          .context_length = 8,
          .embedding_dim = 32,
          .batch_size = 128,
          .optimizer = "sgd",
          .lr = 0.5,
          .weight_decay = 0.0,
          .steps = 500,
          .log_every = 50,
          .sample_tokens = 16};
}

/// What the default configurations give (seed 0, measured with build/reference on a 2-core CPU,
/// the runs side by side with one thread each; other thread counts round differently in the last
/// digits): train / val.
struct Reference {
  const char* what;
  double causal_train, causal_val, non_causal_train, non_causal_val;
};
Reference reference_for(const Config& config) {
  if (config.data == "random") return {"--data random", 2.0790, 2.0817, 0.0007, 0.0007};
  if (config.tokenizer == "char") return {"--tokenizer char", 2.2999, 2.3725, 0.0000, 0.0000};
  return {"the defaults", 4.7263, 4.9778, 0.0002, 0.0289};
}

/// Command-line changes to a preset; unset fields keep the preset's value.
struct Overrides {
  std::optional<std::int64_t> steps, context_length, embedding_dim, batch_size, log_every,
      sample_tokens;
  std::optional<double> lr;
};

Config configure(const std::string& data, const std::string& tokenizer, std::int64_t bpe_vocab,
                 const Overrides& o) {
  Config config = data == "random" ? random_preset() : tinyshakespeare_preset(tokenizer);
  config.bpe_vocab = bpe_vocab;
  config.steps = o.steps.value_or(config.steps);
  config.context_length = o.context_length.value_or(config.context_length);
  config.embedding_dim = o.embedding_dim.value_or(config.embedding_dim);
  config.batch_size = o.batch_size.value_or(config.batch_size);
  config.log_every = o.log_every.value_or(config.log_every);
  config.sample_tokens = o.sample_tokens.value_or(config.sample_tokens);
  config.lr = o.lr.value_or(config.lr);
  return config;
}

/// One trained model and what its run measured.
struct Run {
  bool causal;
  std::uint64_t batch_seed;
  g2c::exercises::TinyAttentionLM model{nullptr};
  g2c::exercises::TrainResult result{};
  std::string sample{};
};

/// The student files a diverging run points at: the model's, and on the lesson path module 03's
/// loss and optimizer as well (the fast path runs LibTorch's instead).
std::vector<std::string> files_to_check(const Config& config) {
  std::vector<std::string> files = {"g2c/attention/self_attention.cpp (attention_weights)",
                                    "g2c/embeddings/token_embedding.cpp",
                                    "g2c/embeddings/positional.cpp"};
  if (!config.fused) {
    files.push_back("g2c/nn/cross_entropy.cpp");
    files.push_back(config.optimizer == "sgd" ? "g2c/nn/sgd.cpp" : "g2c/nn/adamw.cpp");
  }
  return files;
}

void train(Run& run, const Config& config, const g2c::exercises::Corpus& corpus, const Seeds& seeds,
           const g2c::exercises::ProgressSink& progress) {
  const auto optimizer = g2c::nn::make_optimizer(config.optimizer, run.model->parameters(),
                                                 config.lr, config.weight_decay, config.fused);
  g2c::exercises::WindowSampler batches(corpus.train, config.context_length, config.batch_size,
                                        TargetRule::kWithinWindow, run.batch_seed);
  const auto validation =
      g2c::exercises::WindowSampler(corpus.val, config.context_length, config.batch_size,
                                    TargetRule::kWithinWindow, 0)
          .fixed(config.val_batches, seeds.validation);
  run.result = g2c::exercises::train_language_model(*run.model, *optimizer, batches, validation,
                                                    g2c::exercises::TrainLanguageModelOptions()
                                                        .steps(config.steps)
                                                        .log_every(config.log_every)
                                                        .label(run.causal ? "causal" : "non-causal")
                                                        .progress(progress)
                                                        .fused_kernels(config.fused)
                                                        .files_to_check(files_to_check(config)));
}

/// The lesson, in numbers: did the non-causal run collapse, and did the causal one stay honest?
void print_verdict(const Config& config, const Run& causal, const Run& non_causal,
                   double baseline) {
  const double causal_val = *causal.result.final_val_loss;
  const double cheat_val = *non_causal.result.final_val_loss;
  const auto reference = reference_for(config);
  fmt::print("reference ({}, seed 0): causal {:.4f} / {:.4f}, non-causal {:.4f} / {:.4f}\n",
             reference.what, reference.causal_train, reference.causal_val,
             reference.non_causal_train, reference.non_causal_val);
  if (cheat_val < 0.1 * baseline && cheat_val < 0.5 * causal_val) {
    fmt::print(
        "\nThe non-causal loss collapsed ({:.4f} against the causal {:.4f}): without the "
        "mask each position\nreads the token it must predict, so it learned to copy the "
        "next token, not to predict it.\n",
        cheat_val, causal_val);
  } else {
    fmt::print(
        "\nThe non-causal loss has not collapsed yet ({:.4f} against the causal {:.4f}); "
        "train longer\n(the default {} steps) to watch it learn to copy the next token.\n",
        cheat_val, causal_val, config.data == "random" ? 500 : 2000);
  }
  const bool leaks =
      config.data == "random" ? causal_val < 0.9 * baseline : causal_val < 0.1 * baseline;
  if (leaks) {
    fmt::print(stderr,
               "\nwarning: the causal model's validation loss {:.4f} is far below ln V = {:.3f}{}. "
               "Your mask leaks:\nsome position still sees a later token. Check attention_weights "
               "in g2c/attention/self_attention.cpp\n(causal_mask is true where a key is blocked; "
               "masked_fill the scores with -inf before the softmax).\n",
               causal_val, baseline,
               config.data == "random" ? " on random tokens, which nothing can predict" : "");
  }
}

nlohmann::json run_json(const Run& run) {
  const auto& r = run.result;
  return {{"causal", run.causal},
          {"batch_seed", run.batch_seed},
          {"steps", r.steps},
          {"train_loss", r.train_loss},
          {"val_loss", r.val_loss},
          {"final_train_loss", r.final_train_loss},
          {"final_val_loss", *r.final_val_loss},
          {"wall_seconds", r.wall_seconds},
          {"train_seconds", r.train_seconds},
          {"tokens_per_second", r.tokens_per_second()},
          {"sample", run.sample}};
}

g2c::exercises::Figure loss_figure(const Config& config, double baseline) {
  using g2c::exercises::Series;
  return g2c::exercises::Figure::line(
             config.data == "random" ? "strip_mask_random_loss.png" : "strip_mask_loss.png",
             fmt::format("Strip the mask ({}): next-token loss", config.data), "step",
             "cross-entropy")
      .add(Series("causal, train", "/runs/causal/steps", "/runs/causal/train_loss").style("-"))
      .add(Series("causal, validation", "/runs/causal/steps", "/runs/causal/val_loss").style("--"))
      .add(Series("non-causal, train", "/runs/non_causal/steps", "/runs/non_causal/train_loss")
               .style("-"))
      .add(Series("non-causal, validation", "/runs/non_causal/steps", "/runs/non_causal/val_loss")
               .style("--"))
      .hline(baseline, fmt::format("ln V = {:.3f}", baseline));
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Module 07, exercise 3: strip the causal mask. Trains a tiny attention-only language model "
      "with\ncausal = true and causal = false and writes both loss curves. --data random "
      "reproduces the\nPython edition's control experiment."};
  g2c::exercises::CommonOptions options;
  options.out = "results/07-attention";
  options.threads_per_run = true;  // two runs side by side, each with --threads of its own
  std::string data = "tinyshakespeare", tokenizer = "bpe";
  std::int64_t bpe_vocab = 2048;
  bool sequential = false;
  std::string path = kFastByDefault ? "fast" : "lesson";
  Overrides overrides;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--data", data, "tinyshakespeare, or random (the control experiment)")
      .one_of({"tinyshakespeare", "random"});
  app.add_option("--tokenizer", tokenizer, "Token level: bpe (the ShakespeareTokenizer) or char")
      .one_of({"bpe", "char"});
  app.add_option("--bpe-vocab", bpe_vocab, "ShakespeareTokenizer vocabulary cap").range(257, 4096);
  app.add_option("--steps", overrides.steps, "Training steps [2000; random: 500]")
      .positive()
      .no_default();
  app.add_option("--context", overrides.context_length,
                 "Context length T [32 BPE tokens, 64 characters; random: 8]")
      .range(2, 4096)
      .no_default();
  app.add_option("--dim", overrides.embedding_dim, "Embedding dimension D [64; random: 32]")
      .positive()
      .no_default();
  app.add_option("--batch", overrides.batch_size, "Batch size [32; random: 128]")
      .positive()
      .no_default();
  app.add_option("--lr", overrides.lr, "Learning rate [AdamW 3e-3; random: SGD 0.5]")
      .positive()
      .no_default();
  app.add_option("--log-every", overrides.log_every, "Record losses every N steps [50]")
      .positive()
      .no_default();
  app.add_option("--sample-tokens", overrides.sample_tokens, "Tokens generated per model [200; 16]")
      .non_negative()
      .no_default();
  app.add_flag("--sequential", sequential,
               "Train the two runs one after the other instead of side by side (same results)");
  app.add_option("--path", path,
                 "fast: the loss and AdamW through LibTorch's fused kernels "
                 "(g2c/nn/fused_cross_entropy.h, g2c/nn/fused_adamw.h), the attention the "
                 "lesson's; lesson: module 03's cross-entropy and AdamW as written in the course "
                 "[this build: fast where modules 03 and 03b are the reference's, else lesson]")
      .one_of({"fast", "lesson"});
  return g2c::run_cli(app, argc, argv, [&] {
    Config config = configure(data, tokenizer, bpe_vocab, overrides);
    config.fused = path == "fast";
    fmt::print("path: {}\n",
               config.fused ? "fast — LibTorch's fused cross-entropy and AdamW around the lesson's "
                              "attention (--path lesson: module 03's own)"
                            : "lesson — module 03's cross-entropy and AdamW, every formula the "
                              "course's (--path fast: LibTorch's fused kernels)");
    Seeds seeds;
    seeds.model = options.seed;
    const auto device = g2c::exercises::prepare(options);
    const auto corpus = config.data == "random"
                            ? g2c::exercises::random_corpus(
                                  config.random_vocab, config.random_tokens, seeds.random_stream)
                            : g2c::exercises::tinyshakespeare_corpus(
                                  config.tokenizer, static_cast<std::size_t>(config.bpe_vocab));
    fmt::print("data: {} ({} training tokens, {} validation tokens), {}\n", config.data,
               corpus.train.numel(), corpus.val.numel(), corpus.description());

    // Both models are built here, one after the other from the same seed, so they start from the
    // same weights whether they then train side by side or not.
    Run causal{.causal = true, .batch_seed = seeds.causal_batches};
    Run non_causal{.causal = false, .batch_seed = seeds.non_causal_batches};
    for (Run* run : {&causal, &non_causal}) {
      torch::manual_seed(seeds.model);
      run->model = g2c::exercises::TinyAttentionLM(
          g2c::exercises::TinyAttentionLMOptions(corpus.vocab_size, config.context_length,
                                                 config.embedding_dim)
              .causal(run->causal));
      run->model->to(device);
    }
    // Side by side on a CPU with two cores or more: a model this small cannot keep two threads
    // busy, two runs with one thread each can. Each run gets the same thread count either way.
    const bool side_by_side = !sequential && device.is_cpu() && at::get_num_threads() >= 2;
    const int run_threads =
        options.threads > 0 ? options.threads : g2c::exercises::threads_per_job(2);
    fmt::print("training both models {}, {} intra-op thread{} each\n",
               side_by_side ? "side by side (--sequential: one after the other, same results)"
                            : "one after the other",
               run_threads, run_threads == 1 ? "" : "s");
    std::fflush(stdout);
    g2c::exercises::ProgressBoard board({"causal", "non-causal"}, config.steps, !options.quiet);
    g2c::exercises::run_side_by_side(
        {[&] { train(causal, config, corpus, seeds, board.sink(0)); },
         [&] { train(non_causal, config, corpus, seeds, board.sink(1)); }},
        side_by_side, run_threads);

    // The prompt: the first T - 1 held-out tokens; every new token is predicted from the last
    // T - 1, the positions the loss trained.
    const std::int64_t window = config.context_length - 1;
    const auto prompt = corpus.val_prefix(window);
    for (Run* run : {&causal, &non_causal}) {
      run->sample = corpus.decode(g2c::exercises::continue_text(
          run->model.ptr(), corpus.vocab_size, window, prompt, config.sample_tokens,
          at::make_generator<at::CPUGeneratorImpl>(seeds.model + seeds.sample_offset)));
    }

    const double baseline = std::log(static_cast<double>(corpus.vocab_size));
    fmt::print("\n{:<11} {:>11} {:>9} {:>8} {:>10}\n", "run", "train loss", "val loss", "time",
               "tokens/s");
    for (const Run* run : {&causal, &non_causal}) {
      fmt::print("{:<11} {:>11.4f} {:>9.4f} {:>7.1f}s {:>10.0f}\n",
                 run->causal ? "causal" : "non-causal", run->result.final_train_loss,
                 *run->result.final_val_loss, run->result.wall_seconds,
                 run->result.tokens_per_second());
    }
    fmt::print("ln V = {:.3f} (the loss of a uniform guess)\n", baseline);
    print_verdict(config, causal, non_causal, baseline);
    fmt::print("\n--- prompt (the first {} held-out tokens) ---\n{}\n", window,
               corpus.decode(prompt));
    fmt::print("\n--- continued by the causal model ---\n{}\n", causal.sample);
    fmt::print("\n--- continued by the non-causal model ---\n{}\n", non_causal.sample);

    auto result = g2c::exercises::run_metadata("07_strip_mask", options, device);
    result["config"] = {{"data", config.data},
                        {"tokenizer", config.tokenizer},
                        {"bpe_vocab", config.bpe_vocab},
                        {"context_length", config.context_length},
                        {"embedding_dim", config.embedding_dim},
                        {"batch_size", config.batch_size},
                        {"optimizer", config.optimizer},
                        {"path", config.fused ? "fast" : "lesson"},
                        {"fused_kernels", config.fused},
                        {"lr", config.lr},
                        {"weight_decay", config.weight_decay},
                        {"steps", config.steps},
                        {"log_every", config.log_every},
                        {"val_batches", config.val_batches},
                        {"sample_tokens", config.sample_tokens},
                        {"model_seed", seeds.model},
                        {"side_by_side", side_by_side},
                        {"threads_per_run", run_threads}};
    if (config.data == "random") {
      result["config"]["random"] = {{"vocab_size", config.random_vocab},
                                    {"tokens", config.random_tokens},
                                    {"stream_seed", seeds.random_stream}};
    }
    result["tokenizer"] = corpus.tokenizer_json;
    result["data"] = {{"source", config.data},
                      {"train_tokens", corpus.train.numel()},
                      {"val_tokens", corpus.val.numel()}};
    result["baseline_ln_vocab"] = baseline;
    result["prompt"] = corpus.decode(prompt);
    result["runs"] = {{"causal", run_json(causal)}, {"non_causal", run_json(non_causal)}};
    result["figures"] = g2c::exercises::figures({loss_figure(config, baseline)});
    const auto path = g2c::exercises::save_result(
        options, config.data == "random" ? "strip_mask_random.json" : "strip_mask.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_07_strip_mask
