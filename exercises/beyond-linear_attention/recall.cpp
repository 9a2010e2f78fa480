// Beyond linear_attention, exercise 3 — what a fixed-size state costs in exact recall. A generated
// key–value probe: twelve `letter=digit` pairs with distinct letters, joined by `;`, then `?` and
// one of the twelve letters; the model must answer that letter's digit ("b=4;q=0;…;m=7?q" -> 0).
// Three 4-layer models (D 64, H 4) — all full attention, all linear, and [L, L, L, F] — learn it
// from the same generated batches (600 steps of 64, AdamW at 3e-3, the loss on the answer only),
// then answer 4,800 fresh probes: accuracy by how far back the queried pair sits (1 = the last
// pair, 12 = the first), with 95 % Wilson intervals. Chance is one in ten; answering the digit the
// prompt holds most often, with no recall at all, does better, and is drawn as the baseline.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "exercises/common/proportion.h"
#include "g2c/core/progress.h"
#include "g2c/linear_attention/hybrid.h"
#include "g2c/nn/optim.h"
#include "g2c/pretraining/loss.h"
#include "g2c/training/clip.h"

namespace exercise_beyond_la_recall {

namespace {

using g2c::exercises::Figure;
using g2c::exercises::Proportion;
using g2c::exercises::Series;
using g2c::linear_attention::HybridTransformerLM;

constexpr std::int64_t kVocab = 128;  // ASCII bytes
constexpr std::int64_t kPairs = 12;

/// A batch of probes: the prompt's ids (B, P) (bytes), the answer digit's id (B) and how many pairs
/// back the queried one sits (B), 1 … 12.
struct Probes {
  torch::Tensor prompt, answer, distance;
};

Probes make_probes(std::int64_t count, at::Generator& generator) {
  std::vector<std::int64_t> ids, answers, distances;
  const auto letters_order = [&] {
    return torch::randperm(26, generator, torch::kLong).slice(0, 0, kPairs);
  };
  for (std::int64_t n = 0; n < count; ++n) {
    const auto letters = letters_order();
    const auto digits = torch::randint(0, 10, {kPairs}, generator, torch::kLong);
    const std::int64_t queried = torch::randint(0, kPairs, {1}, generator).item<std::int64_t>();
    for (std::int64_t p = 0; p < kPairs; ++p) {
      if (p > 0) ids.push_back(';');
      ids.push_back('a' + letters[p].item<std::int64_t>());
      ids.push_back('=');
      ids.push_back('0' + digits[p].item<std::int64_t>());
    }
    ids.push_back('?');
    ids.push_back('a' + letters[queried].item<std::int64_t>());
    answers.push_back('0' + digits[queried].item<std::int64_t>());
    distances.push_back(kPairs - queried);
  }
  const std::int64_t length = static_cast<std::int64_t>(ids.size()) / count;
  return {torch::tensor(ids, torch::kLong).view({count, length}), torch::tensor(answers),
          torch::tensor(distances)};
}

/// The answer's loss: the model's prediction after the last prompt token against the digit.
torch::Tensor answer_loss(HybridTransformerLM& model, const Probes& probes,
                          const torch::Device& device) {
  const auto logits = model(probes.prompt.to(device)).slice(1, -1);  // (B, 1, V)
  return g2c::pretraining::lm_cross_entropy(logits, probes.answer.unsqueeze(1).to(device));
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Beyond linear_attention, exercise 3: the key-value recall probe for full, linear and\n"
      "[L, L, L, F] models; accuracy by distance with intervals. Writes recall.json and\n"
      "recall.png."};
  g2c::exercises::CommonOptions options;
  options.out = "results/beyond-linear_attention";
  options.steps = 600;
  g2c::exercises::add_common_options(app, options);
  std::int64_t dim = 64, layers = 4, heads = 4, batch = 64, probes_count = 4800;
  double lr = 3e-3;
  app.add_option("--embedding-dim", dim, "D of the three models").range(4, 4096);
  app.add_option("--layers", layers, "Layers (the hybrid's last one is full)").range(1, 64);
  app.add_option("--heads", heads, "Heads (must divide D)").range(1, 64);
  app.add_option("--batch", batch, "Probes per training step").range(1, 4096);
  app.add_option("--lr", lr, "AdamW's learning rate").range(1e-6, 1.0);
  app.add_option("--probes", probes_count, "Fresh probes answered at the end").range(12, 1000000);
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    const std::int64_t steps = options.steps;
    auto test_generator = at::make_generator<at::CPUGeneratorImpl>(options.seed + 1'000'003);
    const auto test = make_probes(probes_count, test_generator);
    const std::int64_t prompt_length = test.prompt.size(1);

    // A baseline with no recall at all: answer the digit the prompt holds most often (the first
    // such digit on a tie). The answer is one of the prompt's twelve digits, so this beats chance.
    std::vector<Proportion> mode_by_distance(kPairs);
    Proportion mode_overall;
    {
      const auto prompts = test.prompt.contiguous();
      for (std::int64_t n = 0; n < probes_count; ++n) {
        std::vector<int> counts(10, 0);
        for (std::int64_t p = 0; p < kPairs; ++p)
          counts[prompts[n][4 * p + 2].item<std::int64_t>() - '0'] += 1;
        const auto guess = std::max_element(counts.begin(), counts.end()) - counts.begin();
        const bool hit = '0' + guess == test.answer[n].item<std::int64_t>();
        auto& cell = mode_by_distance[test.distance[n].item<std::int64_t>() - 1];
        cell.total += 1, cell.hits += hit;
        mode_overall.total += 1, mode_overall.hits += hit;
      }
    }
    fmt::print("no recall, the prompt's most frequent digit: {}\n", mode_overall.to_string());

