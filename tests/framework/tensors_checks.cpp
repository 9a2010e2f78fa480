// Module 02 framework tests: broadcast_shapes and TinyArray against LibTorch's broadcasting on
// random shapes, softmax against torch::softmax at extreme values and in float64, the three
// matmuls against torch::matmul on random sizes, and bad input.
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "g2c/core/errors.h"
#include "g2c/tensors/broadcasting.h"
#include "g2c/tensors/forward.h"
#include "g2c/tensors/matmul.h"
#include "torch_test.h"

using Catch::Matchers::Contains;
using g2c::tensors::broadcast_shapes;
using g2c::tensors::format_shape;
using g2c::tensors::linear;
using g2c::tensors::matmul_loops;
using g2c::tensors::matmul_torch;
using g2c::tensors::matmul_vectorized;
using g2c::tensors::Matrix;
using g2c::tensors::Nested;
using g2c::tensors::Shape;
using g2c::tensors::TinyArray;
using g2c::testing::close;
using g2c::testing::max_abs_diff;

namespace {

/// A random shape of rank 0..4 with sizes in 1..4.
Shape random_shape(std::mt19937& rng) {
  Shape shape(std::uniform_int_distribution<int>(0, 4)(rng));
  for (auto& size : shape) size = std::uniform_int_distribution<int>(1, 4)(rng);
  return shape;
}

/// A random shape that broadcasts with `other`: right-aligned, each dim either other's size or 1;
/// either some of other's leading dims dropped, or a few extra leading dims added.
Shape compatible_shape(const Shape& other, std::mt19937& rng) {
  std::uniform_int_distribution<int> coin(0, 1);
  const int drop = std::uniform_int_distribution<int>(0, static_cast<int>(other.size()))(rng);
  Shape shape(other.begin() + drop, other.end());
  for (auto& size : shape) {
    if (coin(rng)) size = 1;
  }
  const int extra = drop == 0 ? std::uniform_int_distribution<int>(0, 2)(rng) : 0;
  for (int i = 0; i < extra; ++i) {
    shape.insert(shape.begin(), std::uniform_int_distribution<int>(1, 3)(rng));
  }
  return shape;
}

TinyArray random_tiny(const Shape& shape, torch::Tensor& as_tensor) {
  as_tensor = torch::randn(torch::IntArrayRef(shape), torch::kDouble);
  const double* begin = as_tensor.data_ptr<double>();
  return TinyArray(std::vector<double>(begin, begin + as_tensor.numel()), shape);
}

Shape torch_broadcast(const Shape& a, const Shape& b) {
  const auto sizes = at::infer_size(a, b);
  return Shape(sizes.begin(), sizes.end());
}

}  // namespace

// --- broadcasting -------------------------------------------------------------------------------

TEST_CASE("broadcast_shapes_matches_torch_on_random_shapes", "[tensors]") {
  std::mt19937 rng(0);
  int compatible = 0, incompatible = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const Shape a = random_shape(rng);
    const Shape b = trial % 2 ? compatible_shape(a, rng) : random_shape(rng);
    INFO("a " << format_shape(a) << ", b " << format_shape(b));
    bool torch_ok = true;
    Shape expected;
    try {
      expected = torch_broadcast(a, b);
    } catch (const c10::Error&) {
      torch_ok = false;
    }
    if (torch_ok) {
      ++compatible;
      REQUIRE(broadcast_shapes(a, b) == expected);
    } else {
      ++incompatible;
      REQUIRE_THROWS_AS(broadcast_shapes(a, b), g2c::ValueError);
    }
  }
  CHECK(compatible > 50);
  CHECK(incompatible > 20);
}

TEST_CASE("broadcast_shapes_error_names_both_shapes", "[tensors]") {
  REQUIRE_THROWS_AS(broadcast_shapes({2, 3, 4}, {2, 5, 4}), g2c::ValueError);
  CHECK_THROWS_WITH(broadcast_shapes({2, 3, 4}, {2, 5, 4}),
                    Contains("(2, 3, 4)") && Contains("(2, 5, 4)"));
  CHECK_THROWS_WITH(broadcast_shapes({3}, {4}), Contains("(3,)") && Contains("(4,)"));
}

TEST_CASE("broadcast_shapes_zero_sizes_follow_torch", "[tensors]") {
  CHECK(broadcast_shapes({0}, {1}) == torch_broadcast({0}, {1}));
  CHECK(broadcast_shapes({2, 0}, {1, 1}) == torch_broadcast({2, 0}, {1, 1}));
  CHECK_THROWS_AS(broadcast_shapes({0}, {3}), g2c::ValueError);
}

