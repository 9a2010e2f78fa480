// Exercise 10 (after 10_pretrain) — what the model learned, as text. Loads the ShakespeareLM-1M
// artifact that 10_pretrain saved and continues the lesson's prompt "KING:" for 300 tokens from
// seed 1 twice, as the lesson does:
//   raw       temperature 0.8, every token allowed
//   readable  temperature 0.5, top-k 20, never a special token, a control character or a piece of
//             a multi-byte character (their output bias is set to −∞ while sampling)
// plus a greedy continuation (temperature 0) for comparison. Writes samples.json.
#include <cmath>

#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/generation.h"
#include "g2c/core/errors.h"
#include "g2c/nn/device.h"
#include "g2c/sampling/text_generation.h"

namespace exercise_10_sample {

namespace {

using g2c::sampling::GenerateOptions;

struct Sample {
  std::string name;
  double temperature;
  std::optional<std::int64_t> top_k;
  bool readable;
};

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Module 10: samples from the ShakespeareLM-1M artifact that 10_pretrain saved (raw at T "
      "0.8,\nreadable at T 0.5 with top-k 20, and greedy). Writes samples.json."};
  g2c::exercises::CommonOptions options;
  options.out = "results/10-pretraining";
  options.seed = 1;  // the lesson's sampling seed
  std::string model_name = "ShakespeareLM-1M";
  std::string prompt_text = "KING:";
  std::int64_t tokens = 300;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--model", model_name, "Model artifact: name, alias or folder");
  app.add_option("--prompt", prompt_text, "Text the samples continue");
  app.add_option("--tokens", tokens, "New tokens per sample").positive();
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    auto text_model = g2c::sampling::load_text_model(model_name, device);
    auto& model = *text_model.artifact.model;
    fmt::print("{} ({}); {}\n", g2c::pretraining::describe_model_artifact(text_model.artifact),
               text_model.artifact.dir.string(), text_model.tokenizer.description());
    const auto prompt = text_model.encode(prompt_text);
    const auto unreadable = g2c::sampling::unreadable_token_ids(text_model.tokenizer);

    const std::vector<Sample> samples = {{"raw", 0.8, std::nullopt, false},
                                         {"readable", 0.5, 20, true},
                                         {"greedy", 0.0, std::nullopt, false}};
    nlohmann::json runs = nlohmann::json::array();
    // A raw sample can hold control characters: shown, not obeyed, on a terminal.
    const bool terminal = g2c::sampling::stdout_is_terminal();
    for (const auto& sample : samples) {
      const g2c::sampling::SuppressTokens mask(
          model, sample.readable ? unreadable : std::vector<std::int64_t>{});
      const auto generate_options =
          GenerateOptions()
              .temperature(sample.temperature)
              .top_k(sample.top_k)
              .generator(at::make_generator<at::CPUGeneratorImpl>(options.seed));
      const auto run = g2c::sampling::generate_long_cached(model, prompt, tokens, generate_options);
      const auto* first = run.ids.data_ptr<std::int64_t>();
      const std::vector<std::int64_t> all(first, first + run.ids.numel());
      const std::vector<std::int64_t> generated(all.begin() + prompt.size(0), all.end());
      const auto text = text_model.tokenizer.decode(all);
      const auto ratio = g2c::exercises::distinct_trigram_ratio(generated);
      fmt::print("\n--- {} (temperature {}{}{}) ---\n{}\n", sample.name, sample.temperature,
                 sample.top_k ? fmt::format(", top-k {}", *sample.top_k) : "",
                 sample.readable ? fmt::format(", {} tokens masked", unreadable.size()) : "",
                 terminal ? g2c::sampling::for_terminal(text) : text);
      runs.push_back({{"name", sample.name},
                      {"temperature", sample.temperature},
                      {"top_k", sample.top_k ? nlohmann::json(*sample.top_k) : nlohmann::json()},
                      {"readable", sample.readable},
                      {"masked_tokens", sample.readable ? unreadable.size() : 0},
                      {"text", text},
                      {"ids", generated},
                      {"distinct_trigram_ratio", ratio}});
    }

    auto result = g2c::exercises::run_metadata("10_sample", options, device);
    result["model"] = {{"artifact", text_model.artifact.dir.string()},
                       {"manifest", text_model.artifact.manifest},
                       {"tokenizer", text_model.tokenizer.description()}};
    result["prompt"] = prompt_text;
    result["tokens"] = tokens;
    result["samples"] = runs;
    g2c::exercises::save_result(options, "samples.json", result);
  });
}

}  // namespace exercise_10_sample
