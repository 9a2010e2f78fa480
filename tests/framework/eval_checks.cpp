// Module 15 framework tests: expected_calibration_error and reliability_curve against a direct
// computation with LibTorch on random data (bins by floor, sums by scatter_add, float64; the counts
// sum to N and ECE = Σ count/N · |acc − conf|, weighted by samples); continuation_logprob against a
// gather of log_softmax over the FULL sequence of a real small TransformerLM (the prompt's rows
// left out), with the course's BPE tokenizer too; score_multiple_choice's scores, choice and
// confidence (softmax of the scores) against continuation_logprob; the multiple-choice harness's
// aggregates and its handling of the model's mode; the generation harness; JSON and printing; bad
// input.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "g2c/core/errors.h"
#include "g2c/eval/eval.h"
#include "g2c/nn/module.h"
#include "g2c/sft/course_encoder.h"
#include "g2c/tokenizer/bpe.h"
#include "g2c/transformer/transformer_lm.h"
#include "one_thread.h"
#include "torch_test.h"

using Catch::Matchers::Contains;
using g2c::eval::calibration_bin;
using g2c::eval::continuation_logprob;
using g2c::eval::EvalReport;
using g2c::eval::EvalResult;
using g2c::eval::expected_calibration_error;
using g2c::eval::GenerationExample;
using g2c::eval::MultipleChoiceEvalOptions;
using g2c::eval::MultipleChoiceExample;
using g2c::eval::reliability_curve;
using g2c::eval::run_generation_eval;
using g2c::eval::run_multiple_choice_eval;
using g2c::eval::score_multiple_choice;
using g2c::transformer::TransformerLM;
using Ids = std::vector<std::int64_t>;

namespace {

[[maybe_unused]] const bool kOneThread = g2c::testing::use_one_intra_op_thread();

at::Generator seeded(std::uint64_t seed) {
  return at::make_generator<at::CPUGeneratorImpl>(seed);
}

/// One id per byte, capped at vocab_size - 1.
class CharTokenizer : public g2c::sft::TokenEncoder {
 public:
  explicit CharTokenizer(std::int64_t vocab_size) : vocab_size_(vocab_size) {}
  Ids encode(std::string_view text) const override {
    Ids ids;
    for (const unsigned char c : text) ids.push_back(std::min<std::int64_t>(c, vocab_size_ - 1));
    return ids;
  }

 private:
  std::int64_t vocab_size_;
};

/// Random logits that depend on the previous token (a bigram table), recording the modes it saw.
class TableModel : public g2c::nn::Module {
 public:
  TableModel(std::int64_t vocab_size, std::uint64_t seed) {
    auto gen = seeded(seed);
    table = register_parameter("table", torch::randn({vocab_size, vocab_size}, gen) * 2.0);
  }
  torch::Tensor forward(const torch::Tensor& x) override {
    saw_training = saw_training || is_training();
    saw_grad = saw_grad || torch::GradMode::is_enabled();
    return table.index({x});  // (B, T) -> (B, T, V)
  }
  torch::Tensor table;
  bool saw_training = false;
  bool saw_grad = false;
};

struct Calibration {
  std::vector<double> confidences;
  std::vector<bool> correct;
};

Calibration random_calibration(std::int64_t n, std::uint64_t seed) {
  auto gen = seeded(seed);
  // A skewed confidence distribution, so bins hold very different numbers of samples.
  const auto conf = torch::rand({n}, gen, torch::kFloat64).pow(0.3);
  const auto corr = torch::rand({n}, gen, torch::kFloat64) < conf * 0.8;
  Calibration data;
  for (std::int64_t i = 0; i < n; ++i) {
    data.confidences.push_back(conf[i].item<double>());
    data.correct.push_back(corr[i].item<bool>());
  }
  // The edges: exactly 0 and exactly 1 (the last bin).
  data.confidences[0] = 0.0;
  data.confidences[1] = 1.0;
  return data;
}

/// LibTorch's per-bin sums: (count, confidence sum, correct sum), each (n_bins,) float64.
std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> torch_bins(const Calibration& data,
                                                                   std::int64_t n_bins) {
  const auto conf = torch::tensor(data.confidences, torch::kFloat64);
  std::vector<double> corr_values(data.correct.begin(), data.correct.end());
  const auto corr = torch::tensor(corr_values, torch::kFloat64);
  const auto bins =
      (conf * static_cast<double>(n_bins)).floor().clamp(0, n_bins - 1).to(torch::kLong);
  const auto zeros = torch::zeros({n_bins}, torch::kFloat64);
  return {zeros.scatter_add(0, bins, torch::ones_like(conf)), zeros.scatter_add(0, bins, conf),
          zeros.scatter_add(0, bins, corr)};
}

}  // namespace

