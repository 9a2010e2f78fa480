// Module 11 framework tests: the warpers against independent formulations (an explicit float64
// softmax, torch::topk, a sort-based nucleus in long double, a per-row set for the penalty), the
// sampler's empirical frequencies against the softmax probabilities (chi-square), the order of the
// warpers, greedy generation against a hand-written loop, generate_cached against generate token
// for token, sequence_log_prob against a float64 log-softmax gather, best_of_n against its own
// pool and a hand-written loop of generate calls, devices, and bad input.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <iostream>
#include <limits>
#include <numeric>
#include <set>
#include <string>
#include <utility>
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
using g2c::sampling::sample_next_token;
using g2c::sampling::sequence_log_prob;
using g2c::sampling::top_k_filter;
using g2c::sampling::top_p_filter;
using g2c::testing::max_abs_diff;
using g2c::transformer::TransformerLM;
using g2c::transformer::TransformerLMOptions;

namespace {

[[maybe_unused]] const bool kOneThread = g2c::testing::use_one_intra_op_thread();

constexpr double kInf = std::numeric_limits<double>::infinity();

at::Generator seeded(std::uint64_t seed) {
  return at::make_generator<at::CPUGeneratorImpl>(seed);
}

std::vector<std::int64_t> to_vector(const torch::Tensor& ids) {
  const auto flat = ids.to(torch::kCPU, torch::kLong).contiguous();
  return {flat.data_ptr<std::int64_t>(), flat.data_ptr<std::int64_t>() + flat.numel()};
}

std::vector<double> row_values(const torch::Tensor& row) {
  const auto flat = row.to(torch::kCPU, torch::kDouble).contiguous();
  return {flat.data_ptr<double>(), flat.data_ptr<double>() + flat.numel()};
}

/// Softmax of one row in long double, written out: exp(x_i - max) / sum.
std::vector<long double> reference_softmax(const std::vector<double>& logits) {
  const double top = *std::max_element(logits.begin(), logits.end());
  std::vector<long double> p(logits.size());
  long double total = 0;
  for (std::size_t i = 0; i < logits.size(); ++i) {
    p[i] = std::isinf(logits[i]) ? 0.0L : std::exp(static_cast<long double>(logits[i] - top));
    total += p[i];
  }
  for (auto& value : p) value /= total;
  return p;
}

/// The nucleus of one row, from the definition: sort by probability (largest first), walk down
/// the list and keep each token while the mass of the tokens kept so far is still below p.
/// `margin` returns the smallest |mass before a token - p| seen, to skip rows on a knife edge.
std::set<std::int64_t> reference_nucleus(const std::vector<double>& logits, double p,
                                         long double& margin) {
  const auto probs = reference_softmax(logits);
  std::vector<std::int64_t> order(logits.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::int64_t a, std::int64_t b) { return probs[a] > probs[b]; });
  std::set<std::int64_t> kept;
  long double before = 0;
  margin = std::numeric_limits<long double>::infinity();
  for (const auto index : order) {
    if (!kept.empty()) margin = std::min(margin, std::fabs(before - p));
    if (before >= p) break;
    kept.insert(index);
    before += probs[index];
  }
  return kept;
}

std::set<std::int64_t> finite_set(const torch::Tensor& row) {
  std::set<std::int64_t> out;
  const auto values = row_values(row);
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (std::isfinite(values[i])) out.insert(static_cast<std::int64_t>(i));
  }
  return out;
}

/// The chi-square value exceeded with probability `alpha` by a chi-square variable with `dof`
/// degrees of freedom (bisection on the regularised upper incomplete gamma function).
double chi_square_critical(std::int64_t dof, double alpha) {
  double low = 0.0, high = 1000.0;
  const auto half_dof = torch::tensor(0.5 * static_cast<double>(dof), torch::kDouble);
  for (int i = 0; i < 200; ++i) {
    const double middle = 0.5 * (low + high);
    const double tail =
        torch::special::gammaincc(half_dof, torch::tensor(0.5 * middle, torch::kDouble))
            .item<double>();
    (tail > alpha ? low : high) = middle;
  }
  return low;
}

/// Pearson's statistic of observed counts against expected probabilities, over the tokens with
/// nonzero probability; `dof` receives their number minus one.
double chi_square(const torch::Tensor& counts, const torch::Tensor& probs, std::int64_t& dof) {
  const auto n = counts.sum().item<double>();
  double statistic = 0.0;
  dof = -1;
  for (std::int64_t i = 0; i < probs.size(0); ++i) {
    const double p = probs[i].item<double>();
    if (p <= 0.0) continue;
    const double expected = n * p, observed = counts[i].item<double>();
    statistic += (observed - expected) * (observed - expected) / expected;
    ++dof;
  }
  return statistic;
}

