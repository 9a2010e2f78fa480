// Module 11 course tests: sampling and decoding, one for one with the Python edition's
// tests/test_sampling.py. Tests tagged [clean] pass on the scaffold.
//
// Suggested order: apply_temperature (apply_temperature_*), top_k_filter (top_k_filter_*),
// top_p_filter (top_p_filter_*), apply_repetition_penalty (apply_repetition_penalty_*) — these four
// are independent and use small made-up logits — then sample_next_token and generate
// (generate_*), which compose them into the decoding loop. The generate tests run a tiny
// TransformerLM (V 12, D 8, L 1, H 2, max_seq_len 16), so they also need modules 03, 05, 08 and
// 09 written (or `-DG2C_SOLUTIONS=03-09`). generate_cached is implemented for you: its tests go
// green once your sample_next_token (and the model) work.
//
// Python's torch.allclose(a, b, atol=x) means |a - b| <= x + 1e-5·|b|; py_allclose() keeps that
// meaning.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "g2c/core/errors.h"
#include "g2c/sampling/best_of_n.h"
#include "g2c/sampling/generate.h"
#include "g2c/sampling/warpers.h"
#include "g2c/transformer/transformer_lm.h"
#include "one_thread.h"
#include "torch_test.h"

using g2c::sampling::apply_repetition_penalty;
using g2c::sampling::apply_temperature;
using g2c::sampling::best_of_n;
using g2c::sampling::BestOfNOptions;
using g2c::sampling::generate;
using g2c::sampling::generate_cached;
using g2c::sampling::GenerateOptions;
using g2c::sampling::sequence_log_prob;
using g2c::sampling::top_k_filter;
using g2c::sampling::top_p_filter;
using g2c::testing::py_allclose;
using g2c::transformer::TransformerLM;
using g2c::transformer::TransformerLMOptions;
using torch::indexing::Slice;

namespace {

[[maybe_unused]] const bool kOneThread = g2c::testing::use_one_intra_op_thread();

/// Indices of the finite entries of a 1-D tensor, in increasing order.
std::vector<std::int64_t> finite_indices(const torch::Tensor& row) {
  std::vector<std::int64_t> out;
  for (std::int64_t i = 0; i < row.size(0); ++i) {
    if (std::isfinite(row[i].item<double>())) out.push_back(i);
  }
  return out;
}

double entropy(const torch::Tensor& probs) {
  return -(probs * (probs + 1e-12).log()).sum().item<double>();
}

at::Generator seeded(std::uint64_t seed) {
  return at::make_generator<at::CPUGeneratorImpl>(seed);
}

/// The miniature TransformerLM of the generate tests: seed 0, V 12, D 8, L 1, H 2, max 16.
TransformerLM tiny_model() {
  torch::manual_seed(0);
  return TransformerLM(TransformerLMOptions(/*vocab_size=*/12, /*embedding_dim=*/8,
                                            /*num_layers=*/1, /*num_heads=*/2,
                                            /*max_seq_len=*/16));
}

torch::Tensor ids(std::vector<std::int64_t> values) {
  return torch::tensor(values, torch::kLong);
}

/// Sets the head bias to zero except `value` at token 0, so the model favours token 0.
void favour_token_zero(TransformerLM& model, double value) {
  torch::NoGradGuard no_grad;
  model->head_bias.zero_();
  model->head_bias[0] = value;
}

/// Python's math.isclose(a, b, rel_tol=rel_tol, abs_tol=abs_tol).
bool isclose(double a, double b, double rel_tol = 1e-5, double abs_tol = 1e-6) {
  return std::fabs(a - b) <= std::max(rel_tol * std::max(std::fabs(a), std::fabs(b)), abs_tol);
}

/// The score written out as the Python tests write it: Σ log_softmax(logits)[t, ids[t + 1]] for
/// t = first … T - 2, each term a float32 read as a double.
double manual_gather(TransformerLM& model, const torch::Tensor& sequence, std::int64_t first) {
  torch::NoGradGuard no_grad;
  const auto log_probs = torch::log_softmax(model(sequence.unsqueeze(0))[0], /*dim=*/-1);  // (T, V)
  double total = 0.0;
  for (std::int64_t t = first; t < sequence.size(0) - 1; ++t) {
    total += log_probs[t][sequence[t + 1].item<std::int64_t>()].item<double>();
  }
  return total;
}

/// The same sum with each row scored against the token it reads instead of the next one: what an
/// off-by-one alignment computes.
double same_position_gather(TransformerLM& model, const torch::Tensor& sequence,
                            std::int64_t first) {
  torch::NoGradGuard no_grad;
  const auto log_probs = torch::log_softmax(model(sequence.unsqueeze(0))[0], /*dim=*/-1);
  double total = 0.0;
  for (std::int64_t t = first; t < sequence.size(0); ++t) {
    total += log_probs[t][sequence[t].item<std::int64_t>()].item<double>();
  }
  return total;
}

}  // namespace

