// g2c-generate: text from a trained model artifact, shown while it is being generated.
//
//   g2c-generate                                     ShakespeareLM-1M, prompt "KING:", 300 tokens
//   g2c-generate --prompt "ROMEO:" --tokens 200 --temperature 0.5 --top-k 20 --readable
//   g2c-generate --model artifacts/models/ShakespeareLM-1M --temperature 0 --no-compare
//   g2c-generate --json out.json                     also write the settings, text and speeds
//   g2c-generate --model SmolLM2-135M-Instruct --prompt "The sea" --temperature 0
//                                                    a real pretrained model (module 16), its
//                                                    weights packed; --weights float32 for the
//                                                    lesson's dequantized ones
//
// The text goes to stdout; the model line and the speeds go to stderr, so `> sample.txt` keeps
// only the text. Generation uses the KV cache; unless --no-compare, the same tokens are then
// generated again without it (module 11's generate()) and both speeds are reported. A pretrained
// model always uses the cache; --compare generates again with the other weights (packed or
// float32) and reports both speeds.
//
// Exit status: g2c::run_cli's table (g2c/core/cli.h), as for every course program: 0 success, 2 bad
// input (a missing artifact, an unknown device, a bad option), 3 a course TODO on the way is still
// unwritten (the message names it), 1 anything else.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "g2c/core/atomic_file.h"
#include "g2c/core/cli.h"
#include "g2c/core/errors.h"
#include "g2c/core/memory.h"
#include "g2c/nn/device.h"
#include "g2c/pretrained/generation.h"
#include "g2c/sampling/text_generation.h"