/// N draws of sample_next_token from one row of logits, as N identical rows in one call.
torch::Tensor draw_counts(const torch::Tensor& logits, std::int64_t draws,
                          const GenerateOptions& options) {
  const auto rows = logits.unsqueeze(0).expand({draws, logits.size(0)}).contiguous();  // (N, V)
  torch::Tensor drawn;                                                                 // (N)
  try {
    drawn = sample_next_token(rows, torch::empty({0}, torch::kLong), options);
  } catch (const c10::Error& error) {
    // LibTorch's message ends in a C++ stack trace; its first line is the sentence.
    const std::string what = error.what_without_backtrace();
    FAIL("sample_next_token threw while drawing: "
         << what.substr(0, what.find('\n'))
         << "\nProbabilities that are NaN or inf come from a row of logits that is all -inf: a "
            "warper removed every token (top-p must always keep the most likely one: compare the "
            "mass above each token, not the mass including it)");
  }
  REQUIRE(drawn.sizes() == torch::IntArrayRef({draws}));
  return torch::bincount(drawn, /*weights=*/{}, /*minlength=*/logits.size(0)).to(torch::kDouble);
}

TransformerLM make_model(std::uint64_t seed, std::int64_t num_layers, std::int64_t max_seq_len,
                         std::int64_t vocab_size = 12) {
  torch::manual_seed(seed);
  return TransformerLM(TransformerLMOptions(vocab_size, /*embedding_dim=*/16, num_layers,
                                            /*num_heads=*/4, max_seq_len));
}

/// Greedy decoding written out: at each step the last max_seq_len ids through forward(), argmax
/// of the last position.
std::vector<std::int64_t> oracle_greedy(TransformerLM& model, std::vector<std::int64_t> ids,
                                        std::int64_t count) {
  torch::NoGradGuard no_grad;
  for (std::int64_t step = 0; step < count; ++step) {
    const auto size = static_cast<std::int64_t>(ids.size());
    const auto start = std::max<std::int64_t>(0, size - model->max_seq_len);
    const std::vector<std::int64_t> window(ids.begin() + start, ids.end());
    const auto logits = model(torch::tensor(window, torch::kLong).unsqueeze(0))[0][-1];  // (V)
    ids.push_back(logits.argmax().item<std::int64_t>());
  }
  return ids;
}

/// The teacher-forced score from its definition, in long double: each row of `logits` (T, V) read
/// as doubles, its log-softmax written out (x - max - log Σ exp(x - max)), summed at the token
/// that follows it, over the rows max(prompt_len - 1, 0) … T - 2.
long double oracle_log_prob(const torch::Tensor& logits, const std::vector<std::int64_t>& ids,
                            std::int64_t prompt_len) {
  long double total = 0;
  const auto length = static_cast<std::int64_t>(ids.size());
  for (std::int64_t t = std::max<std::int64_t>(prompt_len - 1, 0); t < length - 1; ++t) {
    const auto row = row_values(logits[t]);
    const long double top = *std::max_element(row.begin(), row.end());
    long double mass = 0;
    for (const double x : row) mass += std::exp(static_cast<long double>(x) - top);
    total +=
        static_cast<long double>(row[static_cast<std::size_t>(ids[t + 1])]) - top - std::log(mass);
  }
  return total;
}

/// The model's logits (T, V) for one sequence, on the CPU, without autograd.
torch::Tensor sequence_logits(TransformerLM& model, const std::vector<std::int64_t>& ids) {
  torch::NoGradGuard no_grad;
  const auto batch = torch::tensor(ids, torch::kLong).unsqueeze(0).to(model->device());
  return model(batch)[0].to(torch::kCPU);
}

}  // namespace

// ---- Warpers against independent formulations -------------------------------------------------

TEST_CASE("temperature_softmax_matches_the_explicit_formula", "[sampling]") {
  torch::manual_seed(0);
  const auto logits = torch::randn({6, 40}, torch::kDouble) * 3;
  double worst = 0.0;
  for (const double t : {0.05, 0.3, 1.0, 1.7, 25.0}) {
    const auto probs = torch::softmax(apply_temperature(logits, t), -1);
    for (std::int64_t r = 0; r < logits.size(0); ++r) {
      auto scaled = row_values(logits[r]);
      for (auto& x : scaled) x /= t;
      const auto expected = reference_softmax(scaled);
      const auto actual = row_values(probs[r]);
      for (std::size_t i = 0; i < actual.size(); ++i) {
        worst = std::max(worst, static_cast<double>(std::fabs(actual[i] - expected[i])));
      }
    }
  }
  std::cout << "temperature: max |softmax(l / T) - exp(l_i / T) / sum| = " << worst << "\n";
  CHECK(worst < 1e-12);
  INFO("apply_temperature works on any shape and leaves its input alone");
  const auto three_d = torch::randn({2, 3, 5});
  const auto copy = three_d.clone();
  CHECK(g2c::testing::close(apply_temperature(three_d, 0.5), copy * 2.0, 1e-6));
  CHECK(torch::equal(three_d, copy));
}

