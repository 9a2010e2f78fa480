// Exercise 16 — what quantization costs, and what it buys. SmolLM2-135M-Instruct's file stores its
// matrices in Q4_1 blocks (5 bits a weight with the block's scale and minimum) and its embedding in
// Q8_0 (8.5 bits). The model is loaded twice: dequantized to float32 on load (the lesson's path)
// and packed, the blocks kept as they are and decoded row by row inside each matrix product (the
// fast path, g2c/pretrained/packed_weight.h). For each: the memory it holds, how long loading
// takes, the first token of a 50-token prompt, greedy decoding speed, and the fraction of this
// core's memory bandwidth that decoding reaches (every weight is read once per token, so bytes of
// weights x tokens per second is the traffic). Then the price: how far the packed model's logits
// are from the float32 model's, on the prompt and on every decoding step. Writes quantization.json
// and two figures.
#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "exercises/common/timing.h"
#include "g2c/core/errors.h"
#include "g2c/core/memory.h"
#include "g2c/pretrained/generation.h"

namespace exercise_16_quantization {

namespace {

using g2c::pretrained::PretrainedModel;

struct Config {
  std::string model = "SmolLM2-135M-Instruct";
  std::int64_t new_tokens = 64;  // greedy tokens timed after the chat prompt
  std::int64_t repeats = 3;      // timed runs of each measurement (median kept)
};

// The chat prompt the speeds are measured on (about 40 tokens) and a longer one for the first
// token (50 tokens), rendered in the model's template.
const char* kQuestion = "Write a haiku about the sea, then explain its imagery line by line.";
const char* kLongQuestion =
    "I am learning how language models work. Explain in two sentences what a key-value cache "
    "stores during generation and why it makes each new token cheaper to produce.";

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// One core's read bandwidth, GB/s: the best of three sums over 512 MB (far larger than any cache).
double read_bandwidth_gb_per_s() {
  const auto big = torch::ones({128 * 1024 * 1024});  // 512 MB of float32
  double best = 0.0;
  for (int i = 0; i < 3; ++i) {
    const auto start = std::chrono::steady_clock::now();
    const auto sum = big.sum().item<double>();
    const double seconds = seconds_since(start);
    if (sum > 0) best = std::max(best, static_cast<double>(big.nbytes()) / seconds / 1e9);
  }
  return best;
}

struct Measured {
  double load_seconds = 0;
  double weight_mb = 0;
  double resident_growth_mb = 0;  // the process's resident memory, after the load minus before
  double first_token_seconds = 0;
  double tokens_per_s = 0;
  std::vector<std::int64_t> greedy;
  torch::Tensor prompt_logits;  // (T, V)
  torch::Tensor step_logits;    // (N, V): the logits of each greedy step
};

// Greedy decoding after `prompt`: ids, the logits of every cached step, and the seconds of the
// steps alone (the prompt is fed first, untimed).
struct Greedy {
  std::vector<std::int64_t> ids;
  torch::Tensor step_logits;  // (N, V)
  double seconds = 0;
};

Greedy greedy_steps(PretrainedModel& smol, const std::vector<std::int64_t>& prompt,
                    std::int64_t count) {
  auto& model = *smol.model;
  auto cache = model.empty_kv_cache(static_cast<std::int64_t>(prompt.size()) + count);
  auto logits =
      model.head(model.hidden_states(torch::tensor(prompt, torch::kLong).unsqueeze(0), &cache)
                     .select(1, -1));  // (1, V)
  Greedy greedy;
  std::vector<torch::Tensor> steps;
  const auto start = std::chrono::steady_clock::now();
  for (std::int64_t i = 0; i < count; ++i) {
    const auto next = logits.argmax(-1);  // (1)
    greedy.ids.push_back(next.item<std::int64_t>());
    logits = model.forward(next.view({1, 1}), cache).select(1, -1);  // (1, V)
    steps.push_back(logits);
  }
  greedy.seconds = seconds_since(start);
  greedy.step_logits = torch::cat(steps);
  return greedy;
}

Measured measure(const std::string& name, bool packed, const std::vector<std::int64_t>& prompt,
                 const std::vector<std::int64_t>& long_prompt, const Config& config, bool quiet) {
  Measured m;
  g2c::release_freed_memory();  // what an earlier model left in the heap is not counted
  const double resident_before = g2c::resident_mib();
  auto smol =
      g2c::pretrained::load_pretrained_model(name, g2c::pretrained::LoadOptions().packed(packed));
  m.resident_growth_mb = g2c::resident_mib() - resident_before;
  m.load_seconds = smol.report.seconds;
  m.weight_mb = static_cast<double>(smol.report.weight_bytes) / 1e6;
  auto& model = *smol.model;
  torch::NoGradGuard no_grad;
  std::vector<double> first, decode;
  for (std::int64_t r = 0; r < config.repeats; ++r) {
    if (!quiet) fmt::print("  {} weights, run {}...\n", packed ? "packed" : "float32", r + 1);
    auto cache = model.empty_kv_cache(static_cast<std::int64_t>(long_prompt.size()) + 1);
    const auto start = std::chrono::steady_clock::now();
    // The prompt's last position through the head, as generation does (LlamaModel::head).
    const auto hidden =
        model.hidden_states(torch::tensor(long_prompt, torch::kLong).unsqueeze(0), &cache);
    model.head(hidden.select(1, -1)).argmax(-1).item<std::int64_t>();
    first.push_back(seconds_since(start));
    const auto greedy = greedy_steps(smol, prompt, config.new_tokens);
    decode.push_back(static_cast<double>(config.new_tokens) / greedy.seconds);
    m.greedy = greedy.ids;
    m.step_logits = greedy.step_logits;
  }
  m.first_token_seconds = g2c::exercises::median(first);
  m.tokens_per_s = g2c::exercises::median(decode);
  m.prompt_logits = model.forward(torch::tensor(prompt, torch::kLong).unsqueeze(0))[0];  // (T, V)
  return m;
}

// The largest |difference| between two logit tensors, and the mean KL(p_a || p_b) per row.
std::pair<double, double> logit_error(const torch::Tensor& a, const torch::Tensor& b) {
  const auto log_p = torch::log_softmax(a.to(torch::kDouble), -1);
  const auto log_q = torch::log_softmax(b.to(torch::kDouble), -1);
  const double kl = (log_p.exp() * (log_p - log_q)).sum(-1).mean().item<double>();
  return {(a - b).abs().max().item<double>(), kl};
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Module 16: what quantization costs. SmolLM2-135M-Instruct loaded dequantized to float32\n"
      "and packed in its Q4_1/Q8_0 blocks: memory, load time, first token, decoding speed, the\n"
      "fraction of memory bandwidth reached, and the logit difference between the two. Writes\n"
      "quantization.json and figures."};
  g2c::exercises::CommonOptions options;
  options.out = "results/16-inference";
  options.threads = 1;  // one core, as the benchmarks in the module's README
  Config config;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--model", config.model, "Pretrained model (SmolLM2-135M-Instruct)");
  app.add_option("--tokens", config.new_tokens, "Greedy tokens timed after the prompt").positive();
  app.add_option("--repeats", config.repeats, "Timed runs of each measurement (median kept)")
      .positive();
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    if (!device.is_cpu()) {
      throw g2c::ValueError(
          "16_quantization measures the CPU (the packed kernels run there); "
          "use --device cpu");
    }
    const auto name = g2c::pretrained::pretrained_model_name(config.model);
    if (name.empty()) {
      throw g2c::ValueError(
          fmt::format("--model {}: not a pretrained model; try "
                      "SmolLM2-135M-Instruct",
                      config.model));
    }
    const auto tokenizer = g2c::pretrained::PretrainedTokenizer::from_gguf(
        g2c::pretrained::GGUFFile::open(g2c::pretrained::pretrained_model_file(name)));
    const auto prompt = tokenizer.encode(tokenizer.format_chat({{"user", kQuestion}}, true));
    auto long_prompt = tokenizer.encode(tokenizer.format_chat({{"user", kLongQuestion}}, true));
    long_prompt.resize(std::min<std::size_t>(long_prompt.size(), 50));
    fmt::print("{}: prompts of {} and {} tokens, {} greedy tokens, {} thread(s)\n", name,
               prompt.size(), long_prompt.size(), config.new_tokens, torch::get_num_threads());
    const double bandwidth = read_bandwidth_gb_per_s();
    fmt::print("memory read bandwidth: {:.1f} GB/s\n", bandwidth);

