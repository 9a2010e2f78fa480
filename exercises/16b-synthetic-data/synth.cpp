// Exercise 16B — a real teacher writes training data. SmolLM2-135M-Instruct (in this process, or
// any server in Ollama's protocol with --url: g2c-serve, Ollama) grows a set of instruction pairs
// from twelve hand-written seeds about the natural world (data/seeds.json), through your
// dedupe_pairs and the shape gates. Reported honestly: the funnel (how many candidates each gate
// removed), and how close the accepted instructions come to twelve held-out pairs of the same
// kind that the teacher never saw (data/held_out.json) — a synthetic set that reproduces an
// evaluation set is contamination, not data. Writes synth.json (with the pairs) and two figures.
#include <algorithm>
#include <chrono>
#include <filesystem>

#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "g2c/core/atomic_file.h"
#include "g2c/core/errors.h"
#include "g2c/inference/ollama.h"
#include "g2c/inference/pretrained_backend.h"
#include "g2c/pretraining/build_info.h"
#include "g2c/synth/generate.h"

namespace exercise_16b_synth {

namespace {

namespace fs = std::filesystem;
using g2c::synth::InstructionPair;

std::vector<InstructionPair> read_pairs(const fs::path& path) {
  const auto json = nlohmann::json::parse(g2c::read_file(path));
  std::vector<InstructionPair> pairs;
  for (const auto& item : json) {
    if (!g2c::synth::validate_pair(item).empty()) {
      throw g2c::ValueError(fmt::format("{}: {} is not a clean pair", path.string(), item.dump()));
    }
    pairs.push_back(item.get<InstructionPair>());
  }
  return pairs;
}

/// For each instruction, its largest ngram_overlap with any of `others`.
std::vector<double> nearest_overlaps(const std::vector<InstructionPair>& pairs,
                                     const std::vector<InstructionPair>& others) {
  std::vector<double> nearest;
  for (const auto& pair : pairs) {
    double best = 0;
    for (const auto& other : others) {
      best = std::max(best, g2c::synth::ngram_overlap(pair.user, other.user));
    }
    nearest.push_back(best);
  }
  return nearest;
}

/// Counts of `values` in ten bins of width 0.1 over [0, 1] (1.0 in the last).
std::vector<int> histogram(const std::vector<double>& values) {
  std::vector<int> counts(10, 0);
  for (double v : values) ++counts[static_cast<std::size_t>(std::min(9.0, std::floor(v * 10)))];
  return counts;
}

double mean(const std::vector<double>& values) {
  double sum = 0;
  for (double v : values) sum += v;
  return values.empty() ? 0.0 : sum / static_cast<double>(values.size());
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Module 16B: SmolLM2-135M-Instruct writes instruction pairs from twelve seeds, through the\n"
      "shape gates and your dedupe_pairs; the funnel and the overlap with held-out pairs.\n"
      "Writes synth.json (with the pairs) and figures."};
  g2c::exercises::CommonOptions options;
  options.out = "results/16b-synthetic-data";
  std::string model_name = "SmolLM2-135M-Instruct";
  std::string url;
  std::int64_t target = 30;
  int batch = 8, k = 4;
  double threshold = 0.7;
  std::int64_t max_rounds = 0;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--model", model_name, "The teacher (SmolLM2-135M-Instruct, or a model at --url)");
  app.add_option("--url", url,
                 "A server in Ollama's protocol to ask instead of this process (g2c-serve: "
                 "http://127.0.0.1:11434)")
      .no_default();
  app.add_option("--target", target, "Accepted pairs wanted").positive();
  app.add_option("--batch", batch, "Instructions asked for per round").positive();
  app.add_option("--k", k, "Examples shown per round").positive();
  app.add_option("--threshold", threshold, "dedupe_pairs' threshold").range(0.0, 1.0);
  app.add_option("--max-rounds", max_rounds, "Round budget (0: 4·target / batch, at least 8)")
      .non_negative();
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    const auto data =
        fs::path(g2c::pretraining::source_dir()) / "exercises" / "16b-synthetic-data" / "data";
    const auto seeds = read_pairs(data / "seeds.json");
    const auto held_out = read_pairs(data / "held_out.json");