// ---- apply_temperature -----------------------------------------------------------------------

TEST_CASE("apply_temperature_identity_at_one") {
  torch::manual_seed(0);
  const auto logits = torch::randn({3, 7});
  CHECK(py_allclose(apply_temperature(logits, 1.0), logits));
}

TEST_CASE("apply_temperature_shape_preserved") {
  torch::manual_seed(0);
  const auto logits = torch::randn({2, 4, 9});
  CHECK(apply_temperature(logits, 0.7).sizes() == logits.sizes());
}

TEST_CASE("apply_temperature_low_t_sharpens_distribution") {
  const auto logits = torch::tensor({{1.0f, 2.0f, 3.0f, 4.0f}});
  const auto probs_t1 = torch::softmax(apply_temperature(logits, 1.0), -1);
  const auto probs_low = torch::softmax(apply_temperature(logits, 0.1), -1);
  INFO("T = 0.1 must give the argmax more mass than T = 1, and lower entropy");
  CHECK(probs_low.max().item<double>() > probs_t1.max().item<double>());
  CHECK(entropy(probs_low) < entropy(probs_t1));
}

TEST_CASE("apply_temperature_high_t_flattens_distribution") {
  const auto logits = torch::tensor({{1.0f, 2.0f, 3.0f, 4.0f}});
  const auto probs_t1 = torch::softmax(apply_temperature(logits, 1.0), -1);
  const auto probs_high = torch::softmax(apply_temperature(logits, 100.0), -1);
  CHECK(probs_high.max().item<double>() < probs_t1.max().item<double>());
  INFO("at T = 100 every probability should be within 1e-2 of 1/V = 0.25");
  CHECK(py_allclose(probs_high, torch::full_like(probs_high, 0.25), 1e-2));
}

TEST_CASE("apply_temperature_preserves_argmax") {
  torch::manual_seed(0);
  const auto logits = torch::randn({5, 20});
  const auto native = logits.argmax(-1);
  for (const double t : {0.1, 0.5, 1.0, 2.0, 10.0}) {
    INFO("temperature " << t);
    CHECK(torch::equal(apply_temperature(logits, t).argmax(-1), native));
  }
}

TEST_CASE("apply_temperature_zero_raises") {
  torch::manual_seed(0);
  const auto logits = torch::randn({2, 5});
  CHECK_THROWS_AS(apply_temperature(logits, 0.0), g2c::ValueError);
}

TEST_CASE("apply_temperature_negative_raises") {
  torch::manual_seed(0);
  const auto logits = torch::randn({2, 5});
  CHECK_THROWS_AS(apply_temperature(logits, -0.5), g2c::ValueError);
}

// ---- top_k_filter ----------------------------------------------------------------------------

TEST_CASE("top_k_filter_shape_preserved") {
  torch::manual_seed(0);
  const auto logits = torch::randn({2, 4, 10});
  CHECK(top_k_filter(logits, 3).sizes() == logits.sizes());
}

TEST_CASE("top_k_filter_k_equals_v_is_identity") {
  torch::manual_seed(0);
  const auto logits = torch::randn({3, 8});
  CHECK(torch::equal(top_k_filter(logits, 8), logits));
}

TEST_CASE("top_k_filter_k_greater_than_v_clamps") {
  torch::manual_seed(0);
  const auto logits = torch::randn({3, 5});
  INFO("k = 99 > V = 5 keeps every logit (no error, no crash)");
  CHECK(torch::equal(top_k_filter(logits, 99), logits));
}

TEST_CASE("top_k_filter_k_one_keeps_only_argmax") {
  const auto logits = torch::tensor({{1.0f, 5.0f, 3.0f, 2.0f}});
  const auto out = top_k_filter(logits, 1);
  CHECK(torch::isfinite(out).sum().item<std::int64_t>() == 1);
  CHECK(torch::isfinite(out[0][1]).item<bool>());
  CHECK(out[0][1].item<float>() == 5.0f);
  for (const std::int64_t i : {0, 2, 3}) {
    const double value = out[0][i].item<double>();
    INFO("entry " << i << " = " << value << ": expected -inf");
    CHECK((std::isinf(value) && value < 0));
  }
}

TEST_CASE("top_k_filter_k_two_keeps_top_two") {
  const auto logits = torch::tensor({{1.0f, 5.0f, 3.0f, 2.0f}});
  const auto out = top_k_filter(logits, 2);
  CHECK(finite_indices(out[0]) == std::vector<std::int64_t>{1, 2});
  CHECK(out[0][1].item<float>() == 5.0f);
  CHECK(out[0][2].item<float>() == 3.0f);
}

TEST_CASE("top_k_filter_per_row") {
  const auto logits = torch::tensor({{10.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 10.0f}});
  const auto out = top_k_filter(logits, 1);
  INFO("the filter works on each row separately, not on the whole tensor");
  CHECK(torch::isfinite(out[0][0]).item<bool>());
  CHECK(torch::isfinite(out[1][2]).item<bool>());
  CHECK(std::isinf(out[0][1].item<double>()));
  CHECK(std::isinf(out[1][0].item<double>()));
}