TEST_CASE("tinyarray_add_and_mul_match_torch_on_random_shapes", "[tensors]") {
  std::mt19937 rng(1);
  torch::manual_seed(1);
  for (int trial = 0; trial < 100; ++trial) {
    const Shape shape_a = random_shape(rng);
    const Shape shape_b = compatible_shape(shape_a, rng);
    torch::Tensor a_t, b_t;
    const TinyArray a = random_tiny(shape_a, a_t);
    const TinyArray b = random_tiny(shape_b, b_t);
    INFO("a " << format_shape(shape_a) << ", b " << format_shape(shape_b));
    for (const bool add : {true, false}) {
      INFO((add ? "a + b" : "a * b"));
      const TinyArray c = add ? a + b : a * b;
      const torch::Tensor expected = add ? a_t + b_t : a_t * b_t;
      REQUIRE(c.shape() == Shape(expected.sizes().begin(), expected.sizes().end()));
      CHECK(torch::equal(torch::tensor(c.data(), torch::kDouble), expected.reshape(-1)));
    }
  }
}

TEST_CASE("tinyarray_broadcasts_scalars_both_ways", "[tensors]") {
  const TinyArray scalar({2.0}, {});
  const TinyArray row({1, 2, 3}, {3});
  CHECK((scalar * row).data() == std::vector<double>{2, 4, 6});
  CHECK((row + scalar).data() == std::vector<double>{3, 4, 5});
  CHECK((scalar + scalar).shape().empty());
  CHECK((scalar + scalar).to_nested() == 4.0);
}

TEST_CASE("tinyarray_incompatible_shapes_raise", "[tensors]") {
  const TinyArray a({1, 2, 3, 4, 5, 6}, {2, 3});
  const TinyArray b({1, 2}, {2});
  CHECK_THROWS_AS(a + b, g2c::ValueError);
  CHECK_THROWS_AS(a * b, g2c::ValueError);
}

TEST_CASE("tinyarray_construction_checks_and_prints", "[tensors]") {
  CHECK_THROWS_AS(TinyArray({1, 2}, {-1, -2}), g2c::ValueError);
  CHECK_THROWS_WITH(TinyArray({1, 2, 3}, {2, 2}), Contains("3") && Contains("(2, 2)"));
  CHECK(TinyArray({1, 2.5, 3}, {3}).repr() == "TinyArray(shape=(3,), data=[1.0, 2.5, 3.0])");
  CHECK(TinyArray({7}, {}).repr() == "TinyArray(shape=(), data=[7.0])");
  CHECK(TinyArray({}, {2, 0}).to_nested() ==
        nlohmann::json{nlohmann::json::array(), nlohmann::json::array()});
}

// --- softmax and linear
// ---------------------------------------------------------------------------

TEST_CASE("softmax_matches_torch_at_extreme_values", "[tensors]") {
  torch::manual_seed(3);
  for (const auto dtype : {torch::kFloat, torch::kDouble}) {
    for (const double scale : {1.0, 100.0, 1e4, 1e6}) {
      const auto x = (torch::randn({3, 4, 5}, dtype) * scale);
      for (const std::int64_t dim : {-1, 0, 1, 2}) {
        INFO("dtype " << dtype << ", scale " << scale << ", dim " << dim);
        const auto ours = g2c::tensors::softmax(x, dim);
        CHECK(ours.dtype() == x.dtype());
        CHECK(torch::isfinite(ours).all().item<bool>());
        CHECK(close(ours, torch::softmax(x, dim), 1e-6));
      }
    }
  }
}

TEST_CASE("softmax_handles_minus_infinity_and_huge_offsets", "[tensors]") {
  const double inf = std::numeric_limits<double>::infinity();
  const auto x = torch::tensor({{-inf, 0.0, 1.0}, {3e38, 3e38, -3e38}}, torch::kFloat);
  const auto ours = g2c::tensors::softmax(x, -1);
  CHECK(torch::isfinite(ours).all().item<bool>());
  CHECK(close(ours, torch::softmax(x, -1), 1e-6));
}

