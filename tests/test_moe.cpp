// Beyond module moe course tests: mixture of experts, one for one with the Python edition's
// tests/test_moe.py, plus the additions listed in tests/course_tests.txt. Tests tagged [clean]
// pass on the scaffold: construction, validation and the parameter counts are provided.
//
// Suggested order: Router::forward (router_*), then MoEFeedForward::forward (moe_forward_*, the
// gradient tests), then MoEFeedForward::load_balancing_loss (balance_loss_*), in g2c/moe/. The
// experts are module 09's FeedForward and the blocks use module 08's attention, so the forward
// tests need those modules too (yours, or `-DG2C_SOLUTIONS=08,09,moe`).
//
// Python's torch.allclose(a, b, atol=x) means |a - b| <= x + 1e-5·|b|; py_allclose() keeps that
// meaning.
#include <cstdint>
#include <set>
#include <vector>

#include <torch/torch.h>

#include "g2c/core/errors.h"
#include "g2c/moe/layer.h"
#include "g2c/moe/model.h"
#include "g2c/moe/router.h"
#include "g2c/transformer/transformer_lm.h"
#include "torch_test.h"

using g2c::moe::MoEBlock;
using g2c::moe::MoEFeedForward;
using g2c::moe::MoETransformerLM;
using g2c::moe::Router;
using g2c::testing::max_abs_diff;
using g2c::testing::py_allclose;

namespace {

constexpr std::int64_t D = 16;

std::int64_t parameter_total(const torch::nn::Module& module) {
  std::int64_t total = 0;
  for (const auto& p : module.parameters()) total += p.numel();
  return total;
}

/// Sets the router's last distribution and the layer's last indices by hand (Python's
/// _rig_routing), so the balance loss can be checked on routings chosen for the test.
void rig_routing(MoEFeedForward& moe, const torch::Tensor& probs, const torch::Tensor& indices) {
  moe->router->last_probs = probs;
  moe->last_indices = indices;
}

}  // namespace

// --- Construction and accounting: green from the start ------------------------------------------

TEST_CASE("router_construction", "[clean]") {
  Router router(D, /*num_experts=*/4, /*top_k=*/2);
  CHECK(router->num_experts == 4);
  CHECK(router->top_k == 2);
  CHECK_FALSE(router->last_probs.defined());
}

TEST_CASE("router_rejects_bad_top_k", "[clean]") {
  for (const std::int64_t bad_k : {0, 5, -1}) {
    DYNAMIC_SECTION("top_k " << bad_k) {
      CHECK_THROWS_AS(Router(D, 4, bad_k), g2c::ValueError);
    }
  }
}

TEST_CASE("expert_parameter_count_matches_ffn_formula", "[clean]") {
  // One expert is one module 09 FeedForward: 8·D² weights and 5·D biases.
  MoEFeedForward moe(D, /*num_experts=*/3, /*top_k=*/1);
  CHECK(moe->expert_parameter_count() == 8 * D * D + 5 * D);
}

TEST_CASE("moe_layer_parameter_count", "[clean]") {
  MoEFeedForward moe(D, 4, 2);
  const std::int64_t expected = 4 * (8 * D * D + 5 * D) + (D * 4 + 4);  // experts + gate
  CHECK(parameter_total(*moe) == expected);
}

TEST_CASE("total_vs_active_parameter_split", "[clean]") {
  MoETransformerLM model(/*vocab_size=*/32, D, /*num_layers=*/2, /*num_heads=*/2,
                         /*max_seq_len=*/16, /*num_experts=*/4, /*top_k=*/2);
  const auto total = model->total_parameter_count();
  const auto active = model->active_parameter_count();
  const auto per_expert = model->blocks[0]->moe_ffn->expert_parameter_count();
  CHECK(total - active == 2 * (4 - 2) * per_expert);
  CHECK(active < total);
}

