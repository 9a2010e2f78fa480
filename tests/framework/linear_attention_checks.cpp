// Beyond module linear_attention framework checks: the parallel form against the lesson's sum
// written as loops over batch, head, position and past position in float64; the recurrent form
// against the parallel one position by position (float64, long sequences, a different decay per
// head); both forms' gradients against finite differences; the hybrid model with every layer
// "full" against module 09's TransformerLM given the same parameters; forward_step against
// forward for every pattern kind, with its state's bytes against the formula; the checks' messages.
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "g2c/core/errors.h"
#include "g2c/linear_attention/attention.h"
#include "g2c/linear_attention/hybrid.h"
#include "g2c/transformer/transformer_lm.h"
#include "torch_test.h"

using g2c::linear_attention::EPS;
using g2c::linear_attention::feature_map;
using g2c::linear_attention::HybridTransformerLM;
using g2c::linear_attention::LinearAttention;
using g2c::linear_attention::LinearAttentionState;
using g2c::testing::max_abs_diff;
using g2c::testing::numeric_gradient;
using Pattern = std::vector<std::string>;

namespace {

LinearAttention double_layer(std::int64_t dim, std::int64_t heads,
                             const std::vector<double>& gamma_logits) {
  LinearAttention la(dim, heads);
  la->to(torch::kDouble);
  torch::NoGradGuard no_grad;
  la->gamma_logit.copy_(torch::tensor(gamma_logits, torch::kDouble));
  return la;
}

torch::Tensor run_recurrent(LinearAttention& la, const torch::Tensor& x) {
  std::optional<LinearAttentionState> state;
  std::vector<torch::Tensor> outs;
  for (std::int64_t t = 0; t < x.size(1); ++t) {
    auto [out, next] = la->step(x.select(1, t), state);
    outs.push_back(out);
    state = next;
  }
  return torch::stack(outs, 1);
}

}  // namespace

TEST_CASE("linear_attention_forward_equals_the_sum_over_the_past_in_loops", "[linear_attention]") {
  torch::manual_seed(11);
  const std::int64_t dim = 8, heads = 2, d = 4, batch = 2, length = 6;
  auto la = double_layer(dim, heads, {-0.5, 2.0});
  const auto x = torch::randn({batch, length, dim}, torch::kDouble);
  const auto actual = la(x);

  const auto q = feature_map(la->q_proj(x));  // (B, T, D), head h in columns h·d …
  const auto k = feature_map(la->k_proj(x));
  const auto v = la->v_proj(x);
  const auto gamma = la->decay();
  auto mixed = torch::zeros({batch, length, dim}, torch::kDouble);
  for (std::int64_t b = 0; b < batch; ++b) {
    for (std::int64_t h = 0; h < heads; ++h) {
      const double g = gamma[h].item<double>();
      for (std::int64_t t = 0; t < length; ++t) {
        std::vector<double> numerator(d, 0.0);
        double denominator = 0.0;
        for (std::int64_t i = 0; i <= t; ++i) {
          double score = 0.0;
          for (std::int64_t c = 0; c < d; ++c) {
            score += q[b][t][h * d + c].item<double>() * k[b][i][h * d + c].item<double>();
          }
          const double weight = std::pow(g, static_cast<double>(t - i)) * score;
          denominator += weight;
          for (std::int64_t c = 0; c < d; ++c)
            numerator[c] += weight * v[b][i][h * d + c].item<double>();
        }
        for (std::int64_t c = 0; c < d; ++c)
          mixed[b][t][h * d + c] = numerator[c] / (denominator + EPS);
      }
    }
  }
  const auto expected = la->out_proj(mixed);
  CHECK(max_abs_diff(actual, expected) < 1e-12);
}

TEST_CASE("linear_attention_step_equals_forward_position_by_position", "[linear_attention]") {
  torch::manual_seed(12);
  for (const auto& logits : std::vector<std::vector<double>>{
           {4.6, 4.6, 4.6, 4.6}, {0.0, 0.0, 0.0, 0.0}, {-3.0, -1.0, 1.0, 30.0}}) {
    auto la = double_layer(32, 4, logits);
    const auto x = torch::randn({3, 96, 32}, torch::kDouble);
    const auto parallel = la(x);
    const auto recurrent = run_recurrent(la, x);
    for (std::int64_t t = 0; t < 96; t += 19) {
      INFO("gamma logits " << logits[0] << " … " << logits[3] << ", position " << t);
      CHECK(max_abs_diff(parallel.select(1, t), recurrent.select(1, t)) < 1e-10);
    }
    CHECK(max_abs_diff(parallel, recurrent) < 1e-10);
  }
}

