// Beyond specdec — the course's scaling ladder drafting for its largest rung. ShakespeareLM-0.1M,
// -0.3M and -0.8M (module 12's artifacts, one byte-level tokenizer) each draft for ShakespeareLM-3M
// on prompts cut from TinyShakespeare's held-out text, well inside the 128-token window. For every
// drafter and draft length k: the ids of the fast path (speculative_generate_cached) against greedy
// decoding's, prompt by prompt (they must be identical), the acceptance rate and the tokens per
// target pass; then the clock: tokens per second of plain greedy decoding (module 11's generate and
// generate_cached, and greedy_generate_cached: the fast path's cache and kernels, one pass a
// token), of the lesson's uncached loop and of the cached fast path; and the cost of a
// drafter step and of a verification pass in units of one plain cached target step, which give the
// acceptance rate a drafter needs to pay for itself. Writes specdec_ladder.json and
// specdec_ladder_*.png.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "exercises/beyond-specdec/prompts.h"
#include "exercises/common/cli.h"
#include "exercises/common/data.h"
#include "exercises/common/figures.h"
#include "exercises/common/timing.h"
#include "g2c/core/errors.h"
#include "g2c/core/progress.h"
#include "g2c/pretraining/data.h"
#include "g2c/sampling/generate.h"
#include "g2c/sampling/logits_model.h"
#include "g2c/sampling/text_generation.h"
#include "g2c/specdec/cached.h"
#include "g2c/specdec/generate.h"
#include "g2c/transformer/transformer_lm.h"

namespace exercise_beyond_specdec_ladder {

namespace {

using g2c::exercises::Figure;
using g2c::exercises::Series;

/// The share of an id sequence's n-grams that occur once in it: 1 for text that never repeats
/// itself, near 0 for a loop ("the the the ...").
double distinct_ngram_share(const std::vector<std::int64_t>& ids, std::size_t n) {
  if (ids.size() < n) return 1.0;
  std::map<std::vector<std::int64_t>, int> counts;
  for (std::size_t i = 0; i + n <= ids.size(); ++i) {
    counts[std::vector<std::int64_t>(ids.begin() + static_cast<std::ptrdiff_t>(i),
                                     ids.begin() + static_cast<std::ptrdiff_t>(i + n))] += 1;
  }
  std::size_t once = 0;
  for (const auto& [gram, count] : counts) once += count == 1 ? 1 : 0;
  return static_cast<double>(once) / static_cast<double>(ids.size() + 1 - n);
}

/// Expected tokens per target pass when each draft token is accepted with probability alpha,
/// independently: 1 + α + … + α^k (the accepted prefix and the target's own token).
double expected_tokens_per_pass(double alpha, std::int64_t k) {
  double total = 0.0;
  for (std::int64_t i = 0; i <= k; ++i) total += std::pow(alpha, static_cast<double>(i));
  return total;
}

/// The acceptance rate at which k drafter steps of cost c and one verification pass of cost r
/// (both in plain cached target steps) cost as much as the tokens they emit: the smallest α with
/// expected_tokens_per_pass(α, k) >= k·c + r, by bisection; null when even α = 1 does not pay.
nlohmann::json break_even_acceptance(double c, double r, std::int64_t k) {
  const double cost = static_cast<double>(k) * c + r;
  if (expected_tokens_per_pass(1.0, k) < cost) return nullptr;
  if (expected_tokens_per_pass(0.0, k) >= cost) return 0.0;
  double low = 0.0, high = 1.0;
  for (int i = 0; i < 60; ++i) {
    const double mid = 0.5 * (low + high);
    (expected_tokens_per_pass(mid, k) >= cost ? high : low) = mid;
  }
  return high;
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Beyond specdec: the ShakespeareLM ladder drafting for its largest rung. Identity with\n"
      "greedy decoding, acceptance and tokens per target pass for each drafter and k, tokens\n"
      "per second of plain, lesson and cached speculative decoding, the drafter's cost ratio.\n"
      "Writes specdec_ladder.json and specdec_ladder_*.png (run 12_scaling first)."};
  g2c::exercises::CommonOptions options;
  options.out = "results/beyond-specdec";
  g2c::exercises::add_common_options(app, options);
  std::string target_name = "ShakespeareLM-3M";
  std::vector<std::string> drafter_names = {"ShakespeareLM-0.1M", "ShakespeareLM-0.3M",
                                            "ShakespeareLM-0.8M"};
  std::vector<std::int64_t> ks = {1, 2, 4, 8};
  std::int64_t prompts = 20, prompt_tokens = 32, new_tokens = 80, repeats = 3, lesson_k = 4;
  app.add_option("--target", target_name, "The model that verifies (name, alias or folder)");
  app.add_option("--drafters", drafter_names, "The drafters (names, aliases or folders)");
  app.add_option("--ks", ks, "The draft lengths k").positive();
  app.add_option("--prompts", prompts, "Prompts cut from the held-out text").range(1, 1000);
  app.add_option("--prompt-tokens", prompt_tokens, "Tokens per prompt").range(1, 4096);
  app.add_option("--new-tokens", new_tokens, "Tokens generated per prompt").range(1, 4096);
  app.add_option("--repeats", repeats, "Timed runs per measurement (the median is kept)")
      .range(1, 100);
  app.add_option("--lesson-k", lesson_k, "k of the timed lesson loop").range(1, 64);
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    auto target = g2c::sampling::load_text_model(target_name, device);
    target.artifact.model->eval();
    const std::int64_t window = target.artifact.model->max_seq_len;
    if (prompt_tokens + new_tokens > window) {
      throw g2c::ValueError(fmt::format(
          "--prompt-tokens {} + --new-tokens {} pass the target's window of {}: greedy decoding "
          "would crop and the cached fast path cannot; keep their sum <= {}",
          prompt_tokens, new_tokens, window, window));
    }

