// Beyond module moe framework checks: the router against softmax, sort and division done row by
// row in float64; the mixture against running every expert on every token and keeping the chosen
// ones (an oracle with no dispatch at all); the balance loss against the Switch formula counted in
// a loop; float64 gradient checks of the mixture (input, gate, experts) at k 2; the parameter
// names and counts of MoETransformerLM, and Muon's partition of it; the sorted dispatch (the fast
// path) against the lesson's loop, outputs and gradients.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "g2c/core/errors.h"
#include "g2c/moe/layer.h"
#include "g2c/moe/model.h"
#include "g2c/moe/router.h"
#include "g2c/moe/sorted_dispatch.h"
#include "g2c/muon/partition.h"
#include "torch_test.h"

using g2c::moe::MoEFeedForward;
using g2c::moe::MoETransformerLM;
using g2c::moe::Router;
using g2c::testing::max_abs_diff;

TEST_CASE("router_equals_softmax_sort_and_renormalise_row_by_row", "[moe]") {
  torch::manual_seed(1);
  for (const auto& [experts, k] :
       std::vector<std::pair<std::int64_t, std::int64_t>>{{1, 1}, {4, 1}, {4, 2}, {8, 3}, {5, 5}}) {
    Router router(6, experts, k);
    router->to(torch::kDouble);
    const auto x = torch::randn({9, 6}, torch::kDouble);
    const auto [weights, indices] = router(x);
    const auto logits = (x.mm(router->gate->W) + router->gate->b).contiguous();
    for (std::int64_t n = 0; n < 9; ++n) {
      std::vector<double> p(experts);
      double total = 0.0;
      for (std::int64_t e = 0; e < experts; ++e)
        total += p[e] = std::exp(logits[n][e].item<double>());
      for (auto& value : p) value /= total;
      std::vector<std::int64_t> order(experts);
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return p[a] > p[b]; });
      double kept = 0.0;
      for (std::int64_t j = 0; j < k; ++j) kept += p[order[j]];
      for (std::int64_t j = 0; j < k; ++j) {
        INFO("E " << experts << ", k " << k << ", token " << n << ", choice " << j);
        CHECK(indices[n][j].item<std::int64_t>() == order[j]);
        CHECK(std::abs(weights[n][j].item<double>() - p[order[j]] / kept) < 1e-12);
      }
      for (std::int64_t e = 0; e < experts; ++e) {
        CHECK(std::abs(router->last_probs[n][e].item<double>() - p[e]) < 1e-12);
      }
    }
  }
}

TEST_CASE("mixture_equals_every_expert_on_every_token_masked", "[moe]") {
  torch::manual_seed(2);
  for (const std::int64_t k : {1, 2, 4}) {
    MoEFeedForward moe(8, /*num_experts=*/4, k, /*hidden_dim=*/12);
    moe->to(torch::kDouble);
    const auto x = torch::randn({3, 7, 8}, torch::kDouble);
    const auto out = moe(x);
    torch::NoGradGuard no_grad;
    const auto flat = x.reshape({-1, 8});
    const auto [weights, indices] = moe->router(flat);
    // (N, E): each token's weight for each expert, zero where it did not choose it.
    const auto dense_weights =
        torch::zeros({flat.size(0), 4}, torch::kDouble).scatter(1, indices, weights);
    auto expected = torch::zeros_like(flat);
    for (std::int64_t e = 0; e < 4; ++e) {
      expected += dense_weights.select(1, e).unsqueeze(1) * moe->experts[e](flat);
    }
    INFO("k " << k << ": largest difference " << max_abs_diff(out.reshape({-1, 8}), expected));
    CHECK(max_abs_diff(out.reshape({-1, 8}), expected) < 1e-12);
    CHECK(torch::equal(moe->last_indices, indices));
  }
}

TEST_CASE("balance_loss_equals_the_switch_formula_counted_in_a_loop", "[moe]") {
  torch::manual_seed(3);
  for (const std::int64_t k : {1, 2, 3}) {
    MoEFeedForward moe(8, /*num_experts=*/5, k);
    moe->to(torch::kDouble);
    moe(torch::randn({4, 6, 8}, torch::kDouble));
    const auto loss = moe->load_balancing_loss();
    const auto indices = moe->last_indices;
    const auto probs = moe->router->last_probs.detach();
    double expected = 0.0;
    for (std::int64_t e = 0; e < 5; ++e) {
      double count = 0.0, probability = 0.0;
      for (std::int64_t n = 0; n < indices.size(0); ++n) {
        for (std::int64_t j = 0; j < k; ++j) count += indices[n][j].item<std::int64_t>() == e;
        probability += probs[n][e].item<double>();
      }
      expected += (count / static_cast<double>(indices.numel())) *
                  (probability / static_cast<double>(indices.size(0)));
    }
    expected *= 5.0;
    INFO("k " << k);
    CHECK(std::abs(loss.item<double>() - expected) < 1e-12);
  }
}

