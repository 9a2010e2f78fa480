// Module 08 course tests: MultiHeadAttention, one for one with the Python edition's
// tests/test_multi_head_attention.py. Tests tagged [clean] pass on the scaffold.
#include <cmath>

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
  CHECK(MultiHeadAttentionImpl::causal_mask(5).sizes() == torch::IntArrayRef({5, 5}));
}

TEST_CASE("causal_mask_dtype", "[clean]") {
  CHECK(MultiHeadAttentionImpl::causal_mask(5).scalar_type() == torch::kBool);
}

TEST_CASE("causal_mask_upper_triangular", "[clean]") {
  const auto expected = torch::tensor({{false, true, true, true},
                                       {false, false, true, true},
                                       {false, false, false, true},
                                       {false, false, false, false}});
  CHECK(torch::equal(MultiHeadAttentionImpl::causal_mask(4), expected));
}

TEST_CASE("causal_mask_diagonal_is_unmasked", "[clean]") {
  CHECK_FALSE(MultiHeadAttentionImpl::causal_mask(6).diagonal().any().item<bool>());
}

TEST_CASE("forward_shape") {
  MultiHeadAttention attention(8, 4);
  CHECK(attention(torch::randn({2, 5, 8})).sizes() == torch::IntArrayRef({2, 5, 8}));
}

TEST_CASE("forward_single_batch") {
  MultiHeadAttention attention(8, 2);
  CHECK(attention(torch::randn({1, 3, 8})).sizes() == torch::IntArrayRef({1, 3, 8}));
}

TEST_CASE("forward_single_token") {
  MultiHeadAttention attention(8, 4);
  CHECK(attention(torch::randn({2, 1, 8})).sizes() == torch::IntArrayRef({2, 1, 8}));
}

TEST_CASE("forward_one_head") {
  MultiHeadAttention attention(8, 1);
  CHECK(attention(torch::randn({2, 5, 8})).sizes() == torch::IntArrayRef({2, 5, 8}));
}

TEST_CASE("forward_routes_gradients") {
  MultiHeadAttention attention(8, 4);
  attention(torch::randn({2, 5, 8})).sum().backward();
  for (const auto& p : attention->parameters()) {
    REQUIRE(p.grad().defined());
    CHECK(torch::isfinite(p.grad()).all().item<bool>());
  }
}

TEST_CASE("forward_causality") {
  torch::manual_seed(0);
  MultiHeadAttention attention(8, 4);
  const auto x = torch::randn({1, 5, 8});
  auto changed = x.clone();
  changed[0][3] += torch::randn({8});
  const auto before = attention(x);
  const auto after = attention(changed);
  CHECK(close(after.index({0, Slice(0, 3)}), before.index({0, Slice(0, 3)}), 1e-6));
  CHECK(max_abs_diff(after.index({0, Slice(3, 5)}), before.index({0, Slice(3, 5)})) > 1e-4);
}

TEST_CASE("forward_no_causal_sees_future") {
  torch::manual_seed(0);
  MultiHeadAttention attention(8, 4, /*causal=*/false);
  const auto x = torch::randn({1, 5, 8});
  auto changed = x.clone();
  changed[0][4] += torch::randn({8});
  CHECK(max_abs_diff(attention(changed)[0][0], attention(x)[0][0]) > 1e-5);
}

TEST_CASE("forward_cached_matches_full_forward") {
  torch::manual_seed(0);
  MultiHeadAttention attention(8, 4);
  const auto x = torch::randn({2, 5, 8});
  const auto full = attention(x);
  LayerKVCache cache;
  std::vector<torch::Tensor> steps;
  for (std::int64_t t = 0; t < 5; ++t)
    steps.push_back(attention->forward_cached(x.index({Slice(), Slice(t, t + 1)}), cache));
  CHECK(close(torch::cat(steps, /*dim=*/1), full, 1e-5));
  CHECK(cache.length() == 5);
}