    // Prompts: windows of the held-out tenth of module 10's text, at seeded positions.
    const auto prompt_ids =
        g2c::exercises::held_out_prompts(target, prompts, prompt_tokens, options.seed);
    const double total_tokens = static_cast<double>(prompts * new_tokens);
    const auto greedy = g2c::sampling::GenerateOptions().temperature(0.0);

    // The reference: module 11's greedy decoding, timed with and without its cache.
    std::vector<std::vector<std::int64_t>> reference;
    for (const auto& prompt : prompt_ids) {
      reference.push_back(g2c::exercises::id_vector(
          g2c::sampling::generate(target.artifact.model, prompt, new_tokens, greedy)));
    }
    const auto time_all = [&](auto&& run_one) {
      return g2c::exercises::median_ms(
                 [&] {
                   for (const auto& prompt : prompt_ids) run_one(prompt);
                 },
                 static_cast<int>(repeats), device) /
             1000.0;
    };
    const double plain_seconds = time_all([&](const torch::Tensor& prompt) {
      g2c::sampling::generate(target.artifact.model, prompt, new_tokens, greedy);
    });
    const double lesson_cached_seconds = time_all([&](const torch::Tensor& prompt) {
      g2c::sampling::generate_cached(target.artifact.model, prompt, new_tokens, greedy);
    });
    // The fast path's own baseline: greedy, one pass a token, through the same cache and kernels.
    g2c::sampling::TransformerLogitsModel target_scorer(*target.artifact.model);
    std::int64_t baseline_identical = 0;
    for (std::size_t p = 0; p < prompt_ids.size(); ++p) {
      baseline_identical += g2c::exercises::id_vector(g2c::specdec::greedy_generate_cached(
                                target_scorer, prompt_ids[p], new_tokens)) == reference[p];
    }
    const double plain_cached_seconds = time_all([&](const torch::Tensor& prompt) {
      g2c::specdec::greedy_generate_cached(target_scorer, prompt, new_tokens);
    });
    fmt::print(
        "target {} ({} parameters), greedy: module 11's generate {:.0f} tokens/s, its "
        "generate_cached {:.0f} tokens/s; through the fast path's cache and kernels {:.0f} "
        "tokens/s (identical {}/{})\n",
        target.artifact.summary.name,
        g2c::transformer::parameter_count(target.artifact.model->options),
        total_tokens / plain_seconds, total_tokens / lesson_cached_seconds,
        total_tokens / plain_cached_seconds, baseline_identical, prompts);

