// Exercise 11 — what the KV cache buys. generate() runs the whole (cropped) sequence through the
// model at every step; generate_cached() feeds one token and reads every earlier key and value
// from the cache. Both are timed on a ShakespeareLM-1M-shaped TransformerLM (V 4096, D 128, L 4,
// H 4) generating 128 and 512 tokens. The weights are random: speed depends on the shapes, not on
// what the model has learned, so no training is needed (the tokens are meaningless).
#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "exercises/common/timing.h"
#include "g2c/core/errors.h"
#include "g2c/nn/device.h"
#include "g2c/sampling/generate.h"
#include "g2c/transformer/transformer_lm.h"

namespace exercise_11_generation_speed {

namespace {

using g2c::sampling::GenerateOptions;

struct Config {
  std::int64_t vocab = 4096;  // ShakespeareLM-1M's shape
  std::int64_t embedding_dim = 128;
  std::int64_t num_layers = 4;
  std::int64_t num_heads = 4;
  std::int64_t prompt_tokens = 16;
  std::vector<std::int64_t> new_tokens = {128, 512};
  std::int64_t repeats = 1;  // timed runs of each method per length, interleaved A, B, A, B
  double temperature = 1.0;  // sampled with a seeded generator, the same for both methods
};

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Module 11: generation speed with and without the KV cache, on a TransformerLM shaped\n"
      "like ShakespeareLM-1M (random weights). Writes generation_speed.json and a figure."};
  g2c::exercises::CommonOptions options;
  options.out = "results/11-sampling";
  Config config;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--tokens", config.new_tokens, "Numbers of new tokens to time").positive();
  app.add_option("--prompt-tokens", config.prompt_tokens, "Prompt length (random ids)").positive();
  app.add_option("--repeats", config.repeats, "Timed runs per method and length (median kept)")
      .positive();
  app.add_option("--vocab", config.vocab, "Vocabulary size V").positive();
  app.add_option("--dim", config.embedding_dim, "Embedding dimension D");
  app.add_option("--layers", config.num_layers, "Transformer blocks L");
  app.add_option("--heads", config.num_heads, "Attention heads H");
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    const auto longest = *std::max_element(config.new_tokens.begin(), config.new_tokens.end());
    // Room for the prompt and the longest run: no cropping in generate(), no early stop in
    // generate_cached(), so both do exactly the same number of steps.
    const auto max_seq_len = config.prompt_tokens + longest;
    torch::manual_seed(options.seed);
    g2c::transformer::TransformerLM model(g2c::transformer::TransformerLMOptions(
        config.vocab, config.embedding_dim, config.num_layers, config.num_heads, max_seq_len));
    model->to(device);
    std::int64_t parameters = 0;
    for (const auto& p : model->parameters()) parameters += p.numel();
    const auto prompt = torch::randint(0, config.vocab, {config.prompt_tokens}, torch::kLong);
    fmt::print("TransformerLM V {} D {} L {} H {} max_seq_len {}: {} parameters, {} threads\n",
               config.vocab, config.embedding_dim, config.num_layers, config.num_heads, max_seq_len,
               parameters, torch::get_num_threads());

    const auto options_with_seed = [&](std::uint64_t seed) {
      return GenerateOptions()
          .temperature(config.temperature)
          .generator(at::make_generator<at::CPUGeneratorImpl>(seed));
    };
    // One timed call; returns {seconds, ids}.
    const auto timed = [&](bool cached, std::int64_t count) {
      const auto options_for = options_with_seed(options.seed + 1);
      const auto start = std::chrono::steady_clock::now();
      auto ids = cached ? g2c::sampling::generate_cached(model, prompt, count, options_for)
                        : g2c::sampling::generate(model, prompt, count, options_for);
      if (device.is_cuda()) torch::cuda::synchronize();
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      return std::make_pair(seconds, ids);
    };
    timed(false, 4);  // warm-up: first calls allocate and pick kernels
    timed(true, 4);

    nlohmann::json runs = nlohmann::json::array();
    std::vector<std::string> labels;
    std::vector<double> uncached_rates, cached_rates;
    for (const auto count : config.new_tokens) {
      std::vector<double> uncached_seconds, cached_seconds;
      bool same_tokens = true;
      for (std::int64_t r = 0; r < config.repeats; ++r) {
        if (!options.quiet) fmt::print("  {} tokens, run {}: without the cache...\n", count, r + 1);
        const auto [t_plain, plain_ids] = timed(false, count);
        if (!options.quiet) fmt::print("  {} tokens, run {}: with the cache...\n", count, r + 1);
        const auto [t_cached, cached_ids] = timed(true, count);
        uncached_seconds.push_back(t_plain);
        cached_seconds.push_back(t_cached);
        same_tokens = same_tokens && torch::equal(plain_ids, cached_ids);
      }
      const double uncached_rate =
          static_cast<double>(count) / g2c::exercises::median(uncached_seconds);
      const double cached_rate =
          static_cast<double>(count) / g2c::exercises::median(cached_seconds);
      fmt::print(
          "{:>4} new tokens: {:8.1f} tokens/s without the cache, {:8.1f} with it "
          "({:.1f}x); same tokens: {}\n",
          count, uncached_rate, cached_rate, cached_rate / uncached_rate,
          same_tokens ? "yes" : "no");
      runs.push_back({{"new_tokens", count},
                      {"uncached_seconds", uncached_seconds},
                      {"cached_seconds", cached_seconds},
                      {"uncached_tokens_per_s", uncached_rate},
                      {"cached_tokens_per_s", cached_rate},
                      {"speedup", cached_rate / uncached_rate},
                      {"same_tokens", same_tokens}});
      labels.push_back(fmt::format("{} tokens", count));
      uncached_rates.push_back(uncached_rate);
      cached_rates.push_back(cached_rate);
    }

    auto result = g2c::exercises::run_metadata("11_generation_speed", options, device);
    result["config"] = {{"vocab_size", config.vocab},
                        {"embedding_dim", config.embedding_dim},
                        {"num_layers", config.num_layers},
                        {"num_heads", config.num_heads},
                        {"max_seq_len", max_seq_len},
                        {"prompt_tokens", config.prompt_tokens},
                        {"new_tokens", config.new_tokens},
                        {"repeats", config.repeats},
                        {"temperature", config.temperature},
                        {"weights", "random (speed depends on the shapes only)"},
                        {"threads", torch::get_num_threads()}};
    result["model"] = {{"parameters", parameters}};
    result["runs"] = runs;
    result["labels"] = labels;
    result["uncached_tokens_per_s"] = uncached_rates;
    result["cached_tokens_per_s"] = cached_rates;
    using g2c::exercises::Figure;
    using g2c::exercises::Series;
    result["figures"] = g2c::exercises::figures(
        {Figure::bar("generation_speed.png",
                     fmt::format("Generation speed on {}, ShakespeareLM-1M shape",
                                 g2c::nn::device_name(device)),
                     "", "tokens / s")
             .add(Series("generate (no cache)", "/labels", "/uncached_tokens_per_s"))
             .add(Series("generate_cached (KV cache)", "/labels", "/cached_tokens_per_s"))});
    const auto path = g2c::exercises::save_result(options, "generation_speed.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_11_generation_speed