    const auto packed = measure(name, true, prompt, long_prompt, config, options.quiet);
    const auto dense = measure(name, false, prompt, long_prompt, config, options.quiet);
    const auto [prompt_max, prompt_kl] = logit_error(packed.prompt_logits, dense.prompt_logits);
    const auto [step_max, step_kl] = logit_error(packed.step_logits, dense.step_logits);
    const bool same_greedy = packed.greedy == dense.greedy;

    nlohmann::json weights = nlohmann::json::object();
    std::vector<std::string> labels;
    std::vector<double> weight_mb, resident_mb, speed, bandwidth_fraction;
    for (const auto& [label, m] : {std::pair<std::string, const Measured&>{"float32", dense},
                                   std::pair<std::string, const Measured&>{"packed", packed}}) {
      const double fraction = m.weight_mb * 1e6 * m.tokens_per_s / (bandwidth * 1e9);
      fmt::print(
          "{:>8}: weights {:6.1f} MB (resident +{:6.1f} MB), loaded in {:.2f} s; first token of "
          "{} in {:.3f} s; {:6.1f} tokens/s = {:5.1f} GB/s of weights, {:.0f}% of the bandwidth\n",
          label, m.weight_mb, m.resident_growth_mb, m.load_seconds, long_prompt.size(),
          m.first_token_seconds, m.tokens_per_s, m.weight_mb * m.tokens_per_s / 1e3,
          100 * fraction);
      weights[label] = {
          {"weight_mb", m.weight_mb},       {"resident_growth_mb", m.resident_growth_mb},
          {"load_seconds", m.load_seconds}, {"first_token_seconds", m.first_token_seconds},
          {"tokens_per_s", m.tokens_per_s}, {"bandwidth_fraction", fraction}};
      labels.push_back(label);
      weight_mb.push_back(m.weight_mb);
      resident_mb.push_back(m.resident_growth_mb);
      speed.push_back(m.tokens_per_s);
      bandwidth_fraction.push_back(100 * fraction);
    }
    fmt::print(
        "packed vs float32 logits: prompt max |diff| {:.2e} (KL {:.1e}), decoding steps max "
        "|diff| {:.2e} (KL {:.1e}); greedy tokens the same: {}\n",
        prompt_max, prompt_kl, step_max, step_kl, same_greedy ? "yes" : "no");
    fmt::print("packed is {:.1f}x smaller and decodes {:.1f}x faster\n",
               dense.weight_mb / packed.weight_mb, packed.tokens_per_s / dense.tokens_per_s);