    // Greedy decoding loops into repetition ("the the the"), where every drafter agrees: how much
    // of each continuation is a loop.
    double distinct = 0.0;
    for (const auto& ids : reference) {
      distinct += distinct_ngram_share(
          std::vector<std::int64_t>(ids.begin() + prompt_tokens, ids.end()), 4);
    }
    distinct /= static_cast<double>(prompts);
    fmt::print("greedy continuations: {:.2f} of their 4-grams occur once (1: no repetition)\n",
               distinct);

    // The step costs, in plain cached target steps: a cache holding a prompt's positions, a block
    // of `tokens` in, rolled back after each call; the target's one-token step timed in the same
    // rounds as the step it is the unit of.
    const auto step_cost = [&](g2c::sampling::CachedScoringModel& model, std::int64_t tokens) {
      auto model_cache = model.empty_cache(), target_cache = target_scorer.empty_cache();
      torch::NoGradGuard no_grad;
      const auto prompt = prompt_ids.front().unsqueeze(0);
      model.forward(prompt.to(model.device()), model_cache);
      target_scorer.forward(prompt.to(device), target_cache);
      const auto block = prompt_ids.front().narrow(0, 0, tokens).unsqueeze(0).to(model.device());
      const auto one = prompt_ids.front().narrow(0, 0, 1).unsqueeze(0).to(device);
      return g2c::exercises::paired_seconds(
          [&] {
            for (int i = 0; i < 20; ++i) {
              model.forward(block, model_cache);
              model_cache.truncate(prompt_tokens);
            }
          },
          [&] {
            for (int i = 0; i < 20; ++i) {
              target_scorer.forward(one, target_cache);
              target_cache.truncate(prompt_tokens);
            }
          },
          9)[2];
    };

