// Exercise 18 — what the grammar costs a decoding step. SmolLM2-135M-Instruct writes a tool call
// after a chat prompt, greedily, four ways, each through the same KV-cached model
// (g2c::pretrained::LlamaLogitsModel):
//   free         module 11's loop, no grammar                     forward + argmax
//   uncached     the same loop with allowed_token_mask at every    + one sweep of 49,152 pieces
//                step and the mask applied, nothing memoised
//   cold cache   generate_json with a new mask cache               a sweep per new state
//   warm cache   generate_json again with that cache               lookups only
// A step's time is the time between two successive forward calls (the prompt's own forward, the
// first, is left out), the median kept. Beside them: the sweep alone — allowed_token_mask — at
// states where the pieces are rejected at once (before the root '{', after a key) and where almost
// every piece is read to its end (inside a string), and how long vocab_pieces takes once.
// Writes constrained_bench.json.
#include <chrono>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/timing.h"
#include "g2c/core/errors.h"
#include "g2c/pretrained/generation.h"
#include "g2c/pretrained/logits_model.h"
#include "g2c/sampling/constrained.h"

namespace exercise_18_constrained_bench {

namespace {

using g2c::sampling::GenerateJsonOptions;
using g2c::sampling::LogitsModel;
using g2c::sampling::MaskCache;
using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point start, Clock::time_point end) {
  return std::chrono::duration<double, std::milli>(end - start).count();
}

const char* kQuestion =
    "Call the calculator tool for 13 + 28. Answer with JSON only, like {\"name\": \"calculator\", "
    "\"arguments\": {\"expression\": \"...\"}}.";

// The model, with the start time of every forward call.
class TimedModel : public LogitsModel {
 public:
  explicit TimedModel(LogitsModel& inner) : inner_(&inner) {}
  torch::Tensor forward(const torch::Tensor& context) override {
    starts.push_back(Clock::now());
    return inner_->forward(context);
  }
  std::int64_t max_seq_len() const override { return inner_->max_seq_len(); }
  std::int64_t vocab_size() const override { return inner_->vocab_size(); }
  torch::Device device() const override { return inner_->device(); }

  /// The median time of a whole step: from one forward call to the next, the first (the prompt)
  /// left out.
  double median_step_ms() const {
    std::vector<double> steps;
    for (std::size_t i = 2; i < starts.size(); ++i) {
      steps.push_back(ms_between(starts[i - 1], starts[i]));
    }
    if (steps.empty()) throw g2c::ValueError("too few steps to time: raise --tokens");
    return g2c::exercises::median(steps);
  }

  std::vector<Clock::time_point> starts;

 private:
  LogitsModel* inner_;
};

// Module 11's greedy loop on `model`; with `sweep_every_step`, the grammar's mask computed afresh
// at every step (allowed_token_mask, nothing memoised) and applied before the argmax, the loop
// ending when the root object closes. Returns the ids, prompt included.
torch::Tensor greedy_loop(LogitsModel& model, const torch::Tensor& prompt,
                          const std::vector<std::string>& pieces, std::int64_t tokens,
                          bool sweep_every_step) {
  const g2c::sampling::JsonPrefixAutomaton automaton;
  const auto greedy = g2c::sampling::GenerateOptions().temperature(0);
  auto state = automaton.initial();
  auto ids = prompt.clone();  // (T)
  for (std::int64_t step = 0; step < tokens; ++step) {
    auto logits = model(ids.unsqueeze(0)).select(1, -1);  // (1, V)
    if (sweep_every_step) {
      const auto allowed = g2c::sampling::allowed_token_mask(automaton, state, pieces);  // (V)
      logits = logits.masked_fill(allowed.logical_not(), -std::numeric_limits<double>::infinity());
    }
    const auto next = g2c::sampling::sample_next_token(logits, ids, greedy);  // (1)
    ids = torch::cat({ids, next});
    if (sweep_every_step) {
      state =
          *automaton.advance(state, pieces[static_cast<std::size_t>(next.item<std::int64_t>())]);
      if (automaton.is_complete(state)) break;
    }
  }
  return ids;
}

struct Run {
  std::string name;
  double step_ms = 0;
  std::int64_t tokens = 0;
  std::size_t masks = 0;  // distinct states the run's cache ended with
  std::string text;
};

std::string continuation(const std::vector<std::string>& pieces, const torch::Tensor& ids,
                         std::int64_t from) {
  std::string text;
  for (std::int64_t i = from; i < ids.size(0); ++i) {
    text += pieces[static_cast<std::size_t>(ids[i].item<std::int64_t>())];
  }
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Module 18: what constrained decoding costs a step over SmolLM2's 49,152-token vocabulary.\n"
      "Greedy decoding free, under the JSON grammar with the masks uncached, with a cold and a\n"
      "warm mask cache; the mask sweep alone at several states. Writes constrained_bench.json."};
  g2c::exercises::CommonOptions options;
  options.out = "results/18-tools";
  options.threads = 1;  // one core, as the module's README reports it
  std::string model_name = "SmolLM2-135M-Instruct";
  std::string weights = "packed";
  std::int64_t tokens = 40, repeats = 5;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--model", model_name, "Pretrained model (SmolLM2-135M-Instruct)");
  app.add_option("--weights", weights, "packed or float32").one_of({"packed", "float32"});
  app.add_option("--tokens", tokens, "Greedy tokens per run").range(3, 512);
  app.add_option("--repeats", repeats, "Timed sweeps per state (median kept)").positive();
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    if (!device.is_cpu()) {
      throw g2c::ValueError("18_constrained_bench measures the CPU; use --device cpu");
    }
    torch::NoGradGuard no_grad;
    auto smol = g2c::pretrained::load_pretrained_model(
        model_name, g2c::pretrained::LoadOptions().packed(weights == "packed"));
    const auto vocab = smol.model->options.vocab_size();