TEST_CASE("top_k_filter_softmax_sums_to_one_over_survivors") {
  torch::manual_seed(0);
  const auto logits = torch::randn({4, 20});
  const auto probs = torch::softmax(top_k_filter(logits, 5), -1);
  CHECK(py_allclose(probs.sum(-1), torch::ones(4)));
  const auto nonzero = (probs > 0).sum(-1);
  INFO("nonzero probabilities per row: " << nonzero << " (expected 5 in each)");
  CHECK(torch::equal(nonzero, torch::full({4}, 5, torch::kLong)));
}

TEST_CASE("top_k_filter_zero_or_negative_raises") {
  torch::manual_seed(0);
  const auto logits = torch::randn({2, 5});
  CHECK_THROWS_AS(top_k_filter(logits, 0), g2c::ValueError);
  CHECK_THROWS_AS(top_k_filter(logits, -3), g2c::ValueError);
}

// ---- top_p_filter ----------------------------------------------------------------------------

TEST_CASE("top_p_filter_shape_preserved") {
  torch::manual_seed(0);
  const auto logits = torch::randn({2, 3, 10});
  CHECK(top_p_filter(logits, 0.9).sizes() == logits.sizes());
}

TEST_CASE("top_p_filter_p_one_keeps_everything") {
  torch::manual_seed(0);
  const auto logits = torch::randn({3, 8});
  CHECK(py_allclose(top_p_filter(logits, 1.0), logits));
}

TEST_CASE("top_p_filter_keeps_smallest_prefix_reaching_p") {
  // softmax(log [0.6, 0.3, 0.1]) = [0.6, 0.3, 0.1].
  const auto logits = torch::tensor({0.6f, 0.3f, 0.1f}).log().unsqueeze(0);  // (1, 3)
  INFO("p = 0.7: 0.6 is not enough, 0.6 + 0.3 reaches it -> tokens 0 and 1 survive");
  CHECK(finite_indices(top_p_filter(logits, 0.7)[0]) == std::vector<std::int64_t>{0, 1});
  INFO("p = 0.5: 0.6 alone reaches it -> only token 0 survives");
  CHECK(finite_indices(top_p_filter(logits, 0.5)[0]) == std::vector<std::int64_t>{0});
}

TEST_CASE("top_p_filter_argmax_always_survives") {
  const auto logits = torch::tensor({0.95f, 0.025f, 0.025f}).log().unsqueeze(0);
  const auto out = top_p_filter(logits, 0.5);
  INFO(
      "the argmax holds 0.95 > p = 0.5 alone; dropping every token whose cumulative mass exceeds "
      "p would drop it too");
  CHECK(torch::isfinite(out[0][0]).item<bool>());
}

TEST_CASE("top_p_filter_per_row") {
  const auto logits = torch::tensor({{10.0f, 0.0f, 0.0f, 0.0f}, {0.5f, 0.5f, 0.5f, 0.5f}});
  const auto out = top_p_filter(logits, 0.5);
  CHECK(torch::isfinite(out[0]).sum().item<std::int64_t>() == 1);
  CHECK(torch::isfinite(out[1]).sum().item<std::int64_t>() >= 2);
}

TEST_CASE("top_p_filter_softmax_sums_to_one") {
  torch::manual_seed(0);
  const auto logits = torch::randn({4, 30});
  const auto probs = torch::softmax(top_p_filter(logits, 0.8), -1);
  CHECK(py_allclose(probs.sum(-1), torch::ones(4), 1e-5));
}

TEST_CASE("top_p_filter_invalid_p_raises") {
  torch::manual_seed(0);
  const auto logits = torch::randn({2, 5});
  CHECK_THROWS_AS(top_p_filter(logits, 0.0), g2c::ValueError);
  CHECK_THROWS_AS(top_p_filter(logits, -0.1), g2c::ValueError);
  CHECK_THROWS_AS(top_p_filter(logits, 1.5), g2c::ValueError);
}

// ---- apply_repetition_penalty ----------------------------------------------------------------

TEST_CASE("apply_repetition_penalty_one_is_identity") {
  torch::manual_seed(0);
  const auto logits = torch::randn({2, 5});
  const auto prev = torch::tensor({{0, 1}, {2, 3}}, torch::kLong);
  CHECK(py_allclose(apply_repetition_penalty(logits, prev, 1.0), logits));
}

TEST_CASE("apply_repetition_penalty_shape_preserved") {
  torch::manual_seed(0);
  const auto logits = torch::randn({2, 5});
  const auto prev = torch::tensor({{0, 1}, {2, 3}}, torch::kLong);
  CHECK(apply_repetition_penalty(logits, prev, 1.5).sizes() == logits.sizes());
}

