// Beyond specdec — SmolLM2-135M-Instruct verifying its own drafts. The drafters share its
// tokenizer: prompt lookup (copy what followed the latest earlier match of the context's last few
// ids: no model at all) and early exit (the model's first N of 30 blocks, its final norm and its
// tied head: no training). Prompts in its chat template, of two kinds: extraction (quote,
// summarise or reformat a passage given in the prompt, so that the reply repeats the prompt) and
// open (a story, an explanation: nothing to copy). For each weight format (float32, the lesson's
// path; packed, the fast path) and each drafter and k: the greedy output of the cached fast path
// against plain cached decoding's, prompt by prompt (they must be identical), acceptance, tokens
// per target pass, and the clock — each prompt decoded plainly and by every drafter in turn, the
// same cache and kernels. Also the cost of a (k + 1)-position verification pass and of an early
// exit's step, in plain steps, and the vocabulary check that keeps the course's byte-level models
// from drafting. Writes specdec_smollm2.json and specdec_smollm2_*.png.
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "exercises/beyond-specdec/prompts.h"
#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "exercises/common/timing.h"
#include "g2c/core/errors.h"
#include "g2c/core/progress.h"
#include "g2c/pretrained/generation.h"
#include "g2c/pretrained/logits_model.h"
#include "g2c/sampling/logits_model.h"
#include "g2c/specdec/cached.h"
#include "g2c/specdec/drafter.h"
#include "g2c/transformer/transformer_lm.h"