TEST_CASE("top_k_keeps_exactly_the_indices_of_torch_topk", "[sampling]") {
  torch::manual_seed(1);
  for (const auto dtype : {torch::kFloat, torch::kDouble}) {
    const auto logits = torch::randn({5, 3, 17}, dtype);  // continuous: no ties
    for (std::int64_t k = 1; k <= 19; ++k) {
      const auto out = top_k_filter(logits, k);
      const auto keep = std::min<std::int64_t>(k, 17);
      const auto top = std::get<1>(logits.topk(keep, /*dim=*/-1));  // (5, 3, keep)
      auto expected_mask = torch::zeros_like(logits, torch::kBool).scatter(-1, top, true);
      INFO("k = " << k << ", dtype " << dtype);
      CHECK(torch::equal(torch::isfinite(out), expected_mask));
      CHECK(torch::equal(out.masked_select(expected_mask), logits.masked_select(expected_mask)));
      CHECK((out.masked_select(~expected_mask) == -kInf).all().item<bool>());
    }
  }
  INFO("ties with the k-th largest value all survive (documented)");
  const auto tied = torch::tensor({{3.0, 1.0, 2.0, 2.0, 0.0}});
  CHECK(finite_set(top_k_filter(tied, 2)[0]) == std::set<std::int64_t>{0, 2, 3});
}

TEST_CASE("top_p_matches_a_sort_based_long_double_nucleus", "[sampling]") {
  torch::manual_seed(2);
  std::int64_t rows = 0, skipped = 0, mismatches = 0;
  for (const auto dtype : {torch::kDouble, torch::kFloat}) {
    // float32 probabilities and their running sums carry ~1e-6 of rounding: skip rows closer than
    // 1e-5 to the edge, and keep its vocabularies small.
    const bool wide = dtype == torch::kDouble;
    const long double edge = wide ? 1e-12L : 1e-5L;
    const std::vector<std::int64_t> vocabs =
        wide ? std::vector<std::int64_t>{2, 7, 64, 1000} : std::vector<std::int64_t>{2, 7, 64};
    for (const std::int64_t vocab : vocabs) {
      for (const double scale : {0.1, 1.0, 4.0}) {
        const auto logits = (torch::randn({20, vocab}, torch::kDouble) * scale).to(dtype);
        for (const double p : {0.05, 0.3, 0.5, 0.9, 0.99}) {
          const auto out = top_p_filter(logits, p);
          for (std::int64_t r = 0; r < logits.size(0); ++r) {
            long double margin = 0;
            const auto expected = reference_nucleus(row_values(logits[r]), p, margin);
            ++rows;
            if (margin < edge) {
              ++skipped;
              continue;
            }
            if (finite_set(out[r]) != expected) ++mismatches;
          }
          const auto kept = out.isfinite();
          CHECK(torch::equal(out.masked_select(kept), logits.masked_select(kept)));
        }
      }
    }
  }
  std::cout << "top_p: " << rows << " rows against the long double nucleus, " << skipped
            << " skipped within the rounding margin of p, " << mismatches << " mismatches\n";
  CHECK(mismatches == 0);
  CHECK(skipped < rows / 20);
  INFO("p = 1 keeps even a token of probability ~1e-40");
  const auto extreme = torch::tensor({{0.0, -90.0, -95.0}}, torch::kDouble);
  CHECK(torch::equal(top_p_filter(extreme, 1.0), extreme));
}