TEST_CASE("apply_repetition_penalty_positive_logit_divided") {
  const auto logits = torch::tensor({{2.0f, 3.0f, 4.0f, 5.0f}});
  const auto out = apply_repetition_penalty(logits, torch::tensor({{0}}, torch::kLong), 2.0);
  INFO("token 0 was seen and its logit 2 is positive: 2 / 2 = 1");
  CHECK(out[0][0].item<double>() == py_approx(1.0));
  CHECK(out[0][1].item<float>() == 3.0f);
  CHECK(out[0][2].item<float>() == 4.0f);
  CHECK(out[0][3].item<float>() == 5.0f);
}

TEST_CASE("apply_repetition_penalty_negative_logit_multiplied") {
  const auto logits = torch::tensor({{-2.0f, 1.0f, 1.0f, 1.0f}});
  const auto out = apply_repetition_penalty(logits, torch::tensor({{0}}, torch::kLong), 2.0);
  INFO("token 0 was seen and its logit -2 is negative: -2 * 2 = -4 (dividing would raise it)");
  CHECK(out[0][0].item<double>() == py_approx(-4.0));
}

TEST_CASE("apply_repetition_penalty_untouched_tokens_unchanged") {
  const auto logits = torch::tensor({{2.0f, 3.0f, 4.0f, 5.0f}});
  const auto out = apply_repetition_penalty(logits, torch::tensor({{1}}, torch::kLong), 2.5);
  for (const std::int64_t i : {0, 2, 3}) {
    INFO("token " << i << " was not seen");
    CHECK(out[0][i].item<float>() == logits[0][i].item<float>());
  }
}

TEST_CASE("apply_repetition_penalty_lowers_probability") {
  const auto logits = torch::tensor({{2.0f, 2.0f, 2.0f, 2.0f}});
  const auto out = apply_repetition_penalty(logits, torch::tensor({{0, 1}}, torch::kLong), 1.5);
  const auto probs = torch::softmax(out, -1);
  INFO("seen tokens 0 and 1 must end up less likely than unseen 2 and 3: " << probs);
  CHECK(probs[0][0].item<double>() < probs[0][2].item<double>());
  CHECK(probs[0][1].item<double>() < probs[0][3].item<double>());
}

TEST_CASE("apply_repetition_penalty_one_d_prev_broadcasts") {
  const auto logits = torch::tensor({{2.0f, 3.0f, 4.0f, 5.0f}, {5.0f, 4.0f, 3.0f, 2.0f}});
  const auto out = apply_repetition_penalty(logits, ids({0, 2}), 2.0);
  INFO("a 1-D history is shared by every row: tokens 0 and 2 are penalised in both");
  CHECK(out[0][0].item<double>() == py_approx(1.0));
  CHECK(out[0][2].item<double>() == py_approx(2.0));
  CHECK(out[1][0].item<double>() == py_approx(2.5));
  CHECK(out[1][2].item<double>() == py_approx(1.5));
}

TEST_CASE("apply_repetition_penalty_invalid_raises") {
  torch::manual_seed(0);
  const auto logits = torch::randn({1, 5});
  const auto prev = torch::tensor({{0}}, torch::kLong);
  CHECK_THROWS_AS(apply_repetition_penalty(logits, prev, 0.0), g2c::ValueError);
  CHECK_THROWS_AS(apply_repetition_penalty(logits, prev, -1.0), g2c::ValueError);
}

// ---- generate --------------------------------------------------------------------------------

TEST_CASE("generate_returns_correct_length") {
  auto model = tiny_model();
  const auto out = generate(model, ids({1, 2, 3}), 5, GenerateOptions().temperature(1.0));
  CHECK(out.sizes() == torch::IntArrayRef({3 + 5}));
}

TEST_CASE("generate_starts_with_prompt") {
  auto model = tiny_model();
  const auto prompt = ids({4, 7, 1});
  const auto out = generate(model, prompt, 4, GenerateOptions().temperature(1.0));
  REQUIRE(out.size(0) >= 3);
  CHECK(torch::equal(out.index({Slice(0, 3)}), prompt));
}

TEST_CASE("generate_outputs_valid_token_ids") {
  auto model = tiny_model();
  const auto out = generate(model, ids({0, 1, 2}), 10, GenerateOptions().temperature(1.0));
  CHECK(((out >= 0).all().item<bool>() && (out < model->vocab_size).all().item<bool>()));
}

TEST_CASE("generate_rejects_prompt_ids_outside_model_vocab") {
  auto model = tiny_model();
  const auto prompt = ids({0, 1, model->vocab_size});
  INFO("id 12 with vocab_size 12: a ValueError before any forward pass");
  CHECK_THROWS_WITH(generate(model, prompt, 1, GenerateOptions().temperature(1.0)),
                    Catch::Contains("outside the model vocab"));
  CHECK_THROWS_AS(generate(model, prompt, 1, GenerateOptions().temperature(1.0)), g2c::ValueError);
}