TEST_CASE("calibration_matches_a_libtorch_binning_on_random_data", "[eval]") {
  for (const std::int64_t n_bins : {1, 2, 7, 10, 15}) {
    for (const std::uint64_t seed : {1U, 2U, 3U}) {
      CAPTURE(n_bins, seed);
      const auto data = random_calibration(257, seed);
      const auto [count, conf_sum, corr_sum] = torch_bins(data, n_bins);
      const auto curve = reliability_curve(data.confidences, data.correct, n_bins);
      REQUIRE(curve.bin_count.size() == static_cast<std::size_t>(n_bins));
      REQUIRE(curve.bin_confidence.size() == static_cast<std::size_t>(n_bins));
      REQUIRE(curve.bin_accuracy.size() == static_cast<std::size_t>(n_bins));
      CHECK(std::accumulate(curve.bin_count.begin(), curve.bin_count.end(), std::int64_t{0}) ==
            257);
      double ece = 0.0;
      for (std::int64_t b = 0; b < n_bins; ++b) {
        const double c = count[b].item<double>();
        CHECK(curve.bin_count[b] == static_cast<std::int64_t>(c));
        if (c == 0) {
          CHECK(std::isnan(curve.bin_confidence[b]));
          CHECK(std::isnan(curve.bin_accuracy[b]));
          continue;
        }
        const double conf = conf_sum[b].item<double>() / c;
        const double acc = corr_sum[b].item<double>() / c;
        CHECK(curve.bin_confidence[b] == Approx(conf).margin(1e-12));
        CHECK(curve.bin_accuracy[b] == Approx(acc).margin(1e-12));
        ece += c / 257.0 * std::abs(acc - conf);  // weighted by samples
      }
      CHECK(expected_calibration_error(data.confidences, data.correct, n_bins) ==
            Approx(ece).margin(1e-12));
    }
  }
}

TEST_CASE("calibration_bins_and_special_values", "[eval]") {
  CHECK(calibration_bin(0.0, 10) == 0);
  CHECK(calibration_bin(0.0999, 10) == 0);
  CHECK(calibration_bin(0.1, 10) == 1);
  CHECK(calibration_bin(1.0, 10) == 9);  // 1.0 closes the last bin
  CHECK(calibration_bin(0.5, 1) == 0);
  // One example: |c - correct|.
  CHECK(expected_calibration_error({0.3}, {true}, 10) == Approx(0.7));
  CHECK(expected_calibration_error({0.3}, {false}, 10) == Approx(0.3));
  // One bin: |mean confidence - accuracy| over everything.
  CHECK(expected_calibration_error({0.2, 0.6, 1.0}, {true, false, false}, 1) ==
        Approx(std::abs(0.6 - 1.0 / 3.0)));
}

TEST_CASE("continuation_logprob_matches_log_softmax_over_the_full_sequence", "[eval]") {
  auto model = TransformerLM(/*vocab_size=*/128, /*embedding_dim=*/16, /*num_layers=*/2,
                             /*num_heads=*/2, /*max_seq_len=*/32);
  model->eval();
  const CharTokenizer tok(128);
  const std::vector<std::pair<std::string, std::string>> cases{
      {"a", "b"}, {"ab", "cde"}, {"To be, or not", " to be"}, {"x", "yyyyyyyyyyyy"}};
  for (const auto& [prompt, continuation] : cases) {
    CAPTURE(prompt, continuation);
    const auto prompt_ids = tok.encode(prompt);
    auto full_ids = prompt_ids;
    const auto cont_ids = tok.encode(continuation);
    full_ids.insert(full_ids.end(), cont_ids.begin(), cont_ids.end());
    const auto P = static_cast<std::int64_t>(prompt_ids.size());
    const auto T = static_cast<std::int64_t>(full_ids.size());
    double expected = 0.0;
    {
      torch::NoGradGuard no_grad;
      const auto full = torch::tensor(full_ids, torch::kLong).unsqueeze(0);
      // Every row of the full sequence, (T, V); row t predicts token t + 1.
      const auto log_probs = torch::log_softmax(model->forward(full)[0].to(torch::kFloat64), -1);
      for (std::int64_t t = P - 1; t <= T - 2; ++t) {
        expected += log_probs[t][full_ids[t + 1]].item<double>();
      }
    }
    const auto [logprob, n_tokens] = continuation_logprob(*model, tok, prompt, continuation);
    CHECK(n_tokens == static_cast<std::int64_t>(cont_ids.size()));
    CHECK(logprob == Approx(expected).margin(1e-4));
    CHECK(logprob <= 0.0);
  }
  for (const auto& p : model->parameters()) CHECK_FALSE(p.grad().defined());
}