TEST_CASE("k1_active_count_matches_dense_plus_routers", "[clean]") {
  // The exercise's E 8, k 1 comparison differs from the dense model only by its routers.
  g2c::transformer::TransformerLM dense(/*vocab_size=*/32, D, /*num_layers=*/2, /*num_heads=*/2,
                                        /*max_seq_len=*/16);
  MoETransformerLM moe(32, D, 2, 2, 16, /*num_experts=*/8, /*top_k=*/1);
  const std::int64_t router_count = 2 * (D * 8 + 8);
  CHECK(moe->active_parameter_count() == parameter_total(*dense) + router_count);
}

TEST_CASE("balance_loss_before_forward_raises", "[clean]") {
  MoEFeedForward moe(D, 4, 2);
  bool raised = false;
  try {
    moe->load_balancing_loss();
  } catch (const g2c::RuntimeError&) {
    raised = true;
  } catch (const g2c::NotImplementedError&) {
    raised = true;
  }
  INFO(
      "before any forward there is no routing to balance: throw g2c::RuntimeError(\"run "
      "forward() before load_balancing_loss()\") when router->last_probs or last_indices is "
      "undefined");
  CHECK(raised);
}

// --- Router::forward ----------------------------------------------------------------------------

TEST_CASE("router_output_shapes_and_ranges") {
  torch::manual_seed(0);
  Router router(D, 6, 3);
  const auto [weights, indices] = router(torch::randn({10, D}));
  CHECK(weights.sizes() == torch::IntArrayRef({10, 3}));
  CHECK(indices.sizes() == torch::IntArrayRef({10, 3}));
  CHECK(indices.min().item<std::int64_t>() >= 0);
  CHECK(indices.max().item<std::int64_t>() < 6);
  // The top k of a softmax never repeats an expert within a row.
  for (std::int64_t row = 0; row < indices.size(0); ++row) {
    const auto values = indices[row];
    std::set<std::int64_t> distinct;
    for (std::int64_t j = 0; j < values.numel(); ++j)
      distinct.insert(values[j].item<std::int64_t>());
    INFO("row " << row << ": the k indices must be distinct experts (torch::topk of one row)");
    CHECK(distinct.size() == 3);
  }
}

TEST_CASE("router_weights_renormalized") {
  torch::manual_seed(1);
  Router router(D, 6, 2);
  const auto weights = router(torch::randn({7, D})).weights;
  INFO(
      "each row of weights must sum to 1: divide the top-k probabilities by their row's sum "
      "(keepdim, so (N, k) / (N, 1) broadcasts)");
  CHECK(py_allclose(weights.sum(-1), torch::ones({7}), 1e-5));
}

TEST_CASE("router_stores_full_distribution_attached") {
  torch::manual_seed(2);
  Router router(D, 4, 2);
  router(torch::randn({5, D}));
  INFO(
      "last_probs is the softmax over all E experts, (N, E), kept as computed: not detached, "
      "not the top-k columns only");
  REQUIRE(router->last_probs.defined());
  CHECK(router->last_probs.sizes() == torch::IntArrayRef({5, 4}));
  CHECK(router->last_probs.requires_grad());
  CHECK(py_allclose(router->last_probs.sum(-1), torch::ones({5}), 1e-5));
}

// --- MoEFeedForward::forward --------------------------------------------------------------------

TEST_CASE("moe_forward_shape") {
  torch::manual_seed(3);
  MoEFeedForward moe(D, 4, 2);
  const auto x = torch::randn({2, 5, D});
  const auto out = moe(x);
  CHECK(out.sizes() == x.sizes());
  INFO(
      "forward keeps the router's indices, (N, k) for the N = B·T flattened tokens, in "
      "last_indices");
  REQUIRE(moe->last_indices.defined());
  CHECK(moe->last_indices.sizes() == torch::IntArrayRef({10, 2}));
}

TEST_CASE("moe_e1_k1_matches_dense") {
  // With one expert and k = 1, the mixture is module 09's FeedForward, exactly.
  torch::manual_seed(4);
  MoEFeedForward moe(D, 1, 1);
  auto ffn = moe->experts[0];
  const auto x = torch::randn({2, 5, D});
  INFO("one expert with weight 1 must give that expert's output: every token reaches it once");
  CHECK(py_allclose(moe(x), ffn(x), 1e-5));
}