TEST_CASE("generate_greedy_is_deterministic") {
  auto model = tiny_model();
  const auto prompt = ids({0, 1, 2});
  const auto out1 = generate(model, prompt, 8, GenerateOptions().temperature(0.0));
  const auto out2 = generate(model, prompt, 8, GenerateOptions().temperature(0.0));
  CHECK(torch::equal(out1, out2));
}

TEST_CASE("generate_seeded_sampling_is_reproducible") {
  auto model = tiny_model();
  const auto prompt = ids({0, 1, 2});
  const auto out1 = generate(model, prompt, 8, GenerateOptions().generator(seeded(42)));
  const auto out2 = generate(model, prompt, 8, GenerateOptions().generator(seeded(42)));
  INFO(out1 << " vs " << out2);
  CHECK(torch::equal(out1, out2));
}

TEST_CASE("generate_different_seeds_produce_different_output") {
  auto model = tiny_model();
  const auto prompt = ids({0, 1, 2});
  const auto out1 = generate(model, prompt, 10, GenerateOptions().generator(seeded(1)));
  const auto out2 = generate(model, prompt, 10, GenerateOptions().generator(seeded(2)));
  INFO("seeds 1 and 2 drew the same 10 tokens: is the generator passed to the draw?");
  CHECK_FALSE(torch::equal(out1, out2));
}

TEST_CASE("generate_top_k_one_matches_greedy") {
  auto model = tiny_model();
  const auto prompt = ids({0, 1, 2});
  const auto top1 =
      generate(model, prompt, 8, GenerateOptions().temperature(1.0).top_k(1).generator(seeded(0)));
  const auto greedy = generate(model, prompt, 8, GenerateOptions().temperature(0.0));
  INFO("top_k = 1 leaves only the argmax: " << top1 << " vs greedy " << greedy);
  CHECK(torch::equal(top1, greedy));
}

TEST_CASE("generate_eos_stops_early") {
  auto model = tiny_model();
  favour_token_zero(model, 100.0);
  const auto out =
      generate(model, ids({1, 2, 3}), 20, GenerateOptions().temperature(0.0).eos_id(0));
  INFO("greedy picks token 0 = eos_id at once: prompt + [0], the EOS id kept; got " << out);
  CHECK(out.sizes() == torch::IntArrayRef({4}));
  CHECK(out[-1].item<std::int64_t>() == 0);
}

TEST_CASE("generate_no_grad_does_not_populate_grads") {
  auto model = tiny_model();
  for (auto& p : model->parameters()) p.mutable_grad() = torch::Tensor();
  generate(model, ids({0, 1, 2}), 5, GenerateOptions().temperature(1.0));
  for (const auto& named : model->named_parameters()) {
    INFO(named.key() << " has a .grad after generate: run the loop under torch::NoGradGuard");
    CHECK_FALSE(named.value().grad().defined());
  }
}

TEST_CASE("generate_runs_the_model_without_autograd") {
  // An edition addition. Without torch::NoGradGuard nothing visible goes wrong when the caller
  // never calls backward (generate_no_grad_does_not_populate_grads passes), but every step records
  // a graph and keeps its activations alive. A model that counts the forward passes made with
  // autograd on sees it.
  struct GradModeSpyImpl : g2c::transformer::TransformerLMImpl {
    using TransformerLMImpl::TransformerLMImpl;
    torch::Tensor forward(const torch::Tensor& x) override {
      ++calls;
      if (torch::GradMode::is_enabled()) ++calls_with_autograd;
      return TransformerLMImpl::forward(x);
    }
    int calls = 0;
    int calls_with_autograd = 0;
  };
  torch::manual_seed(0);
  GradModeSpyImpl spy(TransformerLMOptions(12, 8, 1, 2, 16));
  generate(spy, ids({0, 1, 2}), 4, GenerateOptions().temperature(1.0).generator(seeded(0)));
  INFO("the model ran " << spy.calls << " times, " << spy.calls_with_autograd
                        << " of them with autograd on: put a torch::NoGradGuard at the top of "
                           "generate, before the loop");
  CHECK(spy.calls == 4);
  CHECK(spy.calls_with_autograd == 0);
  CHECK(torch::GradMode::is_enabled());  // the guard ends with the call
}

TEST_CASE("sample_next_token_temperature_reshapes_the_draw") {
  // An edition addition. Probabilities 1/4 and 3/4 at T = 1. Dividing the logits by T changes the
  // draw; dividing the probabilities instead changes nothing (multinomial renormalizes them).
  const auto logits = torch::tensor({{0.0, std::log(3.0)}});  // (1, 2)
  const auto history = ids({0});
  const auto share_of_token_1 = [&](double temperature, int draws) {
    auto generator = seeded(0);
    int ones = 0;
    for (int i = 0; i < draws; ++i) {
      const auto next = g2c::sampling::sample_next_token(
          logits, history, GenerateOptions().temperature(temperature).generator(generator));
      ones += static_cast<int>(next.item<std::int64_t>() == 1);
    }
    return static_cast<double>(ones) / draws;
  };
  const double cold = share_of_token_1(0.05, 200);  // P(token 1) = 1 - 3e-10
  const double hot = share_of_token_1(50.0, 2000);  // P(token 1) = 0.505
  INFO("token 1 (probability 3/4 at T = 1) was drawn "
       << cold * 100
       << " % of the time at T = 0.05 "
          "and "
       << hot * 100
       << " % at T = 50; expected about 100 % and 50 %. 75 % in both means "
          "the temperature did not reach the draw: divide the logits by T (apply_temperature) "
          "before "
          "the softmax, never the probabilities");
  CHECK(cold == 1.0);
  CHECK(hot > 0.45);
  CHECK(hot < 0.56);
}