TEST_CASE("continuation_logprob_with_the_course_bpe_tokenizer", "[eval]") {
  // Separate encodings: the prompt's ids, then the continuation's, even where BPE would merge
  // across the boundary when encoding the joined text.
  g2c::tokenizer::BPETokenizer bpe;
  bpe.train("the theme of the other thesis then these", 300);
  const g2c::sft::CourseEncoder tok(bpe);
  auto model = TableModel(static_cast<std::int64_t>(bpe.vocab_size()), 5);
  const std::string prompt = "the th";
  const std::string continuation = "eme";
  const auto p_ids = tok.encode(prompt);
  const auto c_ids = tok.encode(continuation);
  double expected = 0.0;
  std::int64_t previous = p_ids.back();
  {
    torch::NoGradGuard no_grad;
    const auto table = torch::log_softmax(model.table.to(torch::kFloat64), -1);
    for (const auto id : c_ids) {
      expected += table[previous][id].item<double>();
      previous = id;
    }
  }
  const auto [logprob, n_tokens] = continuation_logprob(model, tok, prompt, continuation);
  CHECK(n_tokens == static_cast<std::int64_t>(c_ids.size()));
  CHECK(logprob == Approx(expected).margin(1e-5));
  CHECK_FALSE(model.saw_grad);
}

TEST_CASE("score_multiple_choice_against_continuation_logprob", "[eval]") {
  auto model = TableModel(64, 7);
  const CharTokenizer tok(64);
  const MultipleChoiceExample ex("hello ", {"world", "wor", "wonderful day", "x"}, 2);
  for (const bool normalize : {false, true}) {
    CAPTURE(normalize);
    std::vector<double> scores;
    for (const auto& choice : ex.choices()) {
      const auto [lp, n] = continuation_logprob(model, tok, ex.prompt(), choice);
      scores.push_back(normalize ? lp / static_cast<double>(n) : lp);
    }
    const auto r = score_multiple_choice(model, tok, ex, normalize);
    const auto probs = torch::softmax(torch::tensor(scores, torch::kFloat64), 0);
    const auto best = probs.argmax().item<std::int64_t>();
    REQUIRE(r.choice_idx.has_value());
    CHECK(*r.choice_idx == best);
    CHECK(r.prediction == ex.choices()[best]);
    CHECK(r.correct == (best == 2));
    REQUIRE(r.confidence.has_value());
    CHECK(*r.confidence == Approx(probs[best].item<double>()).margin(1e-12));
    for (std::size_t i = 0; i < scores.size(); ++i) {
      CHECK(r.metadata["option_scores"][i].get<double>() == Approx(scores[i]).margin(1e-12));
    }
    CHECK(r.metadata["gold_idx"] == 2);
    CHECK(r.metadata["option_lengths"] == nlohmann::json({5, 3, 13, 1}));
  }
  // Two identical options: a tie goes to the first, at confidence 1/2.
  const auto tie = score_multiple_choice(model, tok, MultipleChoiceExample("q", {"zz", "zz"}, 1));
  CHECK(tie.choice_idx.value_or(-1) == 0);
  CHECK_FALSE(tie.correct);
  CHECK(*tie.confidence == Approx(0.5));
}

TEST_CASE("run_multiple_choice_eval_aggregates_and_restores_the_mode", "[eval]") {
  auto model = TableModel(64, 11);
  const CharTokenizer tok(64);
  std::vector<MultipleChoiceExample> examples;
  for (int i = 0; i < 12; ++i) {
    const std::string p(1, static_cast<char>('a' + i));
    examples.emplace_back(p, std::vector<std::string>{"b", "cd", "e"}, i % 3);
  }
  model.train();
  const auto rep = run_multiple_choice_eval(
      model, tok, examples, MultipleChoiceEvalOptions().ece_n_bins(4).task_name("mc"));
  CHECK(model.is_training());
  CHECK_FALSE(model.saw_training);
  REQUIRE(rep.results.size() == 12);
  CHECK(rep.n == 12);
  CHECK(rep.task_name == "mc");
  std::vector<double> confs;
  std::vector<bool> corr;
  double n_correct = 0.0;
  for (std::size_t i = 0; i < rep.results.size(); ++i) {
    const auto single = score_multiple_choice(model, tok, examples[i]);
    CHECK(rep.results[i].choice_idx == single.choice_idx);
    confs.push_back(*rep.results[i].confidence);
    corr.push_back(rep.results[i].correct);
    n_correct += rep.results[i].correct ? 1.0 : 0.0;
  }
  CHECK(rep.accuracy == Approx(n_correct / 12.0));
  REQUIRE(rep.mean_confidence.has_value());
  CHECK(*rep.mean_confidence == Approx(std::accumulate(confs.begin(), confs.end(), 0.0) / 12.0));
  REQUIRE(rep.ece.has_value());
  CHECK(*rep.ece == Approx(expected_calibration_error(confs, corr, 4)));

  // The mode comes back after an error too.
  model.train();
  CHECK_THROWS_AS(run_multiple_choice_eval(model, tok, {MultipleChoiceExample("", {"a", "b"}, 0)}),
                  g2c::ValueError);
  CHECK(model.is_training());
  model.eval();
  run_multiple_choice_eval(model, tok, {examples[0]});
  CHECK_FALSE(model.is_training());
}