TEST_CASE("linear_matches_torch_in_float64_and_refuses_bad_shapes", "[tensors]") {
  torch::manual_seed(4);
  const auto x = torch::randn({6, 5}, torch::kDouble);
  const auto W = torch::randn({5, 3}, torch::kDouble);
  const auto b = torch::randn({3}, torch::kDouble);
  CHECK(close(linear(x, W, b), torch::addmm(b, x, W), 1e-12));
  CHECK_THROWS_AS(linear(x, W.t(), b), g2c::ValueError);
  CHECK_THROWS_WITH(linear(x, W.t(), b), Contains("(6, 5)") && Contains("(3, 5)"));
  CHECK_THROWS_AS(linear(x, W, torch::randn({5}, torch::kDouble)), g2c::ValueError);
}

// --- matmul
// ---------------------------------------------------------------------------------------

TEST_CASE("three_matmuls_match_torch_on_random_sizes", "[tensors]") {
  std::mt19937 rng(5);
  torch::manual_seed(5);
  std::uniform_int_distribution<int> size(1, 40);
  for (int trial = 0; trial < 25; ++trial) {
    const std::int64_t m = size(rng), k = size(rng), n = size(rng);
    const auto A = torch::randn({m, k}, torch::kDouble);
    const auto B = torch::randn({k, n}, torch::kDouble);
    const auto expected = torch::matmul(A, B);
    INFO("(" << m << ", " << k << ") @ (" << k << ", " << n << ")");
    const Matrix a = Matrix::from_tensor(A), b = Matrix::from_tensor(B);
    CHECK(close(Matrix::from_nested(matmul_loops(a.to_nested(), b.to_nested())).to_tensor(),
                expected, 1e-10));
    CHECK(close(matmul_vectorized(a, b).to_tensor(), expected, 1e-10));
    CHECK(close(matmul_torch(A, B), expected, 1e-10));
  }
}

TEST_CASE("matmul_vectorized_equals_matmul_loops_exactly", "[tensors]") {
  // The same sums in the same order: only the loop order differs.
  torch::manual_seed(6);
  const auto A = torch::randn({33, 17}, torch::kDouble);
  const auto B = torch::randn({17, 29}, torch::kDouble);
  const Matrix a = Matrix::from_tensor(A), b = Matrix::from_tensor(B);
  const auto loops = Matrix::from_nested(matmul_loops(a.to_nested(), b.to_nested())).to_tensor();
  const auto vectorized = matmul_vectorized(a, b).to_tensor();
  INFO("max |difference| = " << max_abs_diff(loops, vectorized));
  CHECK(close(vectorized, loops, 1e-12));
}

TEST_CASE("matmul_torch_keeps_dtype_and_batches", "[tensors]") {
  torch::manual_seed(7);
  const auto A = torch::randn({2, 3, 4}, torch::kDouble);
  const auto B = torch::randn({4, 5}, torch::kDouble);
  const auto C = matmul_torch(A, B);
  CHECK(C.dtype() == torch::kDouble);
  CHECK(close(C, torch::matmul(A, B), 1e-12));
}

TEST_CASE("matmul_bad_input_raises_with_both_shapes", "[tensors]") {
  const Nested A{{1, 2, 3}, {4, 5, 6}};
  const Nested B{{1, 2}, {3, 4}, {5, 6}, {7, 8}};
  CHECK_THROWS_AS(matmul_loops(A, B), g2c::ValueError);
  CHECK_THROWS_WITH(matmul_loops(A, B), Contains("(2, 3)") && Contains("(4, 2)"));
  CHECK_THROWS_AS(matmul_loops({{1, 2}, {3}}, {{1}, {2}}), g2c::ValueError);
  CHECK_THROWS_AS(matmul_vectorized(Matrix(2, 3), Matrix(4, 2)), g2c::ValueError);
  CHECK_THROWS_WITH(matmul_vectorized(Matrix(2, 3), Matrix(4, 2)),
                    Contains("(2, 3)") && Contains("(4, 2)"));
}

TEST_CASE("matrix_construction_and_conversions", "[tensors]") {
  CHECK_THROWS_AS(Matrix(2, 3, {1, 2, 3}), g2c::ValueError);
  CHECK_THROWS_AS(Matrix::from_nested({{1, 2}, {3}}), g2c::ValueError);
  CHECK_THROWS_AS(Matrix::from_tensor(torch::ones({2, 2, 2})), g2c::ValueError);
  const Matrix m(2, 3, {1, 2, 3, 4, 5, 6});
  CHECK(m(1, 0) == 4.0);
  CHECK(m.to_nested() == Nested{{1, 2, 3}, {4, 5, 6}});
  CHECK(torch::equal(m.to_tensor(),
                     torch::tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}, torch::kDouble)));
  CHECK(Matrix::from_tensor(m.to_tensor()).to_nested() == m.to_nested());
}