TEST_CASE("generate_respects_max_seq_len_via_cropping") {
  auto model = tiny_model();
  const auto prompt = torch::arange(10, torch::kLong);
  INFO("10 + 20 tokens > max_seq_len 16: each step must feed only the last 16 (no error)");
  const auto out = generate(model, prompt, 20, GenerateOptions().temperature(0.0));
  CHECK(out.sizes() == torch::IntArrayRef({30}));
}

TEST_CASE("generate_cached_greedy_matches_uncached_generate") {
  auto model = tiny_model();
  const auto prompt = ids({0, 1, 2});
  const auto cached = generate_cached(model, prompt, 8, GenerateOptions().temperature(0.0));
  const auto uncached = generate(model, prompt, 8, GenerateOptions().temperature(0.0));
  INFO("cached " << cached << " vs uncached " << uncached);
  CHECK(torch::equal(cached, uncached));
}

TEST_CASE("generate_cached_seeded_sampling_is_reproducible") {
  auto model = tiny_model();
  const auto prompt = ids({0, 1, 2});
  const auto out1 = generate_cached(model, prompt, 8, GenerateOptions().generator(seeded(42)));
  const auto out2 = generate_cached(model, prompt, 8, GenerateOptions().generator(seeded(42)));
  CHECK(torch::equal(out1, out2));
}

TEST_CASE("generate_cached_stops_at_max_seq_len") {
  auto model = tiny_model();
  const auto out = generate_cached(model, torch::arange(10, torch::kLong), 20,
                                   GenerateOptions().temperature(0.0));
  INFO("the cache has no rolling window: the sequence stops at max_seq_len = 16");
  CHECK(out.sizes() == torch::IntArrayRef({model->max_seq_len}));
}

TEST_CASE("generate_cached_rejects_prompt_that_fills_context", "[clean]") {
  auto model = tiny_model();
  const auto prompt = torch::arange(model->max_seq_len, torch::kLong) % model->vocab_size;
  CHECK_THROWS_AS(generate_cached(model, prompt, 1, GenerateOptions().temperature(0.0)),
                  g2c::ValueError);
}

TEST_CASE("generate_invalid_temperature_raises") {
  auto model = tiny_model();
  INFO("a negative temperature is a ValueError (0 is greedy)");
  CHECK_THROWS_AS(generate(model, ids({0, 1, 2}), 3, GenerateOptions().temperature(-1.0)),
                  g2c::ValueError);
}

TEST_CASE("generate_empty_prompt_raises") {
  auto model = tiny_model();
  const auto empty = torch::empty({0}, torch::kLong);
  CHECK_THROWS_AS(generate(model, empty, 3, GenerateOptions().temperature(1.0)), g2c::ValueError);
}

TEST_CASE("generate_repetition_penalty_discourages_repeats") {
  auto model = tiny_model();
  favour_token_zero(model, 5.0);
  const auto prompt = ids({0, 0, 0});
  const auto no_penalty =
      generate(model, prompt, 10,
               GenerateOptions().temperature(0.1).repetition_penalty(1.0).generator(seeded(0)));
  const auto penalty =
      generate(model, prompt, 10,
               GenerateOptions().temperature(0.1).repetition_penalty(10.0).generator(seeded(0)));
  const auto zeros_without = (no_penalty.index({Slice(3)}) == 0).sum().item<std::int64_t>();
  const auto zeros_with = (penalty.index({Slice(3)}) == 0).sum().item<std::int64_t>();
  INFO("new zeros without penalty " << zeros_without << ", with penalty 10: " << zeros_with
                                    << "; sequences " << no_penalty << " and " << penalty);
  CHECK(zeros_with <= zeros_without);
  CHECK_FALSE(torch::equal(no_penalty, penalty));
}

// ---- On the accelerator ----------------------------------------------------------------------