TEST_CASE("repetition_penalty_matches_a_per_row_set", "[sampling]") {
  torch::manual_seed(3);
  const auto logits = torch::randn({4, 30}, torch::kDouble) * 2;
  const auto per_row = torch::randint(0, 30, {4, 25}, torch::kLong);  // with repeats
  const auto shared = torch::randint(0, 30, {40}, torch::kLong);
  for (const double penalty : {0.5, 1.0, 1.3, 10.0}) {
    for (const bool use_shared : {false, true}) {
      const auto history = use_shared ? shared : per_row;
      auto expected = logits.clone();
      for (std::int64_t r = 0; r < logits.size(0); ++r) {
        const auto seen_list = to_vector(use_shared ? shared : per_row[r]);
        const std::set<std::int64_t> seen(seen_list.begin(), seen_list.end());
        for (const auto id : seen) {  // once per distinct id
          const double x = expected[r][id].item<double>();
          expected[r][id] = x > 0 ? x / penalty : x * penalty;
        }
      }
      const auto before = logits.clone();
      const auto out = apply_repetition_penalty(logits, history, penalty);
      INFO("penalty " << penalty << (use_shared ? ", shared 1-D history" : ", per-row history")
                      << ": max |difference| = " << max_abs_diff(out, expected));
      CHECK(torch::equal(out, expected));
      CHECK(torch::equal(logits, before));  // not in place
    }
  }
  INFO("an id seen three times is penalised once: 2 / 2 = 1, not 2 / 8");
  const auto once =
      apply_repetition_penalty(torch::tensor({{2.0, 1.0}}), torch::tensor({0, 0, 0}), 2.0);
  CHECK(once[0][0].item<double>() == 1.0);
  INFO("an empty history changes nothing");
  CHECK(
      torch::equal(apply_repetition_penalty(logits, torch::empty({0}, torch::kLong), 3.0), logits));
}

// ---- The sampler: frequencies, order, greedy ---------------------------------------------------

TEST_CASE("sampler_frequencies_match_the_softmax_probabilities", "[sampling]") {
  torch::manual_seed(4);
  const auto logits = torch::randn({8}, torch::kDouble) * 1.5;
  const std::int64_t draws = 40000;
  const double alpha = 1e-6;  // false-alarm probability of each chi-square bound
  struct Case {
    const char* name;
    GenerateOptions options;
    torch::Tensor probs;  // what the draws should follow
  };
  // Expected distributions from independent formulations: softmax of l / T, with the top-k set
  // from torch::topk and the nucleus from the long double reference.
  const auto softmax = [](const torch::Tensor& l) { return torch::softmax(l, -1); };
  const auto only = [](const torch::Tensor& l, const std::set<std::int64_t>& kept) {
    auto out = torch::full_like(l, -kInf);
    for (const auto i : kept) out[i] = l[i];
    return out;
  };
  const auto top3 = to_vector(std::get<1>((logits / 2.0).topk(3)));
  long double margin = 0;
  const auto nucleus = reference_nucleus(row_values(logits / 1.2), 0.8, margin);
  REQUIRE(margin > 1e-6L);
  const std::vector<Case> cases = {
      {"T = 1", GenerateOptions().generator(seeded(10)), softmax(logits)},
      {"T = 0.5", GenerateOptions().temperature(0.5).generator(seeded(11)), softmax(logits / 0.5)},
      {"T = 2, top-k 3", GenerateOptions().temperature(2.0).top_k(3).generator(seeded(12)),
       softmax(only(logits / 2.0, std::set<std::int64_t>(top3.begin(), top3.end())))},
      {"T = 1.2, top-p 0.8", GenerateOptions().temperature(1.2).top_p(0.8).generator(seeded(13)),
       softmax(only(logits / 1.2, nucleus))},
  };
  for (const auto& c : cases) {
    const auto counts = draw_counts(logits, draws, c.options);
    std::int64_t dof = 0;
    const double statistic = chi_square(counts, c.probs, dof);
    const auto zero_mass = c.probs <= 0;
    const auto impossible = counts.masked_select(zero_mass).sum().item<double>();
    std::cout << "sampler " << c.name << ": chi-square " << statistic << " with " << dof
              << " degrees of freedom (bound " << chi_square_critical(dof, alpha)
              << " at false-alarm 1e-6), " << impossible << " draws of filtered tokens\n";
    INFO(c.name << ": counts " << counts << " for probabilities " << c.probs);
    CHECK(impossible == 0);
    REQUIRE(dof >= 2);  // a distribution with some spread left, or the test says little
    CHECK(statistic < chi_square_critical(dof, alpha));
  }
  INFO("temperature 0 is the argmax every time, whatever the generator");
  const auto greedy = draw_counts(logits, 100, GenerateOptions().temperature(0.0));
  CHECK(greedy[logits.argmax().item<std::int64_t>()].item<double>() == 100);
}