namespace {

using g2c::sampling::GenerateOptions;

struct Options {
  std::string model = "ShakespeareLM-1M";
  std::string prompt = "KING:";
  std::int64_t tokens = 300;
  double temperature = 0.8;
  std::optional<std::int64_t> top_k;
  std::optional<double> top_p;
  double repetition_penalty = 1.0;
  std::uint64_t seed = 1;
  bool readable = false;
  bool compare = true;
  std::string device = "auto";
  int threads = 0;
  std::optional<std::filesystem::path> json;
  std::string weights = "packed";  // a pretrained model's: packed or float32
};

GenerateOptions generate_options(const Options& options) {
  return GenerateOptions()
      .temperature(options.temperature)
      .top_k(options.top_k)
      .top_p(options.top_p)
      .repetition_penalty(options.repetition_penalty)
      .generator(at::make_generator<at::CPUGeneratorImpl>(options.seed));
}

// The sampling settings a result file records.
nlohmann::json settings_json(const Options& options) {
  return {{"tokens", options.tokens},
          {"temperature", options.temperature},
          {"top_k", options.top_k ? nlohmann::json(*options.top_k) : nlohmann::json()},
          {"top_p", options.top_p ? nlohmann::json(*options.top_p) : nlohmann::json()},
          {"repetition_penalty", options.repetition_penalty},
          {"seed", options.seed}};
}

double seconds_since(std::chrono::steady_clock::time_point start, const torch::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// One pretrained generation's text and speeds.
struct PretrainedRun {
  std::vector<std::int64_t> ids;
  double first_token_seconds = 0.0;  // the prompt through the model and the first id drawn
  double seconds = 0.0;              // all of it
  double tokens_per_s() const {      // decoding, after the first token
    return ids.size() > 1 ? static_cast<double>(ids.size() - 1) / (seconds - first_token_seconds)
                          : 0.0;
  }
};

PretrainedRun generate_with(g2c::pretrained::PretrainedModel& pretrained,
                            const std::vector<std::int64_t>& prompt, const Options& options,
                            const std::function<void(const std::string&)>& on_text) {
  PretrainedRun run;
  const auto start = std::chrono::steady_clock::now();
  const auto since = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  const auto generation = g2c::pretrained::generate_pretrained_text(
      pretrained, prompt, options.tokens, generate_options(options),
      [&](const std::string& text) {
        if (on_text) on_text(text);
        return true;
      },
      {},
      [&] {
        if (run.first_token_seconds == 0.0) run.first_token_seconds = since();
        return true;
      });
  run.seconds = since();
  run.ids = generation.ids;
  return run;
}

// A pretrained model (module 16): the prompt continued as raw text (no chat template: g2c-chat has
// it), on the CPU, its weights packed or float32.
int run_pretrained(const Options& options, const std::string& name) {
  if (options.threads > 0) torch::set_num_threads(options.threads);
  if (options.device != "auto" && options.device != "cpu") {
    throw g2c::ValueError(
        fmt::format("--device {}: the pretrained model runs on the CPU", options.device));
  }
  if (options.tokens <= 0) throw g2c::ValueError("--tokens: a pretrained model needs at least 1");
  torch::NoGradGuard no_grad;
  const auto load = [&](const std::string& weights) {
    return g2c::pretrained::load_pretrained_model(
        name, g2c::pretrained::LoadOptions().packed(weights == "packed"));
  };
  auto smol = load(options.weights);
  fmt::print(stderr,
             "{} (pretrained, {} parameters, weights {}: {:.0f} MB, loaded in {:.2f} s); cpu, {} "
             "thread{}\n",
             smol.name, smol.model->options.num_parameters(), options.weights,
             smol.report.weight_bytes / 1e6, smol.report.seconds, torch::get_num_threads(),
             torch::get_num_threads() == 1 ? "" : "s");
  const auto prompt = smol.tokenizer.encode(options.prompt);
  if (prompt.empty()) throw g2c::ValueError("--prompt: give some text to continue");
  const bool terminal = g2c::sampling::stdout_is_terminal();
  const auto show = [&](const std::string& text) {
    std::cout << (terminal ? g2c::sampling::for_terminal(text) : text) << std::flush;
  };
  show(options.prompt);
  const auto run = generate_with(smol, prompt, options, show);
  std::cout << std::endl;
  fmt::print(stderr,
             "{} tokens after a {}-token prompt: first token in {:.2f} s, then {:.1f} tokens/s\n",
             run.ids.size(), prompt.size(), run.first_token_seconds, run.tokens_per_s());
  const auto speeds = [](const PretrainedRun& r) {
    return nlohmann::json{{"first_token_seconds", r.first_token_seconds},
                          {"seconds", r.seconds},
                          {"tokens_per_s", r.tokens_per_s()}};
  };
  nlohmann::json result = {{"model", smol.name},
                           {"weights", options.weights},
                           {"weight_bytes", smol.report.weight_bytes},
                           {"load_seconds", smol.report.seconds},
                           {"device", "cpu"},
                           {"threads", torch::get_num_threads()},
                           {"prompt", options.prompt},
                           {"prompt_tokens", prompt.size()},
                           {"settings", settings_json(options)},
                           {"text", smol.tokenizer.decode(run.ids)},
                           {"new_tokens", run.ids.size()},
                           {options.weights, speeds(run)}};
  if (options.compare && run.ids.size() > 1) {
    const auto other_weights = options.weights == "packed" ? "float32" : "packed";
    auto other = load(other_weights);
    const auto again = generate_with(other, prompt, options, {});
    const bool same = again.ids == run.ids;
    fmt::print(stderr,
               "with {} weights: first token in {:.2f} s, then {:.1f} tokens/s ({:.0f} MB); same "
               "tokens: {}\n",
               other_weights, again.first_token_seconds, again.tokens_per_s(),
               other.report.weight_bytes / 1e6, same ? "yes" : "no");
    result[other_weights] = speeds(again);
    result[other_weights]["weight_bytes"] = other.report.weight_bytes;
    result[other_weights]["same_tokens"] = same;
  }
  result["peak_resident_mib"] = g2c::peak_resident_mib();
  if (options.json) {
    g2c::write_json_atomic(*options.json, result);
    fmt::print(stderr, "wrote {}\n", options.json->string());
  }
  return 0;
}

int run(const Options& options) {
  if (const auto name = g2c::pretrained::pretrained_model_name(options.model); !name.empty()) {
    return run_pretrained(options, name);
  }
  g2c::reuse_freed_memory();  // every step allocates the same tensors: see g2c/core/memory.h
  if (options.threads > 0) torch::set_num_threads(options.threads);
  const auto device = g2c::nn::resolve_device(options.device);
  auto text_model = g2c::sampling::load_text_model(options.model, device);
  auto& model = *text_model.artifact.model;
  fmt::print(stderr, "{}; {}; {}\n", g2c::pretraining::describe_model_artifact(text_model.artifact),
             text_model.tokenizer.description(), g2c::nn::device_name(device));

  const auto prompt = text_model.encode(options.prompt);
  const auto suppressed = options.readable
                              ? g2c::sampling::unreadable_token_ids(text_model.tokenizer)
                              : std::vector<std::int64_t>{};
  const g2c::sampling::SuppressTokens mask(model, suppressed);

  // With the KV cache, streaming: each token's text is printed as soon as it is complete. On a
  // terminal, control characters are shown, not obeyed (a raw sample can draw a BEL or an ESC);
  // a file or a pipe gets the bytes as generated.
  const bool terminal = g2c::sampling::stdout_is_terminal();
  const auto show = [&](const std::string& text) {
    std::cout << (terminal ? g2c::sampling::for_terminal(text) : text) << std::flush;
  };
  show(options.prompt);
  g2c::sampling::TextStream stream(text_model.tokenizer);
  auto start = std::chrono::steady_clock::now();
  const auto cached =
      g2c::sampling::generate_long_cached(model, prompt, options.tokens, generate_options(options),
                                          [&](std::int64_t id) { show(stream.push(id)); });
  const double cached_seconds = seconds_since(start, device);
  show(stream.finish());
  std::cout << std::endl;
  const auto rate = [](std::int64_t count, double seconds) { return count / seconds; };
  fmt::print(stderr, "{} tokens in {:.2f} s: {:.0f} tokens/s with the KV cache", cached.new_tokens,
             cached_seconds, rate(cached.new_tokens, cached_seconds));
  if (cached.cache_restarts > 0) {
    fmt::print(stderr, " (the cache restarted {} from the last {} tokens)",
               cached.cache_restarts == 1 ? std::string("once")
                                          : fmt::format("{} times", cached.cache_restarts),
               model.max_seq_len / 2);
  }
  fmt::print(stderr, "\n");

  nlohmann::json result = {
      {"model", text_model.artifact.summary.name},
      {"artifact", text_model.artifact.dir.string()},
      {"tokenizer", text_model.tokenizer.description()},
      {"device", g2c::nn::device_name(device)},
      {"threads", torch::get_num_threads()},
      {"prompt", options.prompt},
      {"settings", settings_json(options)},
      {"text", text_model.tokenizer.decode(std::vector<std::int64_t>(
                   cached.ids.data_ptr<std::int64_t>(),
                   cached.ids.data_ptr<std::int64_t>() + cached.ids.numel()))},
      {"new_tokens", cached.new_tokens},
      {"cache_restarts", cached.cache_restarts},
      {"cached",
       {{"seconds", cached_seconds}, {"tokens_per_s", rate(cached.new_tokens, cached_seconds)}}}};
  result["settings"]["readable"] = options.readable;
  result["settings"]["suppressed_tokens"] = suppressed.size();

  if (options.compare && cached.new_tokens > 0) {
    // The same length with generate(): the whole (cropped) context through the model per token.
    start = std::chrono::steady_clock::now();
    const auto plain =
        g2c::sampling::generate(model, prompt, cached.new_tokens, generate_options(options));
    const double plain_seconds = seconds_since(start, device);
    const auto plain_new = plain.size(0) - prompt.size(0);
    const bool same = torch::equal(plain, cached.ids);
    fmt::print(stderr,
               "{} tokens in {:.2f} s: {:.0f} tokens/s without it (generate()); the cache is "
               "{:.1f}x faster; same tokens: {}\n",
               plain_new, plain_seconds, rate(plain_new, plain_seconds),
               plain_seconds / cached_seconds * cached.new_tokens / plain_new,
               same                        ? "yes"
               : cached.cache_restarts > 0 ? "no (expected once the cache has restarted)"
                                           : "no");
    result["uncached"] = {{"seconds", plain_seconds},
                          {"tokens_per_s", rate(plain_new, plain_seconds)},
                          {"same_tokens", same}};
  }
  if (options.json) {
    g2c::write_json_atomic(*options.json, result);
    fmt::print(stderr, "wrote {}\n", options.json->string());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "g2c-generate: text from a trained model artifact (module 11), streamed as it is generated,\n"
      "with its speed with and without the KV cache. Train one first: scripts/run.sh 10_pretrain"};
  Options options;
  app.add_option("--model", options.model,
                 "Model artifact: a name under artifacts/models (or an alias such as "
                 "ShakespeareLM), a folder, or a pretrained model (SmolLM2-135M-Instruct)");
  app.add_option("--prompt", options.prompt, "Text to continue");
  app.add_option("--tokens", options.tokens, "New tokens to generate").non_negative();
  app.add_option("--temperature", options.temperature, "Softmax temperature; 0 = greedy")
      .non_negative();
  app.add_option("--top-k", options.top_k, "Keep only the k most likely tokens")
      .positive()
      .no_default();
  app.add_option("--top-p", options.top_p, "Keep the most likely tokens holding probability p")
      .range(0.0, 1.0)
      .no_default();
  app.add_option("--repetition-penalty", options.repetition_penalty,
                 "Penalty on tokens already in the text; 1 = none")
      .positive();
  app.add_option("--seed", options.seed, "Seed of the draws");
  app.add_flag("--readable", options.readable,
               "Never draw special tokens, control characters or pieces of characters");
  app.add_flag("--compare,!--no-compare", options.compare,
               "Generate again without the KV cache and report both speeds");
  app.add_option("--device", options.device, "auto, cpu, cuda or mps");
  app.add_option("--threads", options.threads, "CPU threads (0: LibTorch's default)")
      .non_negative();
  app.add_option("--weights", options.weights,
                 "A pretrained model's weights: packed (the fast path) or float32 (dequantized on "
                 "load)")
      .one_of({"packed", "float32"});
  app.add_option("--json", options.json,
                 "Also write the settings, the text and the speeds to this JSON file")
      .no_default();
  return g2c::run_cli(app, argc, argv, [&] {
    if (options.temperature == 0.0) {
      // Greedy decoding is the argmax, with no warper and no draw (sample_next_token).
      std::vector<std::string> ignored;
      if (options.top_k) ignored.push_back("--top-k");
      if (options.top_p) ignored.push_back("--top-p");
      if (options.repetition_penalty != 1.0) ignored.push_back("--repetition-penalty");
      if (!ignored.empty()) {
        fmt::print(stderr,
                   "g2c-generate: --temperature 0 is greedy decoding (the most likely token every "
                   "time), so {} change nothing; give a temperature above 0 to sample with them\n",
                   fmt::join(ignored, ", "));
      }
    }
    return run(options);
  });
}
