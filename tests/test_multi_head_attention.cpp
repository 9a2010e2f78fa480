// Module 08 course tests: MultiHeadAttention, one for one with the Python edition's
// tests/test_multi_head_attention.py (30 tests), plus two of this edition (tests/course_tests.txt
// says which): attention_weights_match_hand_computation, and
// multi_head_attention_matches_cpu_on_accelerator, run where CUDA or MPS exists. Tests tagged
// [clean] pass on the scaffold.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include <torch/torch.h>

#include "g2c/attention/multi_head.h"
#include "g2c/core/errors.h"
#include "torch_test.h"

using g2c::attention::LayerKVCache;
using g2c::attention::MultiHeadAttention;
using g2c::attention::MultiHeadAttentionImpl;
using g2c::testing::close;
using g2c::testing::max_abs_diff;
using torch::indexing::Slice;

namespace {

std::int64_t parameter_count(MultiHeadAttention& attention) {
  std::int64_t total = 0;
  for (const auto& p : attention->parameters()) total += p.numel();
  return total;
}

/// causal_mask takes the device it is built on, with no default (see module 07's tests).
template <typename Attention>
constexpr bool mask_needs_device = !requires(std::int64_t n) {
  Attention::causal_mask(n);
};
static_assert(mask_needs_device<MultiHeadAttentionImpl>, "causal_mask(T) must not compile");

}  // namespace

TEST_CASE("construction", "[clean]") {
  MultiHeadAttention attention(8, 2);
  CHECK(attention->embedding_dim == 8);
}

TEST_CASE("construction_stores_args", "[clean]") {
  MultiHeadAttention attention(12, 3);
  CHECK(attention->embedding_dim == 12);
  CHECK(attention->num_heads == 3);
  CHECK(attention->head_dim == 4);
  CHECK(attention->causal);
}

TEST_CASE("construction_non_causal", "[clean]") {
  MultiHeadAttention attention(8, 2, /*causal=*/false);
  CHECK_FALSE(attention->causal);
}

TEST_CASE("construction_indivisible_raises", "[clean]") {
  CHECK_THROWS_AS(MultiHeadAttention(8, 3), g2c::ValueError);
  CHECK_THROWS_WITH(MultiHeadAttention(8, 3), Catch::Contains("divisible"));
}

TEST_CASE("construction_projection_shapes", "[clean]") {
  MultiHeadAttention attention(8, 4);
  for (const auto& projection :
       {attention->q_proj, attention->k_proj, attention->v_proj, attention->out_proj}) {
    CHECK(projection->W.sizes() == torch::IntArrayRef({8, 8}));
  }
}

TEST_CASE("parameters_count", "[clean]") {
  MultiHeadAttention attention(8, 2);
  CHECK(attention->parameters().size() == 8);
}

TEST_CASE("parameters_independent_of_head_count", "[clean]") {
  MultiHeadAttention one_head(64, 1);
  MultiHeadAttention eight_heads(64, 8);
  CHECK(parameter_count(one_head) == parameter_count(eight_heads));
}

TEST_CASE("causal_mask_shape", "[clean]") {
  CHECK(MultiHeadAttentionImpl::causal_mask(5, torch::kCPU).sizes() == torch::IntArrayRef({5, 5}));
}

TEST_CASE("causal_mask_dtype", "[clean]") {
  CHECK(MultiHeadAttentionImpl::causal_mask(5, torch::kCPU).scalar_type() == torch::kBool);
}

TEST_CASE("causal_mask_upper_triangular", "[clean]") {
  const auto expected = torch::tensor({{false, true, true, true},
                                       {false, false, true, true},
                                       {false, false, false, true},
                                       {false, false, false, false}});
  CHECK(torch::equal(MultiHeadAttentionImpl::causal_mask(4, torch::kCPU), expected));
}

TEST_CASE("causal_mask_diagonal_is_unmasked", "[clean]") {
  CHECK_FALSE(MultiHeadAttentionImpl::causal_mask(6, torch::kCPU).diagonal().any().item<bool>());
}

TEST_CASE("forward_shape") {
  MultiHeadAttention attention(8, 2);
  CHECK(attention(torch::randn({2, 5, 8})).sizes() == torch::IntArrayRef({2, 5, 8}));
}

TEST_CASE("forward_shape_single_batch") {
  MultiHeadAttention attention(12, 3);
  CHECK(attention(torch::randn({1, 4, 12})).sizes() == torch::IntArrayRef({1, 4, 12}));
}