TEST_CASE("moe_forward_equals_weighted_sum_of_chosen_experts") {
  // Token by token: out_n = Σ_j weights[n, j] · experts[indices[n, j]](x_n).
  torch::manual_seed(11);
  MoEFeedForward moe(D, 4, 2);
  const auto x = torch::randn({3, 4, D});
  const auto out = moe(x).reshape({-1, D});
  const auto flat = x.reshape({-1, D});
  torch::NoGradGuard no_grad;
  const auto routed = moe->router(flat);
  auto expected = torch::zeros_like(flat);
  for (std::int64_t n = 0; n < flat.size(0); ++n) {
    for (std::int64_t j = 0; j < 2; ++j) {
      const auto e = routed.indices[n][j].item<std::int64_t>();
      expected[n] += routed.weights[n][j] * moe->experts[e](flat[n].unsqueeze(0))[0];
    }
  }
  INFO(
      "each token's output is the sum over its k chosen experts of its weight for that expert "
      "times the expert's output — each expert's tokens scaled by their own weight column, "
      "added at their own rows; largest difference "
      << max_abs_diff(out.detach(), expected.detach()));
  CHECK(py_allclose(out.detach(), expected.detach(), 1e-5));
}

TEST_CASE("moe_gradients_reach_only_selected_experts") {
  torch::manual_seed(5);
  MoEFeedForward moe(D, 2, 1);
  {
    torch::NoGradGuard no_grad;  // rig the gate so that expert 0 always wins
    moe->router->gate->W.zero_();
    moe->router->gate->b.copy_(torch::tensor({5.0f, -5.0f}));
  }
  moe(torch::randn({3, 4, D})).sum().backward();
  bool expert0_learns = false;
  for (const auto& p : moe->experts[0]->parameters()) {
    expert0_learns =
        expert0_learns || (p.grad().defined() && p.grad().abs().sum().item<double>() > 0);
  }
  INFO(
      "only the chosen expert computes, so only it gets gradient: run each expert on its own "
      "tokens, and skip an expert no token chose");
  CHECK(expert0_learns);
  for (const auto& p : moe->experts[1]->parameters()) {
    CHECK((!p.grad().defined() || p.grad().abs().sum().item<double>() == 0.0));
  }
}

TEST_CASE("renormalized_k1_task_gradient_to_router_effectively_vanishes") {
  // A single surviving weight is 1, whatever the router's confidence.
  torch::manual_seed(10);
  MoEFeedForward moe(D, 4, 1);
  moe(torch::randn({3, 5, D})).square().mean().backward();
  const auto& grad = moe->router->gate->W.grad();
  INFO(
      "with k = 1 the renormalised weight is exactly 1, so the task loss sends the gate no "
      "gradient; the gate must still be in the graph (the weights multiply the outputs)");
  REQUIRE(grad.defined());
  CHECK(grad.abs().sum().item<double>() < 1e-6);
}

TEST_CASE("k2_task_gradient_reaches_router_through_relative_weights") {
  torch::manual_seed(10);
  MoEFeedForward moe(D, 4, 2);
  moe(torch::randn({3, 5, D})).square().mean().backward();
  const auto& grad = moe->router->gate->W.grad();
  INFO(
      "with k = 2 the two renormalised weights depend on the gate: scale each expert's output by "
      "its weight (not detached), and the task loss trains the router");
  REQUIRE(grad.defined());
  CHECK(grad.abs().sum().item<double>() > 1e-5);
}

// --- load_balancing_loss ------------------------------------------------------------------------

TEST_CASE("balance_loss_uniform_routing_is_one") {
  MoEFeedForward moe(D, 4, 1);
  rig_routing(moe, torch::full({12, 4}, 0.25), torch::arange(12).remainder(4).reshape({12, 1}));
  INFO("uniform probabilities and assignments: E · Σ (1/E)(1/E) = 1");
  CHECK(py_allclose(moe->load_balancing_loss(), torch::tensor(1.0f), 1e-5));
}