    std::unique_ptr<g2c::inference::Backend> teacher;
    if (url.empty()) {
      if (!device.is_cpu()) throw g2c::ValueError("the in-process teacher runs on the CPU");
      teacher = std::make_unique<g2c::inference::PretrainedBackend>(
          g2c::inference::PretrainedBackend::load(model_name));
    } else {
      teacher = std::make_unique<g2c::inference::OllamaBackend>(
          model_name, g2c::inference::OllamaOptions().with_base_url(url));
    }
    fmt::print("teacher: {} ({}); {} seeds, {} held-out pairs\n", teacher->info().model_id(),
               teacher->info().name(), seeds.size(), held_out.size());

    const auto start = std::chrono::steady_clock::now();
    auto synthesis = g2c::synth::SynthesisOptions()
                         .with_target(target)
                         .with_batch_count(batch)
                         .with_k(k)
                         .with_threshold(threshold)
                         .with_seed(options.seed)
                         .with_progress([&](const std::string& line) {
                           if (!options.quiet) fmt::print("{}\n", line);
                         });
    if (max_rounds > 0) synthesis.with_max_rounds(max_rounds);
    const auto result = g2c::synth::synthesize_dataset(*teacher, seeds, synthesis);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const auto& funnel = result.funnel;
    fmt::print(
        "funnel: {} proposed, {} bad instructions, {} duplicates, {} bad pairs, {} "
        "accepted in {} rounds ({:.0f} s)\n",
        funnel.proposed, funnel.bad_instruction, funnel.duplicate, funnel.bad_pair, funnel.accepted,
        funnel.rounds, seconds);

    const auto to_held_out = nearest_overlaps(result.pairs, held_out);
    const auto to_seeds = nearest_overlaps(result.pairs, seeds);
    // The held-out pairs against the seeds: how alike two hand-written sets of this kind are.
    const auto held_out_to_seeds = nearest_overlaps(held_out, seeds);
    const auto contaminated = std::count_if(to_held_out.begin(), to_held_out.end(),
                                            [&](double v) { return v >= threshold; });
    fmt::print(
        "overlap of the accepted instructions: with the nearest held-out one {:.3f} on "
        "average, {} of {} at or above {}; with the nearest seed {:.3f} (held-out against "
        "seeds: {:.3f})\n",
        mean(to_held_out), contaminated, result.pairs.size(), threshold, mean(to_seeds),
        mean(held_out_to_seeds));
    for (std::size_t i = 0; i < std::min<std::size_t>(5, result.pairs.size()); ++i) {
      fmt::print("  {} -> {}\n", result.pairs[i].user, result.pairs[i].assistant);
    }

    auto out = g2c::exercises::run_metadata("16b_synth", options, device);
    out["config"] = {{"teacher", teacher->info().model_id()},
                     {"backend", teacher->info().name()},
                     {"target", target},
                     {"batch", batch},
                     {"k", k},
                     {"threshold", threshold},
                     {"seeds", seeds.size()},
                     {"held_out", held_out.size()}};
    out["funnel"] = funnel.to_json();
    out["seconds"] = seconds;
    out["pairs"] = result.pairs;
    out["overlap"] = {{"with_held_out_mean", mean(to_held_out)},
                      {"with_seeds_mean", mean(to_seeds)},
                      {"held_out_with_seeds_mean", mean(held_out_to_seeds)},
                      {"at_or_above_threshold_with_held_out", contaminated},
                      {"with_held_out", to_held_out},
                      {"with_seeds", to_seeds}};
    out["stages"] = {{"name", {"proposed", "bad instruction", "duplicate", "bad pair", "accepted"}},
                     {"count",
                      {funnel.proposed, funnel.bad_instruction, funnel.duplicate, funnel.bad_pair,
                       funnel.accepted}}};
    out["histogram"] = {
        {"bin", {"0.0", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9"}},
        {"with_held_out", histogram(to_held_out)},
        {"with_seeds", histogram(to_seeds)}};
    using g2c::exercises::Figure;
    using g2c::exercises::Series;
    out["figures"] = g2c::exercises::figures(
        {Figure::bar(
             "synth_funnel.png",
             fmt::format("{} as the teacher: what each gate removed", teacher->info().model_id()),
             "", "instructions")
             .add(Series("", "/stages/name", "/stages/count")),
         Figure::bar(
             "synth_overlap.png",
             "Accepted instructions: trigram overlap with the nearest seed and held-out one",
             "overlap (bin start)", "instructions")
             .add(Series("nearest seed", "/histogram/bin", "/histogram/with_seeds"))
             .add(Series("nearest held-out", "/histogram/bin", "/histogram/with_held_out"))});
    const auto path = g2c::exercises::save_result(options, "synth.json", out);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_16b_synth