TEST_CASE("forward_shape_single_token") {
  INFO("a length-1 sequence still works: the one position attends to itself in every head");
  MultiHeadAttention attention(8, 4);
  CHECK(attention(torch::randn({2, 1, 8})).sizes() == torch::IntArrayRef({2, 1, 8}));
}

TEST_CASE("forward_shape_one_head") {
  INFO("H = 1 is the single-head layer: the head split is a no-op");
  MultiHeadAttention attention(8, 1);
  CHECK(attention(torch::randn({2, 4, 8})).sizes() == torch::IntArrayRef({2, 4, 8}));
}

TEST_CASE("forward_routes_gradients") {
  INFO("a backward pass must give every parameter (q, k, v and out projections) a finite grad");
  MultiHeadAttention attention(8, 2);
  attention(torch::randn({2, 3, 8})).sum().backward();
  for (const auto& parameter : attention->named_parameters()) {
    INFO("parameter " << parameter.key());
    REQUIRE(parameter.value().grad().defined());
    CHECK(torch::isfinite(parameter.value().grad()).all().item<bool>());
  }
}

TEST_CASE("forward_causality") {
  torch::manual_seed(0);
  MultiHeadAttention attention(8, 4, /*causal=*/true);
  const auto x = torch::randn({1, 5, 8});
  auto changed = x.clone();
  changed[0][3] = torch::randn({8});  // change position 3 only
  const auto before = attention(x);
  const auto after = attention(changed);
  {
    INFO(
        "causal: earlier outputs must not change when a later token changes — in no head may "
        "positions 0-2 see position 3 (mask every head's scores with -inf before the softmax)");
    CHECK(close(after.index({0, Slice(0, 3)}), before.index({0, Slice(0, 3)}), 1e-6));
  }
  {
    INFO("positions 3 and 4 see position 3, so their outputs must change");
    CHECK(max_abs_diff(after.index({0, Slice(3, 5)}), before.index({0, Slice(3, 5)})) > 1e-4);
  }
}

TEST_CASE("forward_no_causal_sees_future") {
  torch::manual_seed(0);
  MultiHeadAttention attention(8, 2, /*causal=*/false);
  const auto x = torch::randn({1, 5, 8});
  auto changed = x.clone();
  changed[0][3] = torch::randn({8});
  INFO(
      "non-causal: every position sees every other, so output 0 must change when token 3 does "
      "(apply the mask only when causal is true)");
  CHECK(max_abs_diff(attention(changed)[0][0], attention(x)[0][0]) > 1e-5);
}

TEST_CASE("forward_cached_matches_full_forward") {
  torch::manual_seed(0);
  MultiHeadAttention attention(8, 2, /*causal=*/true);
  const auto x = torch::randn({2, 5, 8});
  const auto full = attention(x);
  LayerKVCache cache;
  std::vector<torch::Tensor> steps;
  for (std::int64_t t = 0; t < 5; ++t)
    steps.push_back(attention->forward_cached(x.index({Slice(), Slice(t, t + 1)}), cache));
  INFO(
      "feeding the tokens one at a time through forward_cached (provided) must give forward's "
      "rows: a mismatch means forward is not causal, or not scaled by √head_dim");
  CHECK(close(torch::cat(steps, /*dim=*/1), full, 1e-5));
  CHECK(cache.length() == 5);
}

TEST_CASE("forward_cached_requires_single_new_token") {
  MultiHeadAttention attention(8, 2, /*causal=*/true);
  LayerKVCache cache;
  attention->forward_cached(torch::randn({1, 1, 8}), cache);  // one token is accepted
  CHECK_THROWS_AS(attention->forward_cached(torch::randn({1, 2, 8}), cache), g2c::ValueError);
  CHECK(cache.length() == 1);
}

TEST_CASE("forward_cached_requires_causal_attention") {
  MultiHeadAttention attention(8, 2, /*causal=*/false);
  const auto x = torch::randn({1, 1, 8});
  CHECK(attention(x).sizes() == x.sizes());  // the layer itself works; only the cached path refuses
  LayerKVCache cache;
  CHECK_THROWS_AS(attention->forward_cached(x, cache), g2c::ValueError);
}

TEST_CASE("attention_weights_shape") {
  INFO("one (T, T) pattern per head: (B, H, T, T)");
  MultiHeadAttention attention(8, 4);
  CHECK(attention->attention_weights(torch::randn({2, 5, 8})).sizes() ==
        torch::IntArrayRef({2, 4, 5, 5}));
}