TEST_CASE("balance_loss_collapsed_routing_is_num_experts") {
  MoEFeedForward moe(D, 4, 1);
  auto probs = torch::zeros({12, 4});
  probs.select(1, 0).fill_(1.0);
  rig_routing(moe, probs, torch::zeros({12, 1}, torch::kLong));
  INFO("everything on expert 0: E · 1 · 1 = E = 4");
  CHECK(py_allclose(moe->load_balancing_loss(), torch::tensor(4.0f), 1e-5));
}

TEST_CASE("balance_loss_counts_assignments_not_probabilities") {
  // Every token leans 0.7 towards expert 0 and is sent there: f = (1, 0, 0, 0), P = (0.7, 0.1,
  // 0.1, 0.1), so the loss is 4 · 0.7 = 2.8. Shares taken from the probabilities would give
  // 4 · (0.49 + 3 · 0.01) = 2.08.
  MoEFeedForward moe(D, 4, 1);
  const auto probs = torch::tensor({0.7f, 0.1f, 0.1f, 0.1f}).repeat({12, 1});
  rig_routing(moe, probs, torch::zeros({12, 1}, torch::kLong));
  const auto loss = moe->load_balancing_loss();
  INFO("loss " << loss.item<double>()
               << ", expected 2.8: f_e is the share of the integer assignments in last_indices "
                  "that went to e, not the mean probability (that is P_e)");
  CHECK(py_allclose(loss, torch::tensor(2.8f), 1e-5));
}

TEST_CASE("balance_loss_shares_are_over_all_n_k_assignments") {
  // k = 2, four tokens each sent to experts 0 and 1: of the 8 assignments, half go to each, so
  // f = (0.5, 0.5, 0, 0); with P = (0.4, 0.4, 0.1, 0.1) the loss is 4 · (0.2 + 0.2) = 1.6.
  MoEFeedForward moe(D, 4, 2);
  const auto probs = torch::tensor({0.4f, 0.4f, 0.1f, 0.1f}).repeat({4, 1});
  const auto indices = torch::tensor({0L, 1L}).repeat({4, 1});
  rig_routing(moe, probs, indices);
  const auto loss = moe->load_balancing_loss();
  INFO("loss " << loss.item<double>()
               << ", expected 1.6: divide the counts by all N·k assignments (here 8), not by the "
                  "N tokens, so the shares f sum to 1");
  CHECK(py_allclose(loss, torch::tensor(1.6f), 1e-5));
}

TEST_CASE("balance_loss_gradient_reaches_the_gate") {
  torch::manual_seed(6);
  MoEFeedForward moe(D, 4, 2);
  const auto routed = moe->router(torch::randn({9, D}));
  moe->last_indices = routed.indices;
  moe->load_balancing_loss().backward();
  const auto& grad = moe->router->gate->W.grad();
  INFO(
      "P_e is the mean of router->last_probs, still attached: the loss must reach the gate "
      "through it (f, from integer counts, has no gradient)");
  REQUIRE(grad.defined());
  CHECK(grad.abs().sum().item<double>() > 0.0);
}

// --- The full model -----------------------------------------------------------------------------

TEST_CASE("moe_transformer_lm_forward_and_balance") {
  torch::manual_seed(7);
  MoETransformerLM model(/*vocab_size=*/32, D, /*num_layers=*/2, /*num_heads=*/2,
                         /*max_seq_len=*/16, /*num_experts=*/4, /*top_k=*/2);
  const auto ids = torch::randint(0, 32, {2, 10}, torch::kLong);
  const auto logits = model(ids);
  CHECK(logits.sizes() == torch::IntArrayRef({2, 10, 32}));
  const auto balance = model->load_balancing_loss();
  CHECK(balance.dim() == 0);
  CHECK(torch::isfinite(balance).item<bool>());
  CHECK(balance.item<double>() > 0.0);
}

TEST_CASE("moe_block_forward_shape") {
  // The block puts the mixture in module 09's residual structure.
  torch::manual_seed(8);
  MoEBlock block(D, /*num_heads=*/2, /*num_experts=*/2, /*top_k=*/1);
  const auto x = torch::randn({1, 3, D});
  CHECK(block(x).sizes() == x.sizes());
}