TEST_CASE("linear_attention_gradients_match_finite_differences", "[linear_attention]") {
  torch::manual_seed(13);
  auto la = double_layer(8, 2, {0.3, 1.5});
  const auto x = torch::randn({1, 5, 8}, torch::kDouble).requires_grad_(true);
  const auto weights = torch::randn({1, 5, 8}, torch::kDouble);
  const auto parallel_loss = [&] { return (la(x) * weights).sum(); };
  const auto recurrent_loss = [&] { return (run_recurrent(la, x) * weights).sum(); };
  for (const auto* name : {"parallel", "recurrent"}) {
    const bool parallel = std::string(name) == "parallel";
    const auto loss_fn = [&] { return parallel ? parallel_loss() : recurrent_loss(); };
    la->zero_grad();
    x.mutable_grad() = torch::Tensor();
    loss_fn().backward();
    INFO(name << " form");
    const auto x_numeric = numeric_gradient(loss_fn, x.detach());
    CHECK(max_abs_diff(x.grad(), x_numeric) < 1e-7);
    const auto gamma_numeric = numeric_gradient(loss_fn, la->gamma_logit.detach());
    CHECK(max_abs_diff(la->gamma_logit.grad(), gamma_numeric) < 1e-7);
    const auto key_numeric = numeric_gradient(loss_fn, la->k_proj->W.detach());
    CHECK(max_abs_diff(la->k_proj->W.grad(), key_numeric) < 1e-7);
  }
}

TEST_CASE("linear_attention_refuses_bad_shapes_by_name", "[linear_attention]") {
  LinearAttention la(16, 4);
  CHECK_THROWS_WITH(la(torch::randn({4, 16})), Catch::Contains("(B, T, D=16)"));
  CHECK_THROWS_WITH(la->step(torch::randn({2, 1, 16})), Catch::Contains("(B, D=16)"));
  auto state = la->init_state(3);
  CHECK_THROWS_WITH(la->step(torch::randn({2, 16}), state), Catch::Contains("init_state(B)"));
  CHECK_THROWS_WITH(LinearAttention(16, 5), Catch::Contains("does not divide"));
  CHECK_THROWS_WITH(HybridTransformerLM(32, 16, Pattern{"linear", "sparse"}, 4, 8),
                    Catch::Contains("entry 1") && Catch::Contains("\"sparse\""));
}

TEST_CASE("all_full_hybrid_is_module_09s_transformer", "[linear_attention]") {
  // ["full"] × N is module 09's architecture: the same parameter names and shapes, and with the
  // same values the same logits.
  torch::manual_seed(14);
  HybridTransformerLM hybrid(40, 16, Pattern(3, "full"), 4, 12);
  g2c::transformer::TransformerLM dense(40, 16, 3, 4, 12);
  const auto hybrid_parameters = hybrid->named_parameters();
  const auto dense_parameters = dense->named_parameters();
  REQUIRE(hybrid_parameters.size() == dense_parameters.size());
  {
    torch::NoGradGuard no_grad;
    for (const auto& entry : dense_parameters) {
      INFO(entry.key());
      REQUIRE(hybrid_parameters.contains(entry.key()));
      REQUIRE(hybrid_parameters[entry.key()].sizes() == entry.value().sizes());
      hybrid_parameters[entry.key()].copy_(entry.value());
    }
  }
  const auto ids = torch::randint(0, 40, {2, 12});
  CHECK(max_abs_diff(hybrid(ids), dense(ids)) < 1e-6);
}

TEST_CASE("hybrid_forward_step_equals_forward_and_its_state_bytes_follow_the_formula",
          "[linear_attention]") {
  torch::manual_seed(15);
  const std::int64_t vocab = 30, dim = 16, heads = 4, d = 4, context = 10;
  for (const auto& pattern : std::vector<Pattern>{
           {"linear"}, {"full"}, {"linear", "linear", "linear", "full"}, {"full", "linear"}}) {
    HybridTransformerLM model(vocab, dim, pattern, heads, context);
    model->to(torch::kDouble);
    const auto ids = torch::randint(0, vocab, {2, context});
    const auto whole = model(ids);  // (B, T, V)
    auto state = model->empty_state();
    std::int64_t full_layers = 0;
    for (const auto& kind : pattern) full_layers += kind == "full";
    const std::int64_t linear_layers = static_cast<std::int64_t>(pattern.size()) - full_layers;
    for (std::int64_t t = 0; t < context; ++t) {
      const auto logits = model->forward_step(ids.slice(1, t, t + 1), state);  // (B, 1, V)
      INFO("pattern of " << pattern.size() << " layers, " << full_layers << " full; position "
                         << t);
      CHECK(max_abs_diff(logits.squeeze(1), whole.select(1, t)) < 1e-10);
      // Per sequence: a full layer caches K and V, 2·(t+1)·D numbers; a linear layer holds
      // H·d² + H·d, whatever t is. float64: 8 bytes each.
      const std::int64_t expected =
          2 * (full_layers * 2 * (t + 1) * dim + linear_layers * (heads * d * d + heads * d)) * 8;
      CHECK(state.bytes() == expected);
    }
    CHECK(state.position == context);
    CHECK_THROWS_WITH(model->forward_step(ids.slice(1, 0, 1), state),
                      Catch::Contains("max_seq_len is 10"));
  }
}
