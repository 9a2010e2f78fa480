// Module 07 course tests: SelfAttention, one for one with the Python edition's
// tests/test_attention.py (23 tests), plus two of this edition (tests/course_tests.txt says which):
// attention_weights_match_hand_computation, and self_attention_matches_cpu_on_accelerator, run
// where CUDA or MPS exists. Tests tagged [clean] pass on the scaffold.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include <torch/torch.h>

#include "g2c/attention/scaled_dot_product.h"
#include "g2c/attention/self_attention.h"
#include "torch_test.h"

using g2c::attention::SelfAttention;
using g2c::attention::SelfAttentionImpl;
using g2c::testing::close;
using g2c::testing::max_abs_diff;
using torch::indexing::Slice;

namespace {

/// The causal mask takes the device it is built on, with no default: a mask silently built on the
/// CPU is the bug that only shows on a GPU. Forgetting the device does not compile.
template <typename Attention>
constexpr bool mask_needs_device = !requires(std::int64_t n) {
  Attention::causal_mask(n);
};
static_assert(mask_needs_device<SelfAttentionImpl>, "causal_mask(T) must not compile");
template <typename Length>
constexpr bool free_mask_needs_device = !requires(Length n) {
  g2c::attention::causal_mask(n);
};
static_assert(free_mask_needs_device<std::int64_t>, "causal_mask(T) must not compile");

}  // namespace

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
  CHECK(SelfAttentionImpl::causal_mask(5, torch::kCPU).sizes() == torch::IntArrayRef({5, 5}));
}

TEST_CASE("causal_mask_dtype", "[clean]") {
  CHECK(SelfAttentionImpl::causal_mask(5, torch::kCPU).scalar_type() == torch::kBool);
}

TEST_CASE("causal_mask_upper_triangular", "[clean]") {
  const auto expected = torch::tensor({{false, true, true, true},
                                       {false, false, true, true},
                                       {false, false, false, true},
                                       {false, false, false, false}});
  CHECK(torch::equal(SelfAttentionImpl::causal_mask(4, torch::kCPU), expected));
}

TEST_CASE("causal_mask_diagonal_is_unmasked", "[clean]") {
  const auto mask = SelfAttentionImpl::causal_mask(6, torch::kCPU);
  CHECK_FALSE(mask.diagonal().any().item<bool>());
}

TEST_CASE("forward_shape") {
  SelfAttention attention(4);
  CHECK(attention(torch::randn({2, 5, 4})).sizes() == torch::IntArrayRef({2, 5, 4}));
}

TEST_CASE("forward_shape_single_batch") {
  SelfAttention attention(8);
  CHECK(attention(torch::randn({1, 3, 8})).sizes() == torch::IntArrayRef({1, 3, 8}));
}

TEST_CASE("forward_shape_single_token") {
  INFO("a length-1 sequence still works: the one position attends to itself");
  SelfAttention attention(4);
  CHECK(attention(torch::randn({2, 1, 4})).sizes() == torch::IntArrayRef({2, 1, 4}));
}

TEST_CASE("forward_routes_gradients") {
  INFO("a backward pass must give every parameter (q, k, v and out projections) a finite grad");
  SelfAttention attention(4);
  attention(torch::randn({2, 3, 4})).sum().backward();
  for (const auto& parameter : attention->named_parameters()) {
    INFO("parameter " << parameter.key());
    REQUIRE(parameter.value().grad().defined());
    CHECK(torch::isfinite(parameter.value().grad()).all().item<bool>());
  }
}

TEST_CASE("forward_causality") {
  torch::manual_seed(0);
  SelfAttention attention(4, /*causal=*/true);
  const auto x = torch::randn({1, 5, 4});
  auto changed = x.clone();
  changed[0][3] = torch::randn({4});  // change position 3 only
  const auto before = attention(x);
  const auto after = attention(changed);
  {
    INFO(
        "causal: earlier outputs must not change when a later token changes — positions 0-2 "
        "cannot see position 3 (mask the scores with -inf before the softmax, above the "
        "diagonal)");
    CHECK(close(after.index({0, Slice(0, 3)}), before.index({0, Slice(0, 3)}), 1e-6));
  }
  {
    INFO("positions 3 and 4 see position 3, so their outputs must change");
    CHECK(max_abs_diff(after.index({0, Slice(3, 5)}), before.index({0, Slice(3, 5)})) > 1e-4);
  }
}

TEST_CASE("forward_no_causal_sees_future") {
  torch::manual_seed(0);
  SelfAttention attention(4, /*causal=*/false);
  const auto x = torch::randn({1, 5, 4});
  auto changed = x.clone();
  changed[0][3] = torch::randn({4});
  INFO(
      "non-causal: every position sees every other, so output 0 must change when token 3 does "
      "(apply the mask only when causal is true)");
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
  INFO(
      "every row (one query over all keys) is a probability distribution: softmax over the last "
      "dim, /*dim=*/-1, after masking the scores");
  CHECK(close(weights.sum(/*dim=*/-1), torch::ones({2, 5}), 1e-5));
}