TEST_CASE("generate_matches_cpu_on_accelerator", "[accelerator]") {
  const auto device = g2c::testing::accelerator_device();
  if (!device) G2C_SKIP(g2c::testing::kNoAccelerator);
  torch::manual_seed(0);
  const auto logits = torch::randn({3, 20});
  const auto on_device = logits.to(*device);
  INFO("the warpers on " << device->str() << " must keep the same tokens as on the CPU");
  CHECK(torch::equal(torch::isfinite(top_k_filter(on_device, 5)).cpu(),
                     torch::isfinite(top_k_filter(logits, 5))));
  CHECK(torch::equal(torch::isfinite(top_p_filter(on_device, 0.8)).cpu(),
                     torch::isfinite(top_p_filter(logits, 0.8))));
  CHECK(py_allclose(apply_temperature(on_device, 0.7).cpu(), apply_temperature(logits, 0.7), 1e-6));
  CHECK(py_allclose(apply_repetition_penalty(on_device, ids({1, 4, 4}), 1.3).cpu(),
                    apply_repetition_penalty(logits, ids({1, 4, 4}), 1.3), 1e-6));

  auto cpu_model = tiny_model();
  auto device_model = tiny_model();  // the same weights
  device_model->to(*device);
  const auto prompt = ids({0, 1, 2});
  const auto greedy = GenerateOptions().temperature(0.0);
  INFO("greedy generation with the model on " << device->str());
  CHECK(torch::equal(generate(device_model, prompt, 8, greedy),
                     generate(cpu_model, prompt, 8, greedy)));
  INFO(
      "seeded sampling: the draws use the CPU generator whatever the model's device; move the "
      "last logits to the CPU before sampling");
  const auto on_cpu = generate(cpu_model, prompt, 8, GenerateOptions().generator(seeded(7)));
  const auto on_accelerator =
      generate(device_model, prompt, 8, GenerateOptions().generator(seeded(7)));
  CHECK(torch::equal(on_accelerator, on_cpu));
  CHECK(on_accelerator.device().is_cpu());
  CHECK(torch::equal(generate_cached(device_model, prompt, 8, greedy),
                     generate_cached(cpu_model, prompt, 8, greedy)));
}

// ---- sequence_log_prob and best_of_n ------------------------------------------------------------

TEST_CASE("sequence_log_prob_matches_manual_gather") {
  auto model = tiny_model();
  const auto sequence = ids({1, 4, 7, 2, 9});
  const double expected = manual_gather(model, sequence, 0);
  const double got = sequence_log_prob(model, sequence);
  INFO("got " << got << ", expected " << expected
              << " = Σ log_softmax(logits)[t, ids[t + 1]] for t = 0 … T - 2: row t of the logits "
                 "predicts the token at t + 1");
  const bool same_position = isclose(got, same_position_gather(model, sequence, 0)) ||
                             isclose(got, same_position_gather(model, sequence, 1));
  INFO((same_position ? "yours scores row t against ids[t], the token it has just read: take the "
                        "rows 0 … T - 2 and the targets ids[1 … T - 1]"
                      : ""));
  CHECK(isclose(got, expected));
}

TEST_CASE("sequence_log_prob_is_negative") {
  auto model = tiny_model();
  const double score = sequence_log_prob(model, ids({3, 1, 4, 1, 5}));
  INFO("got " << score
              << ": a sum of log-probabilities is below 0; a positive score sums logits or "
                 "probabilities, not log_softmax");
  CHECK(score < 0.0);
}

TEST_CASE("sequence_log_prob_prompt_len_scores_continuation_only") {
  auto model = tiny_model();
  const auto sequence = ids({1, 4, 7, 2, 9});
  const double full = sequence_log_prob(model, sequence);
  const double continuation = sequence_log_prob(model, sequence, /*prompt_len=*/3);
  const double expected = manual_gather(model, sequence, 2);
  INFO("prompt_len 3 of [1, 4, 7, 2, 9]: expected log p(2 | 1 4 7) + log p(9 | 1 4 7 2) = "
       << expected << ", got " << continuation << " (the whole sequence scores " << full << ")");
  std::string hint;
  if (isclose(continuation, full)) {
    hint = "prompt_len changed nothing: the scored rows start at max(prompt_len - 1, 0)";
  } else if (isclose(continuation, manual_gather(model, sequence, 3))) {
    hint =
        "one token too many left out: the first token after the prompt (position prompt_len) is "
        "predicted by row prompt_len - 1";
  }
  INFO(hint);
  CHECK(isclose(continuation, expected));
  CHECK(continuation > full);
}

TEST_CASE("sequence_log_prob_rejects_bad_input") {
  auto model = tiny_model();
  INFO("a (1, 2) batch, a single token, and prompt_len 3 of 3 tokens are each a ValueError");
  CHECK_THROWS_AS(sequence_log_prob(model, torch::tensor({{1, 2}}, torch::kLong)), g2c::ValueError);
  CHECK_THROWS_AS(sequence_log_prob(model, ids({1})), g2c::ValueError);
  CHECK_THROWS_AS(sequence_log_prob(model, ids({1, 2, 3}), /*prompt_len=*/3), g2c::ValueError);
}