namespace exercise_beyond_specdec_smollm2 {

namespace {

using g2c::exercises::Figure;
using g2c::exercises::Series;

// Four passages written for this exercise: facts a reply can quote, shorten or list.
constexpr const char* kPassages[] = {
    "Port Ellery is a small fishing town on a sheltered bay. It was founded in 1742 by three "
    "families who moved down from the hills to fish for herring. Today about 4,300 people live "
    "there. The harbour holds forty boats, and every morning the catch is sold at the market "
    "beside the old stone pier. In summer the town holds a regatta, and visitors come by train to "
    "watch the sailing races and eat smoked fish on the quay.",
    "A bicycle's gears change how far the rear wheel turns for each turn of the pedals. The chain "
    "runs from a toothed ring at the pedals to a smaller cog on the rear wheel. When the front "
    "ring has 40 teeth and the rear cog has 20, one turn of the pedals turns the wheel twice. A "
    "larger rear cog makes pedalling easier but slower, which helps on hills. A smaller rear cog "
    "makes each turn harder but carries the rider further, which suits flat roads.",
    "A honeybee colony in summer can hold 50,000 bees. Almost all of them are workers, which are "
    "female. The queen lays up to 2,000 eggs a day, and the males, called drones, live only to "
    "mate. Young workers clean cells and feed larvae; older workers guard the entrance and fly "
    "out to gather nectar and pollen. A forager tells her sisters where flowers are with a waggle "
    "dance, whose angle gives the direction and whose length gives the distance.",
    "To bake a simple loaf, mix 500 grams of flour, 10 grams of salt, 7 grams of dried yeast and "
    "350 millilitres of warm water. Knead the dough for ten minutes until it is smooth and springs "
    "back when pressed. Leave it in a covered bowl until it has doubled in size, which takes about "
    "an hour. Shape it into a loaf, let it rise again for thirty minutes, and bake it at 220 "
    "degrees Celsius for thirty to thirty-five minutes, until it sounds hollow when tapped "
    "underneath.",
};

// What to do with a passage: each reply repeats some of the prompt, more or less closely.
constexpr const char* kExtractionTasks[][2] = {
    {"quote", "Repeat the following passage exactly as it is written.\n\n"},
    {"summarise", "Summarize the following passage.\n\n"},
    {"reformat", "Rewrite the following passage as a bulleted list of facts.\n\n"},
};

// Nothing in these prompts to copy.
constexpr const char* kOpenPrompts[] = {
    "Write a short story about a lighthouse keeper who finds a message in a bottle.",
    "Explain why the sky is blue.",
    "Give me three tips for learning to cook.",
    "What are the benefits of regular exercise?",
    "Describe a walk through a forest in autumn.",
    "Write a poem about the sea.",
};

struct ChatPrompt {
  std::string kind;  // "extraction" or "open"
  std::string task;  // quote, summarise, reformat, open
  std::string text;  // the user's message
};

std::vector<ChatPrompt> chat_prompts(std::int64_t passages, std::int64_t open) {
  std::vector<ChatPrompt> prompts;
  for (std::int64_t p = 0; p < passages; ++p) {
    for (const auto& [task, instruction] : kExtractionTasks) {
      prompts.push_back({"extraction", task, std::string(instruction) + kPassages[p]});
    }
  }
  for (std::int64_t p = 0; p < open; ++p) prompts.push_back({"open", "open", kOpenPrompts[p]});
  return prompts;
}

/// A way of drafting: "lookup" or "exit<N>" (the first N blocks), at draft length k.
struct Way {
  std::string drafter;
  std::int64_t exit_blocks = 0;  // 0: prompt lookup
  std::int64_t k = 1;
  std::string name() const { return fmt::format("{} k{}", drafter, k); }
};

/// The ways of drafting a --drafters name stands for: prompt lookup at each of `ks`, an early
/// exit at `exit_k`.
std::vector<Way> parse_drafter(const std::string& name, std::int64_t blocks,
                               const std::vector<std::int64_t>& ks, std::int64_t exit_k) {
  if (name == "lookup") {
    std::vector<Way> ways;
    for (const auto k : ks) ways.push_back({name, 0, k});
    return ways;
  }
  if (name.rfind("exit", 0) == 0) {
    try {
      std::size_t used = 0;
      const auto n = std::stoll(name.substr(4), &used);
      if (used == name.size() - 4 && n >= 1 && n < blocks) return {{name, n, exit_k}};
    } catch (const std::exception&) {
    }
  }
  throw g2c::ValueError(fmt::format(
      "--drafters: '{}' is not a drafter; use lookup (prompt lookup) or exitN with N in 1..{} "
      "(the model's first N blocks), e.g. exit8",
      name, blocks - 1));
}

/// One drafter at one k, added up over a kind of prompt.
struct Tally {
  g2c::specdec::SpecStats stats;
  double seconds = 0.0;
  std::int64_t identical = 0, prompts = 0;
};

/// Median milliseconds of one cached pass of `positions` new ids after a `context`-id prefix,
/// rolled back after each run so that every run sees the same cache.
double pass_ms(g2c::sampling::CachedScoringModel& model, std::int64_t context,
               std::int64_t positions, std::int64_t repeats) {
  torch::NoGradGuard no_grad;
  auto cache = model.empty_cache();
  model.forward(torch::arange(1, context + 1, torch::kLong).unsqueeze(0), cache);
  const auto block = torch::arange(context + 1, context + 1 + positions, torch::kLong).unsqueeze(0);
  return g2c::exercises::median_ms(
      [&] {
        model.forward(block, cache);
        cache.truncate(context);
      },
      static_cast<int>(repeats));
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Beyond specdec: SmolLM2-135M-Instruct verifying drafts from prompt lookup and from its\n"
      "own first blocks (early exit), on extraction and open prompts in its chat template:\n"
      "identity with greedy decoding, acceptance, tokens per pass and tokens per second against\n"
      "plain cached decoding, float32 and packed. Writes specdec_smollm2.json and\n"
      "specdec_smollm2_*.png."};
  g2c::exercises::CommonOptions options;
  options.out = "results/beyond-specdec";
  options.threads = 1;
  g2c::exercises::add_common_options(app, options);
  std::string model_name = "SmolLM2-135M-Instruct";
  std::vector<std::string> weights = {"float32", "packed"};
  std::vector<std::string> drafter_names = {"lookup", "exit4", "exit8", "exit15"};
  std::vector<std::int64_t> ks = {2, 4, 8};
  std::int64_t exit_k = 1, passages = 4, open = 6, new_tokens = 128, ngram = 3, min_ngram = 2,
               repeats = 1;
  app.add_option("--model", model_name, "The pretrained model that verifies");
  app.add_option("--weights", weights, "Weight formats, each run in turn")
      .one_of({"float32", "packed"});
  app.add_option("--drafters", drafter_names,
                 "lookup (prompt lookup) and/or exitN (the model's first N blocks)");
  app.add_option("--ks", ks, "Draft lengths k of prompt lookup").range(1, 64);
  app.add_option("--exit-k", exit_k, "Draft length k of the early exits").range(1, 64);
  app.add_option("--passages", passages, "Passages (of 4), three extraction prompts each")
      .range(0, 4);
  app.add_option("--open", open, "Open prompts (of 6)").range(0, 6);
  app.add_option("--new-tokens", new_tokens, "Most tokens generated per prompt").range(1, 2048);
  app.add_option("--ngram", ngram, "Longest n-gram prompt lookup matches").range(1, 8);
  app.add_option("--min-ngram", min_ngram, "Shortest n-gram prompt lookup matches").range(1, 8);
  app.add_option("--repeats", repeats, "Timed runs per prompt and way (the median is kept)")
      .range(1, 20);
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    if (!device.is_cpu()) {
      throw g2c::ValueError("beyond_specdec_smollm2 times SmolLM2 on the CPU; use --device cpu");
    }
    const auto prompts = chat_prompts(passages, open);
    [[maybe_unused]] const g2c::specdec::PromptLookupDrafter checked(ngram, min_ngram);
    if (prompts.empty()) {
      throw g2c::ValueError("no prompts: give --passages or --open a count above 0");
    }
    nlohmann::json per_weights = nlohmann::json::array();
    nlohmann::json samples = nlohmann::json::array();
    nlohmann::json vocabulary_check;
    bool all_identical = true;
    for (const auto& format : weights) {
      auto smol = g2c::pretrained::load_pretrained_model(
          model_name, g2c::pretrained::LoadOptions().packed(format == "packed"));
      smol.model->eval();
      std::vector<Way> ways;
      for (const auto& name : drafter_names) {
        for (auto& way : parse_drafter(name, smol.model->options.num_layers(), ks, exit_k)) {
          ways.push_back(std::move(way));
        }
      }
      g2c::pretrained::LlamaScoringModel target(*smol.model);
      const auto eos = smol.tokenizer.eos_id();

      if (vocabulary_check.is_null()) {
        // The course's ladder models read bytes (V 264): their ids mean other tokens.
        torch::manual_seed(options.seed);
        g2c::transformer::TransformerLM byte_model(264, 64, 2, 4, 128);
        g2c::sampling::TransformerLogitsModel byte_drafter(*byte_model);
        try {
          g2c::specdec::speculative_generate_cached(target, byte_drafter,
                                                    torch::tensor({1, 2, 3}, torch::kLong), 4, 2);
          vocabulary_check = {{"refused", false}};
        } catch (const g2c::ValueError& error) {
          vocabulary_check = {{"refused", true}, {"message", error.what()}};
        }
        fmt::print("a byte-level course model drafting for {}: {}\n", model_name,
                   vocabulary_check["refused"].get<bool>()
                       ? vocabulary_check["message"].get<std::string>()
                       : std::string("NOT refused"));
      }

      // What a pass costs: (k + 1) positions against one, and an early exit's step, after a
      // 160-id context (a prompt's length here), in plain cached steps.
      const std::int64_t context = 160;
      const double step_ms = pass_ms(target, context, 1, 9);
      nlohmann::json costs = {{"plain_step_ms", step_ms}};
      for (const auto& way : ways) {
        const auto k = std::to_string(way.k);
        if (!costs["verify_pass"].contains(k)) {
          costs["verify_pass"][k] = pass_ms(target, context, way.k + 1, 9) / step_ms;
        }
        if (way.exit_blocks > 0 && !costs["drafter_step"].contains(way.drafter)) {
          g2c::pretrained::LlamaEarlyExitModel early(*smol.model, way.exit_blocks);
          costs["drafter_step"][way.drafter] = pass_ms(early, context, 1, 9) / step_ms;
        }
      }

      // Every prompt decoded plainly, then by each drafter at each k, in turn.
      std::map<std::string, double> plain_seconds;                  // by kind
      std::map<std::string, std::int64_t> generated;                // by kind
      std::map<std::string, std::map<std::string, Tally>> tallies;  // way -> kind -> tally
      std::map<std::string, std::map<std::string, Tally>> by_task;  // way -> task -> tally
      g2c::Progress progress(format, static_cast<std::int64_t>(prompts.size()), !options.quiet);
      for (std::size_t p = 0; p < prompts.size(); ++p) {
        const auto& prompt = prompts[p];
        const auto prompt_ids = torch::tensor(
            smol.tokenizer.encode(smol.tokenizer.format_chat({{"user", prompt.text}}, true)),
            torch::kLong);
        torch::Tensor plain;
        std::vector<double> plain_times;
        for (std::int64_t r = 0; r < repeats; ++r) {
          plain_times.push_back(g2c::exercises::seconds_of([&] {
            plain = g2c::specdec::greedy_generate_cached(target, prompt_ids, new_tokens, eos);
          }));
        }
        const auto plain_ids = g2c::exercises::id_vector(plain);
        plain_seconds[prompt.kind] += g2c::exercises::median(plain_times);
        generated[prompt.kind] += plain.numel() - prompt_ids.numel();
        if (format == weights.front()) {
          samples.push_back({{"kind", prompt.kind},
                             {"task", prompt.task},
                             {"prompt", prompt.text},
                             {"reply", smol.tokenizer.decode(std::vector<std::int64_t>(
                                           plain_ids.begin() + prompt_ids.numel(),
                                           plain_ids.end() - (plain_ids.back() == eos ? 1 : 0)))},
                             {"prompt_tokens", prompt_ids.numel()},
                             {"ids", plain_ids}});
        }
        for (const auto& way : ways) {
          g2c::specdec::SpeculativeResult result;
          std::vector<double> times;
          for (std::int64_t r = 0; r < repeats; ++r) {
            times.push_back(g2c::exercises::seconds_of([&] {
              if (way.exit_blocks == 0) {
                g2c::specdec::PromptLookupDrafter lookup(ngram, min_ngram);
                result = g2c::specdec::speculative_generate_cached(target, lookup, prompt_ids,
                                                                   new_tokens, way.k, eos);
              } else {
                g2c::pretrained::LlamaEarlyExitModel early(*smol.model, way.exit_blocks);
                result = g2c::specdec::speculative_generate_cached(target, early, prompt_ids,
                                                                   new_tokens, way.k, eos);
              }
            }));
          }
          const bool same = g2c::exercises::id_vector(result.ids) == plain_ids;
          all_identical = all_identical && same;
          for (auto* tally :
               {&tallies[way.name()][prompt.kind], &by_task[way.name()][prompt.task]}) {
            tally->identical += same ? 1 : 0;
            tally->prompts += 1;
            tally->stats += result.stats;
            tally->seconds += g2c::exercises::median(times);
          }
        }
        progress.update(static_cast<std::int64_t>(p) + 1);
      }
      progress.finish();

      // The account, by kind of prompt.
      nlohmann::json kinds = nlohmann::json::object();
      for (const auto& [kind, seconds] : plain_seconds) {
        const auto tokens = static_cast<double>(generated[kind]);
        nlohmann::json rows = nlohmann::json::array();
        fmt::print("{} {}: plain cached decoding {:.1f} tokens/s ({} tokens)\n", format, kind,
                   tokens / seconds, generated[kind]);
        for (const auto& way : ways) {
          const auto way_name = way.name();
          const auto& tally = tallies[way_name][kind];
          const double speedup = seconds / tally.seconds;
          rows.push_back({{"way", way_name},
                          {"identical_prompts", tally.identical},
                          {"prompts", tally.prompts},
                          {"acceptance_rate", tally.stats.acceptance_rate()},
                          {"tokens_per_pass", tally.stats.tokens_per_pass()},
                          {"target_passes", tally.stats.target_passes},
                          {"drafted", tally.stats.drafted},
                          {"accepted", tally.stats.accepted},
                          {"tokens_per_second", tokens / tally.seconds},
                          {"speedup_over_plain_cached", speedup}});
          fmt::print(
              "  {:<12} identical {}/{}, acceptance {:.2f} ({} drafted), {:.2f} tokens/pass, "
              "{:.1f} tokens/s, {:.2f}x plain\n",
              way_name, tally.identical, tally.prompts, tally.stats.acceptance_rate(),
              tally.stats.drafted, tally.stats.tokens_per_pass(), tokens / tally.seconds, speedup);
        }
        kinds[kind] = {{"prompts", rows.front()["prompts"]},
                       {"generated_tokens", generated[kind]},
                       {"plain_cached_tokens_per_second", tokens / seconds},
                       {"ways", rows}};
      }
      fmt::print("{} costs: plain step {:.1f} ms; {}\n", format, step_ms, costs.dump());
      // Acceptance and tokens per pass by task: the same drafter on replies that copy more or less.
      nlohmann::json tasks = nlohmann::json::object();
      for (const auto& [way_name, per_task] : by_task) {
        for (const auto& [task, tally] : per_task) {
          tasks[task].push_back({{"way", way_name},
                                 {"prompts", tally.prompts},
                                 {"acceptance_rate", tally.stats.acceptance_rate()},
                                 {"tokens_per_pass", tally.stats.tokens_per_pass()}});
        }
      }
      per_weights.push_back({{"weights", format},
                             {"load_seconds", smol.report.seconds},
                             {"weight_bytes", smol.report.weight_bytes},
                             {"costs", costs},
                             {"kinds", kinds},
                             {"tasks", tasks}});
    }
    fmt::print("greedy output identical on every prompt, drafter and k: {}\n",
               all_identical ? "yes" : "NO");