TEST_CASE("sampler_applies_top_k_then_top_p_after_temperature", "[sampling]") {
  // softmax(log [0.5, 0.3, 0.2] / 0.5) = [0.658, 0.237, 0.105]: top-p 0.6 after temperature keeps
  // token 0 only; before temperature (0.5 < 0.6) it would keep tokens 0 and 1.
  const auto a = torch::tensor({0.5, 0.3, 0.2}, torch::kDouble).log();
  auto counts =
      draw_counts(a, 2000, GenerateOptions().temperature(0.5).top_p(0.6).generator(seeded(1)));
  INFO("counts "
       << counts
       << " for probabilities 0.5, 0.3, 0.2 at T = 0.5, top-p 0.6: token 0 "
          "alone must survive. If tokens 0 and 1 are drawn, top-p did not see the tempered "
          "distribution — either it ran before the temperature, or the temperature never reached "
          "the logits (divided the probabilities, which the draw renormalizes)");
  CHECK(counts[0].item<double>() == 2000);
  // [0.5, 0.25, 0.15, 0.1] with top-k 2 then top-p 0.65: renormalised [0.667, 0.333] -> token 0
  // only; top-p first would keep tokens 0 and 1.
  const auto b = torch::tensor({0.5, 0.25, 0.15, 0.1}, torch::kDouble).log();
  counts = draw_counts(b, 2000, GenerateOptions().top_k(2).top_p(0.65).generator(seeded(2)));
  INFO("top-k must come before top-p: counts " << counts);
  CHECK(counts[0].item<double>() == 2000);
}

TEST_CASE("greedy_generate_matches_a_hand_written_loop_with_cropping", "[sampling]") {
  for (const std::uint64_t seed : {0, 1}) {
    auto model = make_model(seed, /*num_layers=*/2, /*max_seq_len=*/16);
    const std::vector<std::int64_t> prompt = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3};
    const auto out = generate(model, torch::tensor(prompt, torch::kLong), 24,
                              GenerateOptions().temperature(0.0));
    INFO("seed " << seed << ": 10 + 24 tokens through a 16-position model");
    CHECK(to_vector(out) == oracle_greedy(model, prompt, 24));
  }
}

// ---- generate_cached == generate ---------------------------------------------------------------

TEST_CASE("generate_cached_equals_generate_token_for_token", "[sampling]") {
  constexpr std::int64_t kMaxSeqLen = 24;
  std::int64_t sequences = 0, tokens = 0;
  for (const std::uint64_t seed : {0, 1}) {
    for (const std::int64_t layers : {1, 2, 3}) {
      auto model = make_model(seed, layers, kMaxSeqLen, /*vocab_size=*/20);
      for (const std::int64_t prompt_length : {1, 6}) {
        const auto prompt = torch::randint(0, 20, {prompt_length}, torch::kLong);
        const std::int64_t count = kMaxSeqLen - prompt_length;  // up to the last position
        const std::vector<std::pair<const char*, GenerateOptions>> settings = {
            {"greedy", GenerateOptions().temperature(0.0)},
            {"T = 1", GenerateOptions().temperature(1.0)},
            {"every warper",
             GenerateOptions().temperature(0.9).top_k(8).top_p(0.9).repetition_penalty(1.3)},
        };
        for (const auto& [name, options] : settings) {
          // Two generators in the same state: one for each run.
          const std::uint64_t draw_seed = 1000 * seed + 10 * layers + prompt_length;
          auto first = options, second = options;
          first.generator(seeded(draw_seed));
          second.generator(seeded(draw_seed));
          const auto uncached = generate(model, prompt, count, first);
          const auto cached = generate_cached(model, prompt, count, second);
          const bool same = torch::equal(cached, uncached);
          if (!same) UNSCOPED_INFO("cached " << cached << " vs uncached " << uncached);
          INFO("seed " << seed << ", L " << layers << ", prompt " << prompt_length << ", " << name);
          CHECK(same);
          ++sequences;
          tokens += count;
        }
      }
    }
  }
  std::cout << "generate_cached == generate on " << sequences << " sequences, " << tokens
            << " generated tokens (greedy, T = 1, every warper)\n";
}

TEST_CASE("both_generators_stop_right_after_eos", "[sampling]") {
  auto model = make_model(5, 2, 32);
  const auto prompt = torch::tensor({1, 2, 3}, torch::kLong);
  const auto greedy = GenerateOptions().temperature(0.0);
  const auto free_run = to_vector(generate(model, prompt, 20, greedy));
  const auto eos = free_run[5];  // the third generated token
  const auto first = std::find(free_run.begin() + 3, free_run.end(), eos);
  const std::vector<std::int64_t> expected(free_run.begin(), first + 1);
  auto with_eos = greedy;
  with_eos.eos_id(eos);
  CHECK(to_vector(generate(model, prompt, 20, with_eos)) == expected);
  CHECK(to_vector(generate_cached(model, prompt, 20, with_eos)) == expected);
  INFO("max_new_tokens = 0 returns the prompt");
  CHECK(to_vector(generate(model, prompt, 0, greedy)) == to_vector(prompt));
}

