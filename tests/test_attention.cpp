// Module 07 course tests: SelfAttention, one for one with the Python edition's
// tests/test_attention.py. Tests tagged [clean] pass on the scaffold.
#include <cmath>

#include <torch/torch.h>

#include "g2c/attention/self_attention.h"
#include "torch_test.h"

using g2c::attention::SelfAttention;
using g2c::testing::close;
using g2c::testing::max_abs_diff;

TEST_CASE("construction", "[clean]") {
  SelfAttention attention(4);
  CHECK(attention->embedding_dim == 4);
}

TEST_CASE("construction_stores_args", "[clean]") {
  SelfAttention attention(16);
  CHECK(attention->embedding_dim == 16);
  CHECK(attention->causal);
}

TEST_CASE("construction_non_causal", "[clean]") {
  SelfAttention attention(8, /*causal=*/false);
  CHECK_FALSE(attention->causal);
}

TEST_CASE("construction_projection_shapes", "[clean]") {
  SelfAttention attention(8);
  for (const auto& projection :
       {attention->q_proj, attention->k_proj, attention->v_proj, attention->out_proj}) {
    CHECK(projection->W.sizes() == torch::IntArrayRef({8, 8}));
  }
}

TEST_CASE("parameters_count", "[clean]") {
  SelfAttention attention(8);
  CHECK(attention->parameters().size() == 8);
}

TEST_CASE("causal_mask_shape", "[clean]") {
  CHECK(g2c::attention::SelfAttentionImpl::causal_mask(5).sizes() == torch::IntArrayRef({5, 5}));
}

TEST_CASE("causal_mask_dtype", "[clean]") {
  CHECK(g2c::attention::SelfAttentionImpl::causal_mask(5).scalar_type() == torch::kBool);
}

TEST_CASE("causal_mask_upper_triangular", "[clean]") {
  const auto expected = torch::tensor({{false, true, true, true},
                                       {false, false, true, true},
                                       {false, false, false, true},
                                       {false, false, false, false}});
  CHECK(torch::equal(g2c::attention::SelfAttentionImpl::causal_mask(4), expected));
}

TEST_CASE("causal_mask_diagonal_is_unmasked", "[clean]") {
  const auto mask = g2c::attention::SelfAttentionImpl::causal_mask(6);
  CHECK_FALSE(mask.diagonal().any().item<bool>());
}

TEST_CASE("forward_shape") {
  SelfAttention attention(4);
  CHECK(attention(torch::randn({2, 5, 4})).sizes() == torch::IntArrayRef({2, 5, 4}));
}

TEST_CASE("forward_single_batch") {
  SelfAttention attention(8);
  CHECK(attention(torch::randn({1, 3, 8})).sizes() == torch::IntArrayRef({1, 3, 8}));
}

TEST_CASE("forward_single_token") {
  SelfAttention attention(4);
  CHECK(attention(torch::randn({2, 1, 4})).sizes() == torch::IntArrayRef({2, 1, 4}));
}

TEST_CASE("forward_routes_gradients") {
  SelfAttention attention(4);
  attention(torch::randn({2, 5, 4})).sum().backward();
  for (const auto& p : attention->parameters()) {
    REQUIRE(p.grad().defined());
    CHECK(torch::isfinite(p.grad()).all().item<bool>());
  }
}

TEST_CASE("forward_causality") {
  torch::manual_seed(0);
  SelfAttention attention(4);
  const auto x = torch::randn({1, 5, 4});
  auto changed = x.clone();
  changed[0][3] += torch::randn({4});
  const auto before = attention(x);
  const auto after = attention(changed);
  using torch::indexing::Slice;
  CHECK(close(after.index({0, Slice(0, 3)}), before.index({0, Slice(0, 3)}), 1e-6));
  CHECK(max_abs_diff(after.index({0, Slice(3, 5)}), before.index({0, Slice(3, 5)})) > 1e-4);
}

TEST_CASE("forward_no_causal_sees_future") {
  torch::manual_seed(0);
  SelfAttention attention(4, /*causal=*/false);
  const auto x = torch::randn({1, 5, 4});
  auto changed = x.clone();
  changed[0][4] += torch::randn({4});
  CHECK(max_abs_diff(attention(changed)[0][0], attention(x)[0][0]) > 1e-5);
}

TEST_CASE("attention_weights_shape") {
  SelfAttention attention(4);
  CHECK(attention->attention_weights(torch::randn({2, 5, 4})).sizes() ==
        torch::IntArrayRef({2, 5, 5}));
}

TEST_CASE("attention_weights_sum_to_one") {
  SelfAttention attention(4);
  const auto weights = attention->attention_weights(torch::randn({2, 5, 4}));
  CHECK(close(weights.sum(/*dim=*/-1), torch::ones({2, 5}), 1e-5));
}

TEST_CASE("attention_weights_nonnegative") {
  SelfAttention attention(4);
  CHECK((attention->attention_weights(torch::randn({2, 5, 4})) >= 0).all().item<bool>());
}

TEST_CASE("attention_weights_causal_zero_above_diagonal") {
  SelfAttention attention(4);
  const auto weights = attention->attention_weights(torch::randn({2, 5, 4}));
  const auto above = g2c::attention::SelfAttentionImpl::causal_mask(5);
  CHECK(weights.masked_select(above.expand({2, 5, 5})).abs().max().item<double>() <= 1e-6);
}

TEST_CASE("attention_weights_causal_first_row_is_one_hot") {
  SelfAttention attention(4);
  const auto weights = attention->attention_weights(torch::randn({2, 5, 4}));
  const auto first_row = weights.select(/*dim=*/1, 0);  // (B, T)
  CHECK(close(first_row, torch::tensor({1.0f, 0.0f, 0.0f, 0.0f, 0.0f}).expand({2, 5}), 1e-6));
}

TEST_CASE("attention_weights_non_causal_full_matrix") {
  SelfAttention attention(4, /*causal=*/false);
  CHECK((attention->attention_weights(torch::randn({2, 5, 4})) > 0).all().item<bool>());
}

TEST_CASE("attention_weights_consistent_with_forward") {
  torch::manual_seed(0);
  SelfAttention attention(4);
  const auto x = torch::randn({2, 5, 4});
  const auto weights = attention->attention_weights(x);
  const auto expected = attention->out_proj(torch::matmul(weights, attention->v_proj(x)));
  CHECK(close(attention(x), expected, 1e-5));
}

TEST_CASE("attention_weights_use_sqrt_d_scaling") {
  SelfAttention attention(4, /*causal=*/false);
  {
    torch::NoGradGuard no_grad;
    for (const auto& projection : {attention->q_proj, attention->k_proj}) {
      projection->W.copy_(torch::eye(4));
      projection->b.zero_();
    }
  }
  const auto x = torch::randn({1, 3, 4});
  const auto expected =
      torch::softmax(torch::matmul(x, x.transpose(-2, -1)) / std::sqrt(4.0), /*dim=*/-1);
  CHECK(close(attention->attention_weights(x), expected, 1e-5));
}