    std::vector<std::string> hybrid(layers, "linear");
    hybrid.back() = "full";
    const std::vector<std::pair<std::string, std::vector<std::string>>> patterns = {
        {"full", std::vector<std::string>(layers, "full")},
        {"linear", std::vector<std::string>(layers, "linear")},
        {"hybrid", hybrid}};

    auto runs = nlohmann::json::array();
    for (const auto& [name, pattern] : patterns) {
      torch::manual_seed(options.seed);
      HybridTransformerLM model(kVocab, dim, pattern, heads, prompt_length);
      model->to(device);
      g2c::nn::AdamW optimizer(model->parameters(), lr);
      auto generator = at::make_generator<at::CPUGeneratorImpl>(options.seed);  // the same batches
      std::vector<double> losses;
      g2c::Progress progress(name, steps, !options.quiet);
      for (std::int64_t step = 0; step < steps; ++step) {
        const auto probes = make_probes(batch, generator);
        optimizer.zero_grad();
        const auto loss = answer_loss(model, probes, device);
        loss.backward();
        g2c::training::clip_grad_norm_(model->parameters(), 1.0);
        optimizer.step();
        losses.push_back(loss.item<double>());
        if ((step + 1) % 50 == 0 || step + 1 == steps) {
          progress.update(step + 1, fmt::format("answer loss {:.3f}", losses.back()));
        }
      }

      // Accuracy by distance on the fresh probes.
      model->eval();
      std::vector<Proportion> by_distance(kPairs);
      Proportion overall;
      {
        torch::NoGradGuard no_grad;
        for (std::int64_t start = 0; start < probes_count; start += 512) {
          const std::int64_t end = std::min(probes_count, start + 512);
          const auto logits = model(test.prompt.slice(0, start, end).to(device)).select(1, -1);
          const auto right =
              (logits.argmax(-1).cpu() == test.answer.slice(0, start, end)).contiguous();
          const auto distance = test.distance.slice(0, start, end).contiguous();
          for (std::int64_t i = 0; i < end - start; ++i) {
            auto& cell = by_distance[distance[i].item<std::int64_t>() - 1];
            const bool hit = right[i].item<bool>();
            cell.total += 1, cell.hits += hit;
            overall.total += 1, overall.hits += hit;
          }
        }
      }
      progress.finish(fmt::format("accuracy {}", overall.to_string()));
      nlohmann::json accuracy = nlohmann::json::array(), low = nlohmann::json::array(),
                     high = nlohmann::json::array();
      for (const auto& cell : by_distance) {
        accuracy.push_back(cell.value());
        low.push_back(cell.low());
        high.push_back(cell.high());
      }
      runs.push_back({{"name", name},
                      {"pattern", pattern},
                      {"overall", overall.to_json()},
                      {"accuracy", accuracy},
                      {"ci_low", low},
                      {"ci_high", high},
                      {"by_distance",
                       [&] {
                         nlohmann::json cells = nlohmann::json::array();
                         for (const auto& cell : by_distance) cells.push_back(cell.to_json());
                         return cells;
                       }()},
                      {"train_loss", losses}});
    }

    fmt::print("accuracy by distance (pairs back; chance 10 %):\n{:>9}", "distance");
    for (const auto& run : runs) fmt::print(" {:>20}", run["name"].get<std::string>());
    fmt::print("\n");
    for (std::int64_t d = 0; d < kPairs; ++d) {
      fmt::print("{:>9}", d + 1);
      for (const auto& run : runs) {
        const auto& cell = run["by_distance"][d];
        Proportion p{cell["hits"].get<std::int64_t>(), cell["total"].get<std::int64_t>()};
        fmt::print(" {:>20}", p.to_string());
      }
      fmt::print("\n");
    }

    auto result = g2c::exercises::run_metadata("beyond_la_recall", options, device);
    std::vector<std::int64_t> distances(kPairs);
    std::iota(distances.begin(), distances.end(), 1);
    result["config"] = {{"steps", steps},        {"batch_size", batch},
                        {"embedding_dim", dim},  {"num_layers", layers},
                        {"num_heads", heads},    {"lr", lr},
                        {"pairs", kPairs},       {"prompt_length", prompt_length},
                        {"probes", probes_count}};
    result["distance"] = distances;
    result["runs"] = runs;
    nlohmann::json mode_accuracy = nlohmann::json::array(), mode_cells = nlohmann::json::array();
    for (const auto& cell : mode_by_distance) {
      mode_accuracy.push_back(cell.value());
      mode_cells.push_back(cell.to_json());
    }
    result["most_frequent_digit"] = {{"overall", mode_overall.to_json()},
                                     {"accuracy", mode_accuracy},
                                     {"by_distance", mode_cells}};
    auto figure = Figure::line("recall.png", "Recall of a key-value pair by how far back it is",
                               "pairs back (1 = the last)", "accuracy");
    for (std::size_t r = 0; r < runs.size(); ++r) {
      figure.add(Series(runs[r]["name"].get<std::string>(), "/distance",
                        fmt::format("/runs/{}/accuracy", r))
                     .marker("o"));
    }
    figure.add(Series("no recall: the prompt's most frequent digit", "/distance",
                      "/most_frequent_digit/accuracy")
                   .style("--"));
    figure.hline(0.1, "chance");
    result["figures"] = g2c::exercises::figures({figure});
    const auto path = g2c::exercises::save_result(options, "recall.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_beyond_la_recall