TEST_CASE("mixture_gradients_match_finite_differences", "[moe]") {
  // k 2 in float64: the input, the gate (through the renormalised weights) and an expert's
  // weights. The routing must not flip under the ±1e-6 nudges: with random data it does not.
  torch::manual_seed(4);
  MoEFeedForward moe(4, /*num_experts=*/3, /*top_k=*/2, /*hidden_dim=*/6);
  moe->to(torch::kDouble);
  const auto x = torch::randn({5, 4}, torch::kDouble).requires_grad_(true);
  const auto target = torch::randn({5, 4}, torch::kDouble);
  g2c::testing::check_gradients(
      [&] { return (moe(x) - target).pow(2).sum(); },
      {x, moe->router->gate->W, moe->router->gate->b, moe->experts[0]->fc1->W},
      /*atol=*/1e-6);
  g2c::testing::check_gradients(
      [&] {
        moe(x);
        return moe->load_balancing_loss();
      },
      {moe->router->gate->W}, /*atol=*/1e-6);
}

TEST_CASE("moe_model_names_counts_and_muon_partition", "[moe]") {
  MoETransformerLM model(/*vocab_size=*/20, /*embedding_dim=*/8, /*num_layers=*/2,
                         /*num_heads=*/2, /*max_seq_len=*/12, /*num_experts=*/3, /*top_k=*/1);
  std::vector<std::string> names;
  for (const auto& item : model->named_parameters()) names.push_back(item.key());
  CHECK(names.front() == "token_embed.weight");
  CHECK(names[1] == "pos_embed.weight");
  CHECK(std::find(names.begin(), names.end(), "blocks.1.moe_ffn.experts.2.fc2.W") != names.end());
  CHECK(std::find(names.begin(), names.end(), "blocks.0.moe_ffn.router.gate.W") != names.end());
  CHECK(names.back() == "head.bias");
  // Per block: 4 attention projections, 3 experts × 2 layers, the gate: 11 matrices for Muon.
  const auto groups = g2c::muon::muon_partition(*model);
  CHECK(groups.muon.size() == 2 * 11);
  // 8·D² + 5·D per expert at D 8: 552; total − active = L (E − k) · 552.
  CHECK(model->total_parameter_count() - model->active_parameter_count() == 2 * 2 * 552);
  CHECK_THROWS_AS(model(torch::zeros({1, 13}, torch::kLong)), g2c::ValueError);
  CHECK_THROWS_AS(model(torch::full({1, 3}, 20, torch::kLong)), g2c::ValueError);
  CHECK_THROWS_AS(MoETransformerLM(20, 8, 2, 3, 12, 3, 1), g2c::ValueError);  // 3 ∤ 8
  CHECK_THROWS_AS(MoETransformerLM(20, 8, 2, 2, 12, 3, 4), g2c::ValueError);  // k > E
}

TEST_CASE("sorted_dispatch_equals_the_lessons_loop", "[moe]") {
  // The fast path against the reference loop on the same weights, float64: outputs, indices and
  // every parameter's and the input's gradient, at k 1, 2 and E (every expert), with an expert
  // that no token chooses (its gate bias far below the others).
  torch::manual_seed(5);
  for (const std::int64_t k : {1, 2, 4}) {
    MoEFeedForward loop(6, /*num_experts=*/4, k, /*hidden_dim=*/10);
    auto sorted = g2c::moe::sorted_moe_feed_forward(6, 4, k, 10);
    loop->to(torch::kDouble);
    sorted->to(torch::kDouble);
    {
      torch::NoGradGuard no_grad;
      if (k < 4) loop->router->gate->b[3].fill_(-50.0);  // expert 3: chosen by nobody
      const auto from = loop->parameters();
      const auto to = sorted->parameters();
      REQUIRE(from.size() == to.size());
      for (std::size_t i = 0; i < from.size(); ++i) to[i].copy_(from[i]);
    }
    const auto x = torch::randn({2, 9, 6}, torch::kDouble);
    const auto x_loop = x.clone().requires_grad_(true);
    const auto x_sorted = x.clone().requires_grad_(true);
    const auto out_loop = loop(x_loop);
    const auto out_sorted = sorted(x_sorted);
    INFO("k " << k);
    CHECK(max_abs_diff(out_loop, out_sorted) < 1e-12);
    CHECK(torch::equal(loop->last_indices, sorted->last_indices));
    const auto target = torch::randn_like(x);
    ((out_loop - target).pow(2).sum() + loop->load_balancing_loss()).backward();
    ((out_sorted - target).pow(2).sum() + sorted->load_balancing_loss()).backward();
    CHECK(max_abs_diff(x_loop.grad(), x_sorted.grad()) < 1e-12);
    const auto a = loop->parameters();
    const auto b = sorted->parameters();
    for (std::size_t i = 0; i < a.size(); ++i) {
      INFO("parameter " << i);
      CHECK(a[i].grad().defined() == b[i].grad().defined());
      if (a[i].grad().defined() && b[i].grad().defined()) {
        CHECK(max_abs_diff(a[i].grad(), b[i].grad()) < 1e-12);
      }
    }
  }
  // The model-level switch builds the same parameters, in the same order and names.
  MoETransformerLM plain(20, 8, 2, 2, 12, 3, 1);
  MoETransformerLM fast(20, 8, 2, 2, 12, 3, 1, /*hidden_dim=*/0, /*sorted_dispatch=*/true);
  const auto plain_names = plain->named_parameters().keys();
  CHECK(plain_names == fast->named_parameters().keys());
  CHECK(dynamic_cast<g2c::moe::SortedMoEFeedForwardImpl*>(fast->blocks[0]->moe_ffn.get()) !=
        nullptr);
}