TEST_CASE("generation_builds_no_graph_and_leaves_its_inputs_alone", "[sampling]") {
  auto model = make_model(6, 1, 16);
  const auto prompt = torch::tensor({4, 5, 6}, torch::kInt);  // int32 is fine too
  const auto copy = prompt.clone();
  const auto out = generate(model, prompt, 5, GenerateOptions().generator(seeded(0)));
  const auto cached = generate_cached(model, prompt, 5, GenerateOptions().generator(seeded(0)));
  CHECK(out.scalar_type() == torch::kLong);
  CHECK(out.device().is_cpu());
  CHECK_FALSE(out.requires_grad());
  CHECK(torch::equal(out, cached));
  CHECK(torch::equal(prompt, copy));
  CHECK(torch::GradMode::is_enabled());  // the guard is scoped to the call
  for (const auto& p : model->parameters()) CHECK_FALSE(p.grad().defined());
}

TEST_CASE("generation_on_cuda_matches_the_cpu", "[sampling]") {
  if (!torch::cuda::is_available()) G2C_SKIP("no CUDA device on this machine");
  auto cpu_model = make_model(8, 2, 48);
  auto cuda_model = make_model(8, 2, 48);
  cuda_model->to(torch::kCUDA);
  const auto prompt = torch::tensor({1, 2, 3, 4}, torch::kLong);
  for (const std::uint64_t seed : {0, 1, 2, 3}) {
    const auto options = GenerateOptions().temperature(0.8).top_k(10).top_p(0.95);
    auto a = options, b = options, c = options;
    a.generator(seeded(seed));
    b.generator(seeded(seed));
    c.generator(seeded(seed));
    const auto on_cpu = generate(cpu_model, prompt, 40, a);
    INFO("seed " << seed);
    CHECK(torch::equal(generate(cuda_model, prompt.to(torch::kCUDA), 40, b), on_cpu));
    CHECK(torch::equal(generate_cached(cuda_model, prompt, 40, c), on_cpu));
  }
}

// ---- sequence_log_prob and best_of_n -----------------------------------------------------------

TEST_CASE("sequence_log_prob_matches_a_float64_log_softmax_gather", "[sampling]") {
  double worst32 = 0, worst64 = 0;
  std::int64_t cases = 0;
  for (const std::uint64_t seed : {0, 1, 2}) {
    auto model = make_model(seed, /*num_layers=*/2, /*max_seq_len=*/24, /*vocab_size=*/20);
    auto model64 = make_model(seed, 2, 24, 20);  // the same weights, in float64
    model64->to(torch::kDouble);
    for (const std::int64_t length : {2, 5, 24}) {
      const auto ids = to_vector(torch::randint(0, 20, {length}, torch::kLong));
      const auto sequence = torch::tensor(ids, torch::kLong);
      const auto logits = sequence_logits(model, ids);
      const auto logits64 = sequence_logits(model64, ids);
      for (const std::int64_t prompt_len :
           {std::int64_t{0}, std::int64_t{1}, length / 2, length - 1}) {
        const auto expected = static_cast<double>(oracle_log_prob(logits, ids, prompt_len));
        const auto expected64 = static_cast<double>(oracle_log_prob(logits64, ids, prompt_len));
        const double got = sequence_log_prob(model, sequence, prompt_len);
        const double got64 = sequence_log_prob(model64, sequence, prompt_len);
        INFO("seed " << seed << ", T " << length << ", prompt_len " << prompt_len << ": float32 "
                     << got << " vs " << expected << ", float64 " << got64 << " vs " << expected64);
        CHECK(std::fabs(got - expected) <= 1e-5 * std::max(1.0, std::fabs(expected)));
        CHECK(std::fabs(got64 - expected64) <= 1e-10 * std::max(1.0, std::fabs(expected64)));
        CHECK(got < 0.0);
        worst32 = std::max(worst32, std::fabs(got - expected));
        worst64 = std::max(worst64, std::fabs(got64 - expected64));
        ++cases;
      }
    }
    for (const auto& p : model->parameters()) CHECK_FALSE(p.grad().defined());
  }
  CHECK(torch::GradMode::is_enabled());
  std::cout << "sequence_log_prob against a long-double log-softmax gather on " << cases
            << " cases: largest difference " << worst32 << " (float32), " << worst64
            << " (float64)\n";
}