    nlohmann::json drafters_json = nlohmann::json::array();
    bool all_identical = baseline_identical == prompts;
    for (const auto& drafter_name : drafter_names) {
      auto drafter = g2c::sampling::load_text_model(drafter_name, device);
      drafter.artifact.model->eval();
      g2c::sampling::TransformerLogitsModel drafter_scorer(*drafter.artifact.model);
      nlohmann::json per_k = nlohmann::json::array();
      g2c::Progress progress(fmt::format("{} drafting", drafter.artifact.summary.name),
                             static_cast<std::int64_t>(ks.size()), !options.quiet);
      for (const auto k : ks) {
        g2c::specdec::SpecStats total;
        std::int64_t identical = 0;
        for (std::size_t p = 0; p < prompt_ids.size(); ++p) {
          const auto run = g2c::specdec::speculative_generate_cached(target_scorer, drafter_scorer,
                                                                     prompt_ids[p], new_tokens, k);
          identical += g2c::exercises::id_vector(run.ids) == reference[p] ? 1 : 0;
          total += run.stats;
        }
        all_identical = all_identical && identical == prompts;
        // Acceptance on the first 16 new tokens alone, before most continuations loop.
        g2c::specdec::SpecStats early;
        for (const auto& prompt : prompt_ids) {
          const auto run = g2c::specdec::speculative_generate_cached(
              target_scorer, drafter_scorer, prompt, std::min<std::int64_t>(16, new_tokens), k);
          early += run.stats;
        }
        // The fast path and its baseline timed in alternation.
        const auto [spec_seconds, greedy_seconds, ratio] = g2c::exercises::paired_seconds(
            [&] {
              for (const auto& prompt : prompt_ids) {
                g2c::specdec::speculative_generate_cached(target_scorer, drafter_scorer, prompt,
                                                          new_tokens, k);
              }
            },
            [&] {
              for (const auto& prompt : prompt_ids) {
                g2c::specdec::greedy_generate_cached(target_scorer, prompt, new_tokens);
              }
            },
            repeats);
        const double seconds = spec_seconds;
        const double drafter_c = step_cost(drafter_scorer, 1);
        const double verify_r = step_cost(target_scorer, k + 1);
        per_k.push_back(
            {{"k", k},
             {"identical_prompts", identical},
             {"acceptance_rate", total.acceptance_rate()},
             {"acceptance_rate_first_16", early.acceptance_rate()},
             {"tokens_per_pass", total.tokens_per_pass()},
             {"target_passes", total.target_passes},
             {"tokens_per_second", total_tokens / seconds},
             {"greedy_cached_tokens_per_second", total_tokens / greedy_seconds},
             {"speedup_over_greedy_cached", 1.0 / ratio},
             {"drafter_step_cost", drafter_c},
             {"verify_pass_cost", verify_r},
             {"break_even_acceptance", break_even_acceptance(drafter_c, verify_r, k)},
             {"predicted_speedup",
              total.tokens_per_pass() / (static_cast<double>(k) * drafter_c + verify_r)}});
        progress.update(static_cast<std::int64_t>(per_k.size()),
                        fmt::format("k {}: acceptance {:.2f}, {:.2f} tokens/pass", k,
                                    total.acceptance_rate(), total.tokens_per_pass()));
      }
      progress.finish("");
      // The lesson's loop: no caches, every pass recomputes the context.
      std::int64_t lesson_identical = 0;
      for (std::size_t p = 0; p < prompt_ids.size(); ++p) {
        const auto run = g2c::specdec::speculative_generate(target_scorer, drafter_scorer,
                                                            prompt_ids[p], new_tokens, lesson_k);
        lesson_identical += g2c::exercises::id_vector(run.ids) == reference[p] ? 1 : 0;
      }
      all_identical = all_identical && lesson_identical == prompts;
      const auto [lesson_seconds, generate_seconds, lesson_ratio] = g2c::exercises::paired_seconds(
          [&] {
            for (const auto& prompt : prompt_ids) {
              g2c::specdec::speculative_generate(target_scorer, drafter_scorer, prompt, new_tokens,
                                                 lesson_k);
            }
          },
          [&] {
            for (const auto& prompt : prompt_ids) {
              g2c::sampling::generate(target.artifact.model, prompt, new_tokens, greedy);
            }
          },
          repeats);
      const auto parameters = g2c::transformer::parameter_count(drafter.artifact.model->options);
      fmt::print("{} ({} parameters):\n", drafter.artifact.summary.name, parameters);
      for (const auto& row : per_k) {
        fmt::print(
            "  k {}: identical {}/{}, acceptance {:.2f} (first 16 tokens {:.2f}), {:.2f} "
            "tokens/pass, {:.0f} tokens/s "
            "({:.2f}x greedy, cached; the step costs predict {:.2f}x); drafter step {:.2f}, "
            "verify pass {:.2f} target steps: break-even acceptance {}\n",
            row["k"].get<std::int64_t>(), row["identical_prompts"].get<std::int64_t>(), prompts,
            row["acceptance_rate"].get<double>(), row["acceptance_rate_first_16"].get<double>(),
            row["tokens_per_pass"].get<double>(), row["tokens_per_second"].get<double>(),
            row["speedup_over_greedy_cached"].get<double>(), row["predicted_speedup"].get<double>(),
            row["drafter_step_cost"].get<double>(), row["verify_pass_cost"].get<double>(),
            row["break_even_acceptance"].is_null()
                ? std::string("none (never pays)")
                : fmt::format("{:.2f}", row["break_even_acceptance"].get<double>()));
      }
      fmt::print(
          "  lesson loop (no cache), k {}: identical {}/{}, {:.0f} tokens/s ({:.2f}x module 11's "
          "uncached generate)\n",
          lesson_k, lesson_identical, prompts, total_tokens / lesson_seconds, 1.0 / lesson_ratio);
      drafters_json.push_back({{"name", drafter.artifact.summary.name},
                               {"parameters", parameters},
                               {"per_k", per_k},
                               {"lesson",
                                {{"k", lesson_k},
                                 {"identical_prompts", lesson_identical},
                                 {"tokens_per_second", total_tokens / lesson_seconds},
                                 {"greedy_tokens_per_second", total_tokens / generate_seconds},
                                 {"speedup_over_greedy", 1.0 / lesson_ratio}}}});
    }
    fmt::print("greedy output identical on every prompt, every drafter and k: {}\n",
               all_identical ? "yes" : "NO");