TEST_CASE("attention_weights_sum_to_one") {
  MultiHeadAttention attention(8, 2);
  const auto weights = attention->attention_weights(torch::randn({2, 5, 8}));
  INFO(
      "every (b, h, i, :) row is a probability distribution: softmax over the last dim, "
      "/*dim=*/-1, after masking the scores");
  CHECK(close(weights.sum(/*dim=*/-1), torch::ones({2, 2, 5}), 1e-5));
}

TEST_CASE("attention_weights_nonnegative") {
  MultiHeadAttention attention(8, 2);
  INFO("softmax outputs are never negative (nor NaN)");
  CHECK((attention->attention_weights(torch::randn({2, 5, 8})) >= 0).all().item<bool>());
}

TEST_CASE("attention_weights_causal_zero_above_diagonal") {
  MultiHeadAttention attention(8, 4, /*causal=*/true);
  const auto weights = attention->attention_weights(torch::randn({1, 6, 8}));  // (1, H, T, T)
  for (std::int64_t head = 0; head < 4; ++head) {
    INFO("head " << head
                 << ": position i gives weight 0 to every j > i — fill the blocked "
                    "scores with -inf (not 0) before the softmax");
    CHECK(close(torch::triu(weights[0][head], /*diagonal=*/1), torch::zeros({6, 6}), 1e-6));
  }
}

TEST_CASE("attention_weights_causal_first_row_is_one_hot") {
  MultiHeadAttention attention(8, 4, /*causal=*/true);
  const auto weights = attention->attention_weights(torch::randn({1, 5, 8}));
  for (std::int64_t head = 0; head < 4; ++head) {
    INFO("head " << head << ": position 0 may only look at itself, so its row is [1, 0, 0, 0, 0]");
    CHECK(weights[0][head][0][0].item<double>() == within(1.0, 1e-6));
    CHECK(close(weights[0][head][0].index({Slice(1, 5)}), torch::zeros({4}), 1e-6));
  }
}

TEST_CASE("attention_weights_non_causal_full_matrix") {
  MultiHeadAttention attention(8, 2, /*causal=*/false);
  INFO("non-causal: nothing is masked, so every weight is strictly positive");
  CHECK((attention->attention_weights(torch::randn({1, 5, 8})) > 0).all().item<bool>());
}

TEST_CASE("attention_weights_heads_are_distinct") {
  torch::manual_seed(0);
  MultiHeadAttention attention(8, 4, /*causal=*/false);
  const auto weights = attention->attention_weights(torch::randn({1, 5, 8}))[0];  // (H, T, T)
  for (std::int64_t a = 0; a < 4; ++a) {
    for (std::int64_t b = a + 1; b < 4; ++b) {
      INFO("heads " << a << " and " << b
                    << " have the same pattern: each head must use its own "
                       "d = D / H features (view (B, T, H, d), then transpose(1, 2))");
      CHECK_FALSE(torch::allclose(weights[a], weights[b], /*rtol=*/0.0, /*atol=*/1e-4));
    }
  }
}

TEST_CASE("attention_weights_consistent_with_forward") {
  torch::manual_seed(0);
  MultiHeadAttention attention(8, 2, /*causal=*/true);
  const auto x = torch::randn({2, 5, 8});
  const auto weights = attention->attention_weights(x);                              // (B, H, T, T)
  const auto v = attention->v_proj(x).view({2, 5, 2, 4}).transpose(1, 2);            // (B, H, T, d)
  const auto merged = torch::matmul(weights, v).transpose(1, 2).reshape({2, 5, 8});  // (B, T, D)
  INFO(
      "forward(x) must equal out_proj(merged heads of attention_weights(x) @ V): the same "
      "weights, V split as (B, T, H, d) -> (B, H, T, d), heads merged back, then out_proj");
  CHECK(close(attention(x), attention->out_proj(merged), 1e-5));
}

TEST_CASE("attention_weights_use_sqrt_head_dim_scaling") {
  torch::manual_seed(0);
  MultiHeadAttention attention(8, 4, /*causal=*/false);
  {
    torch::NoGradGuard no_grad;
    for (const auto& projection : {attention->q_proj, attention->k_proj}) {
      projection->W.copy_(torch::eye(8));
      projection->b.zero_();
    }
  }
  const auto x = torch::randn({1, 3, 8});
  const auto heads = x.view({1, 3, 4, 2}).transpose(1, 2);  // (B, H, T, d)
  const auto expected =
      torch::softmax(torch::matmul(heads, heads.transpose(-2, -1)) / std::sqrt(2.0), /*dim=*/-1);
  INFO(
      "with W_q = W_k = I each head's weights are softmax(x_h x_hᵀ / √d): divide by "
      "std::sqrt(double(head_dim)), not √D");
  CHECK(close(attention->attention_weights(x), expected, 1e-5));
}