    auto result = g2c::exercises::run_metadata("beyond_specdec_smollm2", options, device);
    result["config"] = {{"model", model_name},
                        {"weights", weights},
                        {"drafters", drafter_names},
                        {"ks", ks},
                        {"exit_k", exit_k},
                        {"passages", passages},
                        {"open", open},
                        {"new_tokens", new_tokens},
                        {"ngram", ngram},
                        {"min_ngram", min_ngram},
                        {"repeats", repeats}};
    result["runs"] = per_weights;
    result["all_identical"] = all_identical;
    result["vocabulary_check"] = vocabulary_check;
    result["samples"] = samples;
    // Figures: one bar per way, one group per weights and kind of prompt.
    nlohmann::json table = {{"way", nlohmann::json::array()}};
    std::vector<std::string> columns;
    for (const auto& run : per_weights) {
      for (const auto& [kind, entry] : run["kinds"].items()) {
        const auto column = fmt::format("{}_{}", run["weights"].get<std::string>(), kind);
        columns.push_back(column);
        for (const auto& row : entry["ways"]) {
          table["speedup"][column].push_back(row["speedup_over_plain_cached"]);
          table["tokens_per_pass"][column].push_back(row["tokens_per_pass"]);
        }
      }
    }
    for (const auto& row : per_weights.front()["kinds"].begin().value()["ways"]) {
      table["way"].push_back(row["way"]);
    }
    result["table"] = table;
    auto speed =
        Figure::bar("specdec_smollm2_speed.png",
                    fmt::format("{}: speculative against plain cached decoding", model_name),
                    "drafter", "speed-up (above 1: faster)");
    auto per_pass = Figure::bar("specdec_smollm2_tokens_per_pass.png",
                                "Tokens emitted per target pass (plain decoding: 1)", "drafter",
                                "tokens per target pass");
    for (const auto& column : columns) {
      auto label = column;
      std::replace(label.begin(), label.end(), '_', ' ');
      speed.add(Series(label, "/table/way", "/table/speedup/" + column));
      per_pass.add(Series(label, "/table/way", "/table/tokens_per_pass/" + column));
    }
    speed.hline(1.0, "plain cached decoding").rotate_labels(20);
    per_pass.hline(1.0, "plain decoding").rotate_labels(20);
    result["figures"] = g2c::exercises::figures({speed, per_pass});
    const auto path = g2c::exercises::save_result(options, "specdec_smollm2.json", result);
    g2c::exercises::plot_result(options, path);
    if (!all_identical) {
      throw g2c::RuntimeError(
          "speculative decoding changed the greedy output on some prompt: see the identical "
          "counts above");
    }
  });
}

}  // namespace exercise_beyond_specdec_smollm2