TEST_CASE("attention_weights_nonnegative") {
  SelfAttention attention(4);
  INFO("softmax outputs are never negative (nor NaN)");
  CHECK((attention->attention_weights(torch::randn({2, 5, 4})) >= 0).all().item<bool>());
}

TEST_CASE("attention_weights_causal_zero_above_diagonal") {
  SelfAttention attention(4, /*causal=*/true);
  const auto weights = attention->attention_weights(torch::randn({1, 6, 4}));  // (1, T, T)
  INFO(
      "causal: position i gives weight 0 to every j > i — fill the blocked scores with -inf "
      "(not 0) before the softmax");
  CHECK(close(torch::triu(weights[0], /*diagonal=*/1), torch::zeros({6, 6}), 1e-6));
}

TEST_CASE("attention_weights_causal_first_row_is_one_hot") {
  SelfAttention attention(4, /*causal=*/true);
  const auto weights = attention->attention_weights(torch::randn({1, 5, 4}));
  INFO(
      "causal: position 0 may only look at itself, so row 0 is [1, 0, 0, 0, 0] (the diagonal "
      "is never blocked)");
  CHECK(weights[0][0][0].item<double>() == within(1.0, 1e-6));
  CHECK(close(weights[0][0].index({Slice(1, 5)}), torch::zeros({4}), 1e-6));
}

TEST_CASE("attention_weights_non_causal_full_matrix") {
  SelfAttention attention(4, /*causal=*/false);
  INFO("non-causal: nothing is masked, so every weight is strictly positive");
  CHECK((attention->attention_weights(torch::randn({1, 5, 4})) > 0).all().item<bool>());
}

TEST_CASE("attention_weights_consistent_with_forward") {
  torch::manual_seed(0);
  SelfAttention attention(4, /*causal=*/true);
  const auto x = torch::randn({2, 5, 4});
  const auto weights = attention->attention_weights(x);
  const auto expected = attention->out_proj(torch::matmul(weights, attention->v_proj(x)));
  INFO(
      "forward(x) must equal out_proj(attention_weights(x) @ v_proj(x)): build forward on "
      "attention_weights, and end with out_proj");
  CHECK(close(attention(x), expected, 1e-5));
}

TEST_CASE("attention_weights_use_sqrt_d_scaling") {
  torch::manual_seed(0);
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
  INFO(
      "with W_q = W_k = I the weights are softmax(x xᵀ / √D): divide the scores by "
      "std::sqrt(double(D)) (not D, not 1)");
  CHECK(close(attention->attention_weights(x), expected, 1e-5));
}

// An addition of this edition. The scaling test above uses W_q = W_k = I, so its scores are
// symmetric and K Qᵀ passes it as well as Q Kᵀ. Here the projections differ, have biases, and T ≠
// D; the expected weights are worked out element by element in float64.
TEST_CASE("attention_weights_match_hand_computation") {
  torch::manual_seed(0);
  const std::int64_t dim = 4, length = 6;
  SelfAttention attention(dim, /*causal=*/true);
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
  auto expected = torch::zeros({2, length, length}, torch::kDouble);
  auto weights = expected.accessor<double, 3>();  // (B, T, T), 0 where j > i
  for (std::int64_t b = 0; b < 2; ++b) {
    for (std::int64_t i = 0; i < length; ++i) {
      // Row i: query i against the keys j <= i it may see, then a softmax by hand.
      std::vector<double> scores;
      for (std::int64_t j = 0; j <= i; ++j) {
        double dot = 0.0;
        for (std::int64_t c = 0; c < dim; ++c) dot += q[b][i][c] * k[b][j][c];
        scores.push_back(dot / std::sqrt(static_cast<double>(dim)));
      }
      const double largest = *std::max_element(scores.begin(), scores.end());
      double total = 0.0;
      for (double& score : scores) total += (score = std::exp(score - largest));
      for (std::int64_t j = 0; j <= i; ++j) weights[b][i][j] = scores[j] / total;
    }
  }
  INFO(
      "weights[b][i][j] = softmax over j <= i of (q_i · k_j) / √D, where q_i is row i of "
      "Q = q_proj(x) and k_j row j of K = k_proj(x): scores are Q Kᵀ (query rows, key columns), "
      "not K Qᵀ");
  CHECK(close(attention->attention_weights(x), expected, 1e-5));
}

// An addition of this edition, run where CUDA or MPS exists: the same layer and input on the
// accelerator and on the CPU must agree. A mask built on the CPU while x is on the GPU fails here.
TEST_CASE("self_attention_matches_cpu_on_accelerator", "[accelerator]") {
  const std::optional<torch::Device> device = g2c::testing::accelerator_device();
  if (!device) G2C_SKIP(g2c::testing::kNoAccelerator);
  INFO("on " << *device
             << ": build every tensor of attention_weights/forward on x.device() — "
                "causal_mask(T, x.device()), never a tensor left on the CPU");
  torch::manual_seed(0);
  SelfAttention attention(8, /*causal=*/true);
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