// An addition of this edition. The scaling test above uses W_q = W_k = I, so its scores are
// symmetric and K Qᵀ passes it as well as Q Kᵀ. Here the projections differ, have biases, and T ≠
// D; the expected weights are worked out element by element, head by head, in float64.
TEST_CASE("attention_weights_match_hand_computation") {
  torch::manual_seed(0);
  const std::int64_t dim = 8, heads = 2, head_dim = 4, length = 5;
  MultiHeadAttention attention(dim, heads, /*causal=*/true);
  {
    torch::NoGradGuard no_grad;
    attention->q_proj->b.copy_(torch::randn({dim}));
    attention->k_proj->b.copy_(torch::randn({dim}));
  }
  const auto x = torch::randn({2, length, dim});
  // Q = x W_q + b_q and K = x W_k + b_k, in float64 (W is (in, out) in g2c::nn::Linear).
  auto project = [&](const g2c::nn::Linear& layer) {
    return (torch::matmul(x.to(torch::kDouble), layer->W.detach().to(torch::kDouble)) +
            layer->b.detach().to(torch::kDouble));
  };
  const auto q_values = project(attention->q_proj);
  const auto k_values = project(attention->k_proj);
  const auto q = q_values.accessor<double, 3>();  // (B, T, D)
  const auto k = k_values.accessor<double, 3>();  // (B, T, D)
  auto expected = torch::zeros({2, heads, length, length}, torch::kDouble);
  auto weights = expected.accessor<double, 4>();  // (B, H, T, T), 0 where j > i
  for (std::int64_t b = 0; b < 2; ++b) {
    for (std::int64_t h = 0; h < heads; ++h) {
      const std::int64_t first = h * head_dim;  // head h owns features [first, first + d)
      for (std::int64_t i = 0; i < length; ++i) {
        std::vector<double> scores;  // query i against the keys j <= i it may see
        for (std::int64_t j = 0; j <= i; ++j) {
          double dot = 0.0;
          for (std::int64_t c = first; c < first + head_dim; ++c) dot += q[b][i][c] * k[b][j][c];
          scores.push_back(dot / std::sqrt(static_cast<double>(head_dim)));
        }
        const double largest = *std::max_element(scores.begin(), scores.end());
        double total = 0.0;
        for (double& score : scores) total += (score = std::exp(score - largest));
        for (std::int64_t j = 0; j <= i; ++j) weights[b][h][i][j] = scores[j] / total;
      }
    }
  }
  INFO(
      "weights[b][h][i][j] = softmax over j <= i of (q_i · k_j) / √d over head h's d features: "
      "scores are Q Kᵀ per head (query rows, key columns), not K Qᵀ");
  CHECK(close(attention->attention_weights(x), expected, 1e-5));
}

// An addition of this edition, run where CUDA or MPS exists: the same layer and input on the
// accelerator and on the CPU must agree. A mask built on the CPU while x is on the GPU fails here.
TEST_CASE("multi_head_attention_matches_cpu_on_accelerator", "[accelerator]") {
  const std::optional<torch::Device> device = g2c::testing::accelerator_device();
  if (!device) G2C_SKIP(g2c::testing::kNoAccelerator);
  INFO("on " << *device
             << ": build every tensor of attention_weights/forward on x.device() — "
                "causal_mask(T, x.device()), never a tensor left on the CPU");
  torch::manual_seed(0);
  MultiHeadAttention attention(8, 2, /*causal=*/true);
  const auto x = torch::randn({2, 6, 8});
  const auto weights_cpu = attention->attention_weights(x);
  const auto output_cpu = attention(x);
  attention->to(*device);
  const auto x_there = x.to(*device);
  const auto weights_there = attention->attention_weights(x_there);
  const auto output_there = attention(x_there);
  CHECK(weights_there.device().type() == device->type());
  CHECK(output_there.device().type() == device->type());
  CHECK(close(weights_there.cpu(), weights_cpu, 1e-4));
  CHECK(close(output_there.cpu(), output_cpu, 1e-4));
}