TEST_CASE("forward_cached_requires_single_new_token") {
  MultiHeadAttention attention(8, 4);
  LayerKVCache cache;
  attention->forward_cached(torch::randn({1, 1, 8}), cache);  // one token is accepted
  CHECK_THROWS_AS(attention->forward_cached(torch::randn({1, 2, 8}), cache), g2c::ValueError);
  CHECK(cache.length() == 1);
}

TEST_CASE("forward_cached_requires_causal_attention") {
  MultiHeadAttention attention(8, 4, /*causal=*/false);
  const auto x = torch::randn({1, 1, 8});
  CHECK(attention(x).sizes() == x.sizes());  // the layer itself works; only the cached path refuses
  LayerKVCache cache;
  CHECK_THROWS_AS(attention->forward_cached(x, cache), g2c::ValueError);
}

TEST_CASE("attention_weights_shape") {
  MultiHeadAttention attention(8, 4);
  CHECK(attention->attention_weights(torch::randn({2, 5, 8})).sizes() ==
        torch::IntArrayRef({2, 4, 5, 5}));
}

TEST_CASE("attention_weights_sum_to_one") {
  MultiHeadAttention attention(8, 4);
  const auto weights = attention->attention_weights(torch::randn({2, 5, 8}));
  CHECK(close(weights.sum(/*dim=*/-1), torch::ones({2, 4, 5}), 1e-5));
}

TEST_CASE("attention_weights_nonnegative") {
  MultiHeadAttention attention(8, 4);
  CHECK((attention->attention_weights(torch::randn({2, 5, 8})) >= 0).all().item<bool>());
}

TEST_CASE("attention_weights_causal_zero_above_diagonal") {
  MultiHeadAttention attention(8, 4);
  const auto weights = attention->attention_weights(torch::randn({2, 5, 8}));  // (B, H, T, T)
  const auto above = MultiHeadAttentionImpl::causal_mask(5);
  for (std::int64_t head = 0; head < 4; ++head) {
    const auto head_weights = weights.select(/*dim=*/1, head);  // (B, T, T)
    CHECK(head_weights.masked_select(above.expand({2, 5, 5})).abs().max().item<double>() <= 1e-6);
  }
}

TEST_CASE("attention_weights_first_row_one_hot") {
  MultiHeadAttention attention(8, 4);
  const auto first_row =
      attention->attention_weights(torch::randn({2, 5, 8})).select(/*dim=*/2, 0);  // (B, H, T)
  const auto one_hot = torch::tensor({1.0f, 0.0f, 0.0f, 0.0f, 0.0f}).expand({2, 4, 5});
  CHECK(close(first_row, one_hot, 1e-6));
}

TEST_CASE("attention_weights_non_causal_full_matrix") {
  MultiHeadAttention attention(8, 4, /*causal=*/false);
  CHECK((attention->attention_weights(torch::randn({2, 5, 8})) > 0).all().item<bool>());
}

TEST_CASE("heads_are_distinct") {
  torch::manual_seed(0);
  MultiHeadAttention attention(8, 4);
  const auto weights = attention->attention_weights(torch::randn({1, 5, 8}))[0];  // (H, T, T)
  for (std::int64_t a = 0; a < 4; ++a) {
    for (std::int64_t b = a + 1; b < 4; ++b) {
      INFO("heads " << a << " and " << b);
      CHECK_FALSE(torch::allclose(weights[a], weights[b], /*rtol=*/0.0, /*atol=*/1e-4));
    }
  }
}

TEST_CASE("attention_weights_consistent_with_forward") {
  torch::manual_seed(0);
  MultiHeadAttention attention(8, 4);
  const auto x = torch::randn({2, 5, 8});
  const auto weights = attention->attention_weights(x);                              // (B, H, T, T)
  const auto v = attention->v_proj(x).view({2, 5, 4, 2}).transpose(1, 2);            // (B, H, T, d)
  const auto merged = torch::matmul(weights, v).transpose(1, 2).reshape({2, 5, 8});  // (B, T, D)
  CHECK(close(attention(x), attention->out_proj(merged), 1e-5));
}

TEST_CASE("attention_weights_use_sqrt_head_dim_scaling") {
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
  CHECK(close(attention->attention_weights(x), expected, 1e-5));
}