    const auto pieces_start = Clock::now();
    const auto pieces = g2c::pretrained::vocab_pieces(smol.tokenizer, vocab);
    const double pieces_ms = ms_between(pieces_start, Clock::now());

    // The sweep alone, at states that reject most pieces at their first byte and at one that
    // reads almost every piece to its end.
    const g2c::sampling::JsonPrefixAutomaton automaton;
    nlohmann::json sweeps = nlohmann::json::array();
    for (const std::string prefix : {"", R"({"name")", R"({"name": "calcul)"}) {
      const auto state = *automaton.advance(automaton.initial(), prefix);
      std::vector<double> times;
      std::int64_t allowed = 0;
      for (std::int64_t r = 0; r < repeats; ++r) {
        const auto start = Clock::now();
        const auto mask = g2c::sampling::allowed_token_mask(automaton, state, pieces);
        times.push_back(ms_between(start, Clock::now()));
        allowed = mask.sum().item<std::int64_t>();
      }
      const double ms = g2c::exercises::median(times);
      fmt::print("mask sweep after {:<22} {:7.2f} ms  ({} of {} pieces allowed)\n",
                 fmt::format("'{}':", prefix), ms, allowed, vocab);
      sweeps.push_back({{"prefix", prefix}, {"ms", ms}, {"allowed", allowed}});
    }

    const auto prompt = torch::tensor(
        smol.tokenizer.encode(smol.tokenizer.format_chat({{"user", kQuestion}}, true)),
        torch::kLong);
    const auto prompt_len = prompt.size(0);
    g2c::pretrained::LlamaLogitsModel cached_model(*smol.model);
    std::vector<Run> runs;

    for (const std::string name : {"free", "uncached"}) {
      TimedModel model(cached_model);
      const auto ids = greedy_loop(model, prompt, pieces, tokens, name == "uncached");
      runs.push_back({name, model.median_step_ms(), ids.size(0) - prompt_len, 0,
                      g2c::tokenizer::to_valid_utf8(continuation(pieces, ids, prompt_len))});
    }
    MaskCache cache;
    for (const std::string name : {"cold cache", "warm cache"}) {
      TimedModel model(cached_model);
      const auto ids = g2c::sampling::generate_json(
          model, prompt, pieces,
          GenerateJsonOptions().max_new_tokens(tokens).temperature(0).mask_cache(&cache));
      runs.push_back({name, model.median_step_ms(), ids.size(0) - prompt_len, cache.size(),
                      g2c::tokenizer::to_valid_utf8(continuation(pieces, ids, prompt_len))});
    }

    fmt::print("vocab_pieces: {} pieces in {:.1f} ms; prompt {} tokens; {} weights, {} thread(s)\n",
               pieces.size(), pieces_ms, prompt_len, weights, torch::get_num_threads());
    nlohmann::json steps = nlohmann::json::array();
    const double free_ms = runs.front().step_ms;
    for (const auto& run : runs) {
      fmt::print("{:>10}: {:7.2f} ms a step ({:+6.2f} ms against free), {} tokens{}\n", run.name,
                 run.step_ms, run.step_ms - free_ms, run.tokens,
                 run.masks ? fmt::format(", {} masks cached", run.masks) : std::string());
      steps.push_back({{"run", run.name},
                       {"step_ms", run.step_ms},
                       {"tokens", run.tokens},
                       {"masks_cached", run.masks},
                       {"text", run.text}});
    }
    fmt::print("free text:        {}\nconstrained text: {}\n", runs.front().text, runs.back().text);

    auto result = g2c::exercises::run_metadata("18_constrained_bench", options, device);
    result["config"] = {{"model", smol.name},
                        {"weights", weights},
                        {"tokens", tokens},
                        {"repeats", repeats},
                        {"prompt_tokens", prompt_len},
                        {"vocab_size", vocab},
                        {"threads", torch::get_num_threads()}};
    result["vocab_pieces_ms"] = pieces_ms;
    result["mask_sweeps"] = sweeps;
    result["steps"] = steps;
    g2c::exercises::save_result(options, "constrained_bench.json", result);
  });
}

}  // namespace exercise_18_constrained_bench