TEST_CASE("best_of_n_picks_the_argmax_of_its_pool_reproducibly", "[sampling]") {
  auto model = make_model(3, /*num_layers=*/1, /*max_seq_len=*/32);
  const std::vector<std::int64_t> prompt = {1, 2, 3};
  const auto prompt_ids = torch::tensor(prompt, torch::kLong);
  // EOS makes candidates of different lengths, where normalising matters.
  const auto sampling = GenerateOptions().temperature(1.3).eos_id(0);
  for (const bool normalise : {false, true}) {
    for (const std::uint64_t seed : {5, 6}) {
      const auto options = BestOfNOptions().n(10).length_normalize(normalise);
      auto first = sampling, second = sampling, oracle = sampling;
      first.generator(seeded(seed));
      second.generator(seeded(seed));
      oracle.generator(seeded(seed));
      const auto a = best_of_n(model, prompt_ids, 8, options, first);
      const auto b = best_of_n(model, prompt_ids, 8, options, second);
      INFO("seed " << seed << (normalise ? ", length_normalize" : ", raw sum"));
      REQUIRE(a.scored.size() == 10);
      REQUIRE(b.scored.size() == 10);
      std::size_t argmax = 0;
      std::set<std::int64_t> lengths;
      for (std::size_t i = 0; i < a.scored.size(); ++i) {
        // The pool is n successive generate() calls on one generator, scored from the definition.
        const auto expected_ids = generate(model, prompt_ids, 8, oracle);
        const auto ids = to_vector(expected_ids);
        const auto new_tokens = static_cast<std::int64_t>(ids.size() - prompt.size());
        const auto raw = static_cast<double>(oracle_log_prob(
            sequence_logits(model, ids), ids, static_cast<std::int64_t>(prompt.size())));
        const double expected = normalise ? raw / static_cast<double>(new_tokens) : raw;
        INFO("candidate " << i << ": " << a.scored[i].ids << " scored " << a.scored[i].score
                          << ", expected " << expected_ids << " scored " << expected);
        CHECK(torch::equal(a.scored[i].ids, expected_ids));
        CHECK(std::fabs(a.scored[i].score - expected) <= 1e-5 * std::max(1.0, std::fabs(expected)));
        CHECK(torch::equal(b.scored[i].ids, a.scored[i].ids));
        CHECK(b.scored[i].score == a.scored[i].score);
        if (a.scored[i].score > a.scored[argmax].score) argmax = i;
        lengths.insert(new_tokens);
      }
      INFO("best_ids must be the first candidate of the largest score, #" << argmax);
      CHECK(torch::equal(a.best_ids, a.scored[argmax].ids));
      CHECK(torch::equal(b.best_ids, a.best_ids));
      CHECK(lengths.size() > 1);  // EOS cut some candidates short: the check covers both cases
    }
  }
  INFO("n = 1: the only candidate is the best");
  const auto single = best_of_n(model, prompt_ids, 4, BestOfNOptions().n(1),
                                GenerateOptions().generator(seeded(0)));
  REQUIRE(single.scored.size() == 1);
  CHECK(torch::equal(single.best_ids, single.scored[0].ids));
}

TEST_CASE("sequence_log_prob_on_cuda_matches_the_cpu", "[sampling]") {
  if (!torch::cuda::is_available()) G2C_SKIP("no CUDA device on this machine");
  auto cpu_model = make_model(8, 2, 48);
  auto cuda_model = make_model(8, 2, 48);
  cuda_model->to(torch::kCUDA);
  const auto sequence = torch::randint(0, 12, {40}, torch::kLong);
  for (const std::int64_t prompt_len : {0, 10, 39}) {
    const double on_cpu = sequence_log_prob(cpu_model, sequence, prompt_len);
    INFO("prompt_len " << prompt_len);
    CHECK(std::fabs(sequence_log_prob(cuda_model, sequence, prompt_len) - on_cpu) <=
          1e-4 * std::max(1.0, std::fabs(on_cpu)));
    CHECK(std::fabs(sequence_log_prob(cuda_model, sequence.to(torch::kCUDA), prompt_len) -
                    on_cpu) <= 1e-4 * std::max(1.0, std::fabs(on_cpu)));
  }
  const auto options = GenerateOptions().temperature(0.9).top_k(8);
  auto a = options, b = options;
  a.generator(seeded(3));
  b.generator(seeded(3));
  const auto on_cpu = best_of_n(cpu_model, torch::tensor({1, 2, 3}), 20, BestOfNOptions(), a);
  const auto on_cuda = best_of_n(cuda_model, torch::tensor({1, 2, 3}), 20, BestOfNOptions(), b);
  CHECK(torch::equal(on_cuda.best_ids, on_cpu.best_ids));
}