TEST_CASE("best_of_n_returns_candidate_pool") {
  auto model = tiny_model();
  const auto prompt = ids({1, 2});
  const auto [best, scored] =
      best_of_n(model, prompt, 4, BestOfNOptions().n(5), GenerateOptions().generator(seeded(0)));
  INFO("n = 5: one {ids, score} per candidate");
  CHECK(scored.size() == 5);
  for (const auto& candidate : scored) CHECK(candidate.ids.numel() >= prompt.numel());
  REQUIRE(best.defined());
  CHECK(best.numel() >= prompt.numel());
}

TEST_CASE("best_of_n_returns_the_argmax_candidate") {
  auto model = tiny_model();
  const auto [best, scored] = best_of_n(model, ids({1, 2}), 4, BestOfNOptions().n(6),
                                        GenerateOptions().generator(seeded(1)));
  REQUIRE_FALSE(scored.empty());
  double top = scored.front().score;
  for (const auto& candidate : scored) top = std::max(top, candidate.score);
  bool found = false;
  std::ostringstream pool;
  for (const auto& candidate : scored) {
    pool << "\n  " << candidate.score;
    if (candidate.score == top && best.defined() && torch::equal(best, candidate.ids)) found = true;
  }
  INFO("the best sequence must be one with the highest score, " << top
                                                                << "; the pool:" << pool.str());
  CHECK(found);
}

TEST_CASE("best_of_n_candidates_differ") {
  auto model = tiny_model();
  const auto [best, scored] = best_of_n(model, ids({1, 2}), 6, BestOfNOptions().n(8),
                                        GenerateOptions().temperature(1.5).generator(seeded(2)));
  std::set<std::vector<std::int64_t>> distinct;
  for (const auto& candidate : scored) {
    const auto flat = candidate.ids.contiguous();
    distinct.emplace(flat.data_ptr<std::int64_t>(), flat.data_ptr<std::int64_t>() + flat.numel());
  }
  INFO(scored.size() << " candidates at temperature 1.5, " << distinct.size()
                     << " distinct: every generate call must use the caller's generator itself "
                        "(generate_options as given), so that each call draws new numbers; a "
                        "copy (clone()) or a freshly seeded generator per candidate replays the "
                        "same draws");
  CHECK(distinct.size() > 1);
}

TEST_CASE("best_of_n_length_normalize_changes_ranking") {
  auto model = tiny_model();
  const auto prompt = ids({1, 2});
  const auto raw =
      best_of_n(model, prompt, 6, BestOfNOptions().n(6), GenerateOptions().generator(seeded(3)))
          .scored;
  const auto norm = best_of_n(model, prompt, 6, BestOfNOptions().n(6).length_normalize(true),
                              GenerateOptions().generator(seeded(3)))
                        .scored;
  REQUIRE(raw.size() == norm.size());
  for (std::size_t i = 0; i < raw.size(); ++i) {
    INFO("candidate " << i << ": the same seed must draw the same candidates");
    REQUIRE(torch::equal(raw[i].ids, norm[i].ids));
    const auto new_tokens = std::max<std::int64_t>(raw[i].ids.numel() - prompt.numel(), 1);
    INFO("normalised " << norm[i].score << ", raw " << raw[i].score << ": expected raw / "
                       << new_tokens << " new tokens = " << raw[i].score / new_tokens
                       << " (divide by the new tokens, T - P, not by the whole length T)");
    CHECK(isclose(norm[i].score, raw[i].score / static_cast<double>(new_tokens)));
  }
}

TEST_CASE("best_of_n_rejects_bad_n") {
  auto model = tiny_model();
  INFO("n = 0 candidates is a ValueError");
  CHECK_THROWS_AS(best_of_n(model, ids({1, 2}), 3, BestOfNOptions().n(0)), g2c::ValueError);
}

TEST_CASE("best_of_n_scores_the_continuation_only") {
  // An edition addition. Scoring each candidate with the prompt included adds the same number, the
  // prompt's own log-probability, to every score: the ranking by raw sum does not move, and the
  // normalised scores still equal raw / new tokens, so every Python test passes. The scores are
  // wrong all the same, and with EOS (candidates of different lengths) the normalised ranking too.
  auto model = tiny_model();
  const auto prompt = ids({5, 3, 8, 1});
  for (const bool normalise : {false, true}) {
    const auto [best, scored] =
        best_of_n(model, prompt, 5, BestOfNOptions().n(4).length_normalize(normalise),
                  GenerateOptions().generator(seeded(4)));
    for (const auto& candidate : scored) {
      const auto new_tokens = candidate.ids.numel() - prompt.numel();
      const double expected =
          manual_gather(model, candidate.ids, prompt.numel() - 1) /
          (normalise ? static_cast<double>(std::max<std::int64_t>(new_tokens, 1)) : 1.0);
      INFO((normalise ? "normalised" : "raw")
           << " score " << candidate.score << ", expected " << expected
           << " for the continuation alone: pass prompt_len = the prompt's length to "
              "sequence_log_prob (with the prompt scored too it would be "
           << manual_gather(model, candidate.ids, 0) << " before normalising)");
      CHECK(isclose(candidate.score, expected));
    }
  }
}