    auto result = g2c::exercises::run_metadata("beyond_specdec_ladder", options, device);
    result["config"] = {{"target", target.artifact.summary.name},
                        {"prompts", prompts},
                        {"prompt_tokens", prompt_tokens},
                        {"new_tokens", new_tokens},
                        {"ks", ks},
                        {"repeats", repeats},
                        {"lesson_k", lesson_k}};
    result["target"] = {
        {"name", target.artifact.summary.name},
        {"parameters", g2c::transformer::parameter_count(target.artifact.model->options)},
        {"greedy_tokens_per_second", total_tokens / plain_seconds},
        {"greedy_lesson_cached_tokens_per_second", total_tokens / lesson_cached_seconds},
        {"greedy_cached_tokens_per_second", total_tokens / plain_cached_seconds},
        {"greedy_cached_identical_prompts", baseline_identical},
        {"greedy_distinct_4gram_share", distinct}};
    result["drafters"] = drafters_json;
    result["all_identical"] = all_identical;
    result["sample"] = {
        {"prompt", target.tokenizer.decode(g2c::exercises::id_vector(prompt_ids.front()))},
        {"continuation", target.tokenizer.decode(std::vector<std::int64_t>(
                             reference.front().begin() + prompt_tokens, reference.front().end()))}};
    result["ks"] = ks;
    auto acceptance =
        Figure::line("specdec_ladder_acceptance.png",
                     "How often the target agrees with each drafter", "k", "acceptance rate");
    auto per_pass = Figure::line("specdec_ladder_tokens_per_pass.png",
                                 "Tokens emitted per target pass (plain decoding: 1)", "k",
                                 "tokens per target pass");
    auto speed = Figure::line("specdec_ladder_speed.png",
                              "The clock: speculative against greedy, same cache and kernels", "k",
                              "speed-up (above 1: faster)");
    for (std::size_t d = 0; d < drafters_json.size(); ++d) {
      const auto name = drafters_json[d]["name"].get<std::string>();
      nlohmann::json acc = nlohmann::json::array(), tpp = nlohmann::json::array(),
                     speedups = nlohmann::json::array();
      for (const auto& row : drafters_json[d]["per_k"]) {
        acc.push_back(row["acceptance_rate"]);
        tpp.push_back(row["tokens_per_pass"]);
        speedups.push_back(row["speedup_over_greedy_cached"]);
      }
      acceptance.add(Series(name, "/ks", acc).marker("o"));
      per_pass.add(Series(name, "/ks", tpp).marker("o"));
      speed.add(Series(name, "/ks", speedups).marker("o"));
    }
    per_pass.hline(1.0, "plain decoding");
    speed.hline(1.0, "greedy, one target pass a token");
    result["figures"] = g2c::exercises::figures({acceptance, per_pass, speed});
    const auto path = g2c::exercises::save_result(options, "specdec_ladder.json", result);
    g2c::exercises::plot_result(options, path);
    if (!all_identical) {
      throw g2c::RuntimeError(
          "speculative decoding changed the greedy output on some prompt: see the identical "
          "counts above");
    }
  });
}

}  // namespace exercise_beyond_specdec_ladder