// ---- Bad input --------------------------------------------------------------------------------

TEST_CASE("bad_input_is_a_value_error_naming_the_problem", "[sampling]") {
  auto model = make_model(9, 1, 16);
  const auto prompt = torch::tensor({1, 2}, torch::kLong);
  const auto logits = torch::randn({2, 5});
  const std::vector<std::pair<std::string, std::function<void()>>> cases = {
      {"1-D",
       [&] {
         generate(model, torch::zeros({1, 3}, torch::kLong), 2);
       }},
      {"empty", [&] { generate(model, torch::empty({0}, torch::kLong), 2); }},
      {"integer token ids", [&] { generate(model, torch::zeros({3}), 2); }},
      {"outside the model vocab",
       [&] {
         generate(model, torch::tensor({-1, 2}), 2);
       }},
      {"max_new_tokens", [&] { generate(model, prompt, -1); }},
      {"temperature", [&] { generate(model, prompt, 2, GenerateOptions().temperature(-0.1)); }},
      {"temperature", [&] { generate(model, prompt, 2, GenerateOptions().temperature(NAN)); }},
      {"top_k", [&] { generate(model, prompt, 2, GenerateOptions().top_k(0)); }},
      {"top_p", [&] { generate(model, prompt, 2, GenerateOptions().top_p(0.0)); }},
      {"top_p", [&] { generate(model, prompt, 2, GenerateOptions().top_p(1.01)); }},
      {"repetition_penalty",
       [&] { generate(model, prompt, 2, GenerateOptions().repetition_penalty(0.0)); }},
      {"eos_id", [&] { generate(model, prompt, 2, GenerateOptions().eos_id(12)); }},
      {"max_new_tokens > 0", [&] { generate_cached(model, prompt, 0); }},
      {"max_seq_len", [&] { generate_cached(model, torch::zeros({16}, torch::kLong), 1); }},
      {"floating-point",
       [&] {
         apply_temperature(torch::ones({2, 3}, torch::kLong), 1.0);
       }},
      {"undefined", [&] { top_k_filter(torch::Tensor(), 2); }},
      {"top_k", [&] { top_k_filter(logits, -1); }},
      {"top_p", [&] { top_p_filter(logits, NAN); }},
      {"(B, V)",
       [&] {
         apply_repetition_penalty(torch::randn({2, 3, 5}), prompt, 1.2);
       }},
      {"one row of ids per row",
       [&] {
         apply_repetition_penalty(logits, torch::zeros({3, 4}, torch::kLong), 1.2);
       }},
      {"outside [0, V=5)",
       [&] {
         apply_repetition_penalty(logits, torch::tensor({0, 5}), 1.2);
       }},
      {"integer token ids", [&] { apply_repetition_penalty(logits, torch::zeros({3}), 1.2); }},
      {"repetition_penalty", [&] { apply_repetition_penalty(logits, prompt, NAN); }},
      {"1-D",
       [&] {
         sequence_log_prob(model, torch::zeros({1, 3}, torch::kLong));
       }},
      {"integer token ids", [&] { sequence_log_prob(model, torch::zeros({3})); }},
      {"at least 2 tokens", [&] { sequence_log_prob(model, torch::tensor({1}, torch::kLong)); }},
      {"max_seq_len=16", [&] { sequence_log_prob(model, torch::zeros({17}, torch::kLong)); }},
      {"outside the model vocab",
       [&] {
         sequence_log_prob(model, torch::tensor({1, 12}));
       }},
      {"prompt_len must be >= 0", [&] { sequence_log_prob(model, prompt, -1); }},
      {"leaves nothing to score", [&] { sequence_log_prob(model, prompt, 2); }},
      {"n >= 1", [&] { best_of_n(model, prompt, 2, BestOfNOptions().n(0)); }},
      {"max_new_tokens >= 1", [&] { best_of_n(model, prompt, 0); }},
      {"outside the model vocab",
       [&] {
         best_of_n(model, torch::tensor({1, 12}), 2);
       }},
      {"temperature",
       [&] { best_of_n(model, prompt, 2, BestOfNOptions(), GenerateOptions().temperature(-1.0)); }},
  };
  for (const auto& [expected, call] : cases) {
    INFO("expected a ValueError mentioning \"" << expected << "\"");
    CHECK_THROWS_AS(call(), g2c::ValueError);
    CHECK_THROWS_WITH(call(), Catch::Contains(expected));
  }
}