TEST_CASE("generation_harness_and_reports_as_json", "[eval]") {
  const std::vector<GenerationExample> examples{
      GenerationExample("2+2?", {"4"}, {{"kind", "arithmetic"}}),
      GenerationExample("cap?", {"Madrid"})};
  const auto generate = [](const std::string& prompt) {
    return prompt == "2+2?" ? std::string("4<|end|>") : std::string("  madrid. ");
  };
  const auto exact = run_generation_eval(generate, examples);
  CHECK(exact.accuracy == 0.0);
  CHECK(exact.task_name == "generation");
  CHECK(exact.results[0].metadata["matcher"] == "exact_match");
  const auto normalized =
      run_generation_eval(generate, examples, g2c::eval::normalized_match, "qa");
  CHECK(normalized.accuracy == 0.5);
  CHECK(normalized.results[1].metadata["matcher"] == "normalized_match");
  const auto numeric = run_generation_eval(
      generate, {examples[0]},
      [](const std::string& p, const std::vector<std::string>& r) {
        return g2c::eval::numeric_match(p, r);
      },
      "arithmetic", "numeric_match");
  CHECK(numeric.accuracy == 1.0);
  CHECK(numeric.results[0].metadata["matcher"] == "numeric_match");
  CHECK(g2c::eval::matcher_name_of(
            [](const std::string&, const std::vector<std::string>&) { return true; }) == "custom");

  const auto json = normalized.to_json();
  CHECK(json["task_name"] == "qa");
  CHECK(json["n"] == 2);
  CHECK(json["accuracy"] == 0.5);
  CHECK(json["ece"].is_null());
  CHECK(json["mean_confidence"].is_null());
  REQUIRE(json["results"].size() == 2);
  CHECK(json["results"][1]["prediction"] == "  madrid. ");
  CHECK(json["results"][1]["correct"] == true);
  CHECK(json["results"][1]["confidence"].is_null());
  CHECK(json["results"][1]["choice_idx"].is_null());
  CHECK(json["results"][1]["metadata"]["references"] == nlohmann::json({"Madrid"}));
  EvalResult mc;
  mc.prediction = "b";
  mc.confidence = 0.75;
  mc.choice_idx = 1;
  CHECK(mc.to_json()["confidence"] == 0.75);
  CHECK(mc.to_json()["choice_idx"] == 1);
  EvalReport report;
  report.task_name = "t";
  report.accuracy = 0.25;
  report.n = 4;
  report.ece = 0.125;
  CHECK(report.to_string() ==
        "EvalReport(task='t', n=4, accuracy=0.2500, mean_confidence=—, ece=0.1250)");
}

TEST_CASE("eval_bad_input_messages", "[eval]") {
  CHECK_THROWS_WITH(MultipleChoiceExample("q", {"a"}, 0), Contains("at least 2 choices"));
  CHECK_THROWS_WITH(MultipleChoiceExample("q", {"a", "b", "c"}, 3),
                    Contains("answer_idx=3") && Contains("3 choices"));
  CHECK_THROWS_WITH(MultipleChoiceExample("q", {"a", "b"}, 0, nlohmann::json::array()),
                    Contains("JSON object"));
  CHECK_THROWS_WITH(GenerationExample("q", {}), Contains("at least 1 reference"));
  CHECK_THROWS_WITH(expected_calibration_error({0.5, 1.5}, {true, false}), Contains("[0, 1]"));
  CHECK_THROWS_WITH(expected_calibration_error({std::nan("")}, {true}), Contains("[0, 1]"));
  CHECK_THROWS_WITH(reliability_curve({0.5}, {true, false}), Contains("1 and 2"));
  CHECK_THROWS_WITH(reliability_curve({0.5}, {true}, 0), Contains("n_bins"));
  CHECK_THROWS_WITH(g2c::eval::exact_match("x", {}), Contains("exact_match"));
  CHECK_THROWS_WITH(g2c::eval::numeric_match("x", {}), Contains("numeric_match"));
  auto model = TableModel(64, 1);
  const CharTokenizer tok(64);
  CHECK_THROWS_WITH(continuation_logprob(model, tok, "", "a"), Contains("prompt"));
  CHECK_THROWS_WITH(continuation_logprob(model, tok, "a", ""), Contains("continuation"));
  CHECK_THROWS_WITH(run_generation_eval([](const std::string&) { return std::string(); }, {}),
                    Contains("at least one example"));
}