    auto result = g2c::exercises::run_metadata("16_quantization", options, device);
    result["config"] = {{"model", name},
                        {"prompt_tokens", prompt.size()},
                        {"first_token_prompt_tokens", long_prompt.size()},
                        {"new_tokens", config.new_tokens},
                        {"repeats", config.repeats},
                        {"threads", torch::get_num_threads()}};
    result["read_bandwidth_gb_per_s"] = bandwidth;
    result["weights"] = weights;
    result["logit_error"] = {{"prompt_max_abs", prompt_max},
                             {"prompt_mean_kl", prompt_kl},
                             {"steps_max_abs", step_max},
                             {"steps_mean_kl", step_kl},
                             {"same_greedy_tokens", same_greedy}};
    result["greedy_text"] = tokenizer.decode(packed.greedy);
    result["labels"] = labels;
    result["weight_mb"] = weight_mb;
    result["resident_growth_mb"] = resident_mb;
    result["tokens_per_s"] = speed;
    result["bandwidth_percent"] = bandwidth_fraction;
    using g2c::exercises::Figure;
    using g2c::exercises::Series;
    result["figures"] = g2c::exercises::figures(
        {Figure::bar("quantization_memory.png",
                     fmt::format("{}: memory held, float32 vs packed blocks", name), "", "MB")
             .add(Series("weights", "/labels", "/weight_mb"))
             .add(Series("resident growth on load", "/labels", "/resident_growth_mb")),
         Figure::bar("quantization_speed.png",
                     fmt::format("Greedy decoding on {} CPU thread(s)", torch::get_num_threads()),
                     "", "tokens / s")
             .add(Series("tokens / s", "/labels", "/tokens_per_s"))});
    const auto path = g2c::exercises::save_result(options, "quantization.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_16_quantization
