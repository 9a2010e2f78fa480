// Module 02 course tests: g2c/tensors, one for one with the Python edition's
// tests/test_tensors.py, plus matmul_torch_on_cuda, this edition's CUDA twin of
// matmul_torch_on_mps (tests/course_tests.txt). Tests tagged [clean] pass on the scaffold.
//
// Suggested order: matmul_loops (matmul_loops_*), matmul_vectorized (matmul_numpy_*: the Python
// edition's NumPy rung), matmul_torch (matmul_torch_*), broadcast_shapes (broadcast_shapes_*),
// TinyArray::elementwise with operator+ (tinyarray_add_*) and operator* (tinyarray_mul_*), linear
// (linear_*), softmax (softmax_*); classifier_forward, implemented for you, then goes green.
//
// The Python tests draw from NumPy's and torch's generators; these draw the same shapes from
// LibTorch's, seeded. Tolerances are the Python ones: np.testing.assert_allclose(rtol=r) is
// close(actual, expected, /*atol=*/0, r); torch.allclose(a, b, atol=x) is py_allclose(a, b, x).
#include <vector>

#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include "g2c/core/errors.h"
#include "g2c/tensors/broadcasting.h"
#include "g2c/tensors/forward.h"
#include "g2c/tensors/matmul.h"
#include "torch_test.h"

using g2c::tensors::broadcast_shapes;
using g2c::tensors::classifier_forward;
using g2c::tensors::linear;
using g2c::tensors::matmul_loops;
using g2c::tensors::matmul_torch;
using g2c::tensors::matmul_vectorized;
using g2c::tensors::Matrix;
using g2c::tensors::Nested;
using g2c::tensors::Shape;
using g2c::tensors::TinyArray;
using g2c::testing::close;
using g2c::testing::py_allclose;
using json = nlohmann::json;

namespace {

/// A 2-D float64 tensor as nested rows.
Nested to_nested(const torch::Tensor& t) {
  return Matrix::from_tensor(t).to_nested();
}

/// Nested rows as a (rows, cols) float64 tensor.
torch::Tensor to_tensor(const Nested& rows) {
  return Matrix::from_nested(rows).to_tensor();
}

/// A TinyArray holding a tensor's values (row-major) and shape.
TinyArray tiny(const torch::Tensor& t) {
  const auto values = t.to(torch::kDouble).contiguous();
  const double* begin = values.data_ptr<double>();
  return TinyArray(std::vector<double>(begin, begin + values.numel()),
                   Shape(t.sizes().begin(), t.sizes().end()));
}

/// A TinyArray's values as a flat float64 tensor.
torch::Tensor flat(const TinyArray& a) {
  return torch::tensor(a.data(), torch::kDouble);
}

constexpr const char* kMatmulIndexHint =
    "C[i][j] = sum over p of A[i][p] * B[p][j]: row i of A against column j of B. "
    "[[17, 23], [39, 53]] is A @ B^T (B read as B[j][p]); [[19, 43], [22, 50]] is the product "
    "transposed (the sum stored in C[j][i]); [[23, 34], [31, 46]] is B @ A (A and B swapped)";

constexpr const char* kRightAlignHint =
    "broadcasting aligns shapes on the RIGHT: the last dims face each other, and the shorter shape "
    "is padded with 1s on the LEFT, so (4,) is treated as (1, 4) next to (3, 4)";

constexpr const char* kSoftmaxMaxHint =
    "exp(x) overflows to inf above about 88.7 in float32 and inf / inf is nan: subtract each "
    "slice's max along dim (x.max(dim, /*keepdim=*/true)) before exp";

}  // namespace

// --- TinyArray construction (provided: passes from the start) ----------------------------------

TEST_CASE("tinyarray_construction_1d", "[clean]") {
  const TinyArray a({1, 2, 3}, {3});
  CHECK(a.shape() == Shape{3});
  CHECK(a.data() == std::vector<double>{1.0, 2.0, 3.0});
}

TEST_CASE("tinyarray_construction_2d", "[clean]") {
  const TinyArray a({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK(a.shape() == Shape{2, 3});
  CHECK(a.to_nested() == json{{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});
}

TEST_CASE("tinyarray_construction_shape_mismatch", "[clean]") {
  CHECK_THROWS_AS(TinyArray({1, 2, 3}, {2, 2}), g2c::ValueError);
}

TEST_CASE("tinyarray_repr_runs", "[clean]") {
  const TinyArray a({1, 2, 3}, {3});
  CHECK_NOTHROW(a.repr());
}

// --- matmul_loops ------------------------------------------------------------------------------

TEST_CASE("matmul_loops_2x2") {
  const Nested A{{1.0, 2.0}, {3.0, 4.0}};
  const Nested B{{5.0, 6.0}, {7.0, 8.0}};
  INFO(kMatmulIndexHint);
  CHECK(matmul_loops(A, B) == Nested{{19.0, 22.0}, {43.0, 50.0}});
}

TEST_CASE("matmul_loops_identity") {
  const Nested A{{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}};
  const Nested I{{1.0, 0.0, 0.0}, {0.0, 1.0, 0.0}, {0.0, 0.0, 1.0}};
  INFO("A @ I must be A");
  CHECK(matmul_loops(A, I) == A);
}

TEST_CASE("matmul_loops_rectangular") {
  // (2x3) @ (3x4) = (2x4), compared with LibTorch's product.
  torch::manual_seed(0);
  const auto A = torch::randn({2, 3}, torch::kDouble);
  const auto B = torch::randn({3, 4}, torch::kDouble);
  const Nested result = matmul_loops(to_nested(A), to_nested(B));
  INFO(kMatmulIndexHint);
  CHECK(close(to_tensor(result), torch::matmul(A, B), /*atol=*/0.0, /*rtol=*/1e-6));
}

// --- matmul_vectorized (the Python edition's matmul_numpy) -------------------------------------

TEST_CASE("matmul_numpy_basic") {
  const Matrix A(2, 2, {1.0, 2.0, 3.0, 4.0});
  const Matrix B(2, 2, {5.0, 6.0, 7.0, 8.0});
  const Matrix C = matmul_vectorized(A, B);
  INFO("row-major: element (i, j) of an (m, n) matrix is data()[i * n + j]; " << kMatmulIndexHint);
  CHECK(close(C.to_tensor(), torch::tensor({{19.0, 22.0}, {43.0, 50.0}}, torch::kDouble),
              /*atol=*/0.0, /*rtol=*/1e-7));
}

TEST_CASE("matmul_numpy_matches_loops") {
  torch::manual_seed(1);
  const auto A = torch::randn({4, 5}, torch::kDouble);
  const auto B = torch::randn({5, 3}, torch::kDouble);
  const Matrix vectorized = matmul_vectorized(Matrix::from_tensor(A), Matrix::from_tensor(B));
  const Nested loops = matmul_loops(to_nested(A), to_nested(B));
  INFO("(4, 5) @ (5, 3): A has k = 5 columns, C has n = 3 columns — index A with k and C with n");
  CHECK(close(vectorized.to_tensor(), to_tensor(loops), /*atol=*/0.0, /*rtol=*/1e-6));
}

// --- matmul_torch ------------------------------------------------------------------------------

TEST_CASE("matmul_torch_basic") {
  const auto A = torch::tensor({{1.0f, 2.0f}, {3.0f, 4.0f}});
  const auto B = torch::tensor({{5.0f, 6.0f}, {7.0f, 8.0f}});
  CHECK(py_allclose(matmul_torch(A, B), torch::tensor({{19.0f, 22.0f}, {43.0f, 50.0f}})));
}

TEST_CASE("matmul_torch_matches_numpy") {
  torch::manual_seed(0);
  const auto A = torch::randn({4, 5});
  const auto B = torch::randn({5, 3});
  const auto torch_result = matmul_torch(A, B);
  const Matrix vectorized = matmul_vectorized(Matrix::from_tensor(A), Matrix::from_tensor(B));
  CHECK(close(torch_result, vectorized.to_tensor(), /*atol=*/0.0, /*rtol=*/1e-5));
}

TEST_CASE("matmul_torch_on_mps", "[accelerator]") {
  if (!torch::hasMPS()) G2C_SKIP("MPS is not available on this machine");
  torch::manual_seed(0);
  const auto A = torch::randn({64, 64}).to(torch::kMPS);
  const auto B = torch::randn({64, 64}).to(torch::kMPS);
  const auto C = matmul_torch(A, B);
  CHECK(C.device().is_mps());
  CHECK(C.sizes() == torch::IntArrayRef({64, 64}));
}

TEST_CASE("matmul_torch_on_cuda", "[accelerator]") {
  if (!torch::cuda::is_available()) G2C_SKIP("CUDA is not available on this machine");
  torch::manual_seed(0);
  const auto A = torch::randn({64, 64}).to(torch::kCUDA);
  const auto B = torch::randn({64, 64}).to(torch::kCUDA);
  const auto C = matmul_torch(A, B);
  INFO("the product must stay on the inputs' device: no .cpu() or .to() inside matmul_torch");
  CHECK(C.device().is_cuda());
  CHECK(C.sizes() == torch::IntArrayRef({64, 64}));
  CHECK(close(C.cpu(), torch::matmul(A.cpu(), B.cpu()), /*atol=*/1e-3, /*rtol=*/1e-3));
}

// --- broadcast_shapes --------------------------------------------------------------------------

TEST_CASE("broadcast_shapes_identical") {
  CHECK(broadcast_shapes({3}, {3}) == Shape{3});
  CHECK(broadcast_shapes({4, 5}, {4, 5}) == Shape{4, 5});
}

TEST_CASE("broadcast_shapes_with_scalar") {
  CHECK(broadcast_shapes({}, {3, 4}) == Shape{3, 4});
  CHECK(broadcast_shapes({3, 4}, {}) == Shape{3, 4});
}

TEST_CASE("broadcast_shapes_left_pad") {
  INFO(kRightAlignHint);
  CHECK(broadcast_shapes({4}, {3, 4}) == Shape{3, 4});
  CHECK(broadcast_shapes({3, 4}, {4}) == Shape{3, 4});
}

TEST_CASE("broadcast_shapes_size_one_stretch") {
  CHECK(broadcast_shapes({1, 4}, {3, 4}) == Shape{3, 4});
  CHECK(broadcast_shapes({3, 1}, {3, 4}) == Shape{3, 4});
}

TEST_CASE("broadcast_shapes_two_way_stretch") {
  CHECK(broadcast_shapes({1, 4}, {3, 1}) == Shape{3, 4});
}

TEST_CASE("broadcast_shapes_three_dim") {
  INFO(kRightAlignHint);
  CHECK(broadcast_shapes({2, 1, 4}, {3, 4}) == Shape{2, 3, 4});
}

TEST_CASE("broadcast_shapes_incompatible") {
  CHECK_THROWS_AS(broadcast_shapes({2, 3}, {2, 4}), g2c::ValueError);
  CHECK_THROWS_AS(broadcast_shapes({3}, {4}), g2c::ValueError);
  CHECK_THROWS_AS(broadcast_shapes({2, 3, 4}, {2, 5, 4}), g2c::ValueError);
}

// --- TinyArray::operator+ with broadcasting ----------------------------------------------------

TEST_CASE("tinyarray_add_same_shape") {
  const TinyArray a({1, 2, 3, 4}, {2, 2});
  const TinyArray b({10, 20, 30, 40}, {2, 2});
  const TinyArray c = a + b;
  CHECK(c.shape() == Shape{2, 2});
  CHECK(c.to_nested() == json{{11.0, 22.0}, {33.0, 44.0}});
}

TEST_CASE("tinyarray_add_broadcast_row_vector") {
  // (2, 3) + (3,): the row vector is added to every row.
  const TinyArray a({1, 2, 3, 4, 5, 6}, {2, 3});
  const TinyArray b({10, 20, 30}, {3});
  const TinyArray c = a + b;
  INFO(kRightAlignHint << "; b's only dim faces a's columns, and b has stride 0 along a's rows");
  CHECK(c.shape() == Shape{2, 3});
  CHECK(c.to_nested() == json{{11.0, 22.0, 33.0}, {14.0, 25.0, 36.0}});
}

TEST_CASE("tinyarray_add_broadcast_column_vector") {
  // (2, 3) + (2, 1): the column vector is added across every column.
  const TinyArray a({1, 2, 3, 4, 5, 6}, {2, 3});
  const TinyArray b({10, 20}, {2, 1});
  const TinyArray c = a + b;
  INFO("b's size-1 dim is stretched: its stride along the columns is 0");
  CHECK(c.shape() == Shape{2, 3});
  CHECK(c.to_nested() == json{{11.0, 12.0, 13.0}, {24.0, 25.0, 26.0}});
}

TEST_CASE("tinyarray_add_two_way_broadcast") {
  // (1, 3) + (2, 1): both inputs stretch.
  const TinyArray a({10, 20, 30}, {1, 3});
  const TinyArray b({1, 2}, {2, 1});
  const TinyArray c = a + b;
  CHECK(c.shape() == Shape{2, 3});
  CHECK(c.to_nested() == json{{11.0, 21.0, 31.0}, {12.0, 22.0, 32.0}});
}

TEST_CASE("tinyarray_add_matches_numpy") {
  // A random check against LibTorch's broadcasting (the Python test uses NumPy's).
  torch::manual_seed(2);
  const auto a_t = torch::randn({3, 1, 4}, torch::kDouble);
  const auto b_t = torch::randn({2, 4}, torch::kDouble);
  const TinyArray c = tiny(a_t) + tiny(b_t);
  REQUIRE(c.shape() == Shape{3, 2, 4});
  CHECK(close(flat(c), (a_t + b_t).reshape(-1), /*atol=*/0.0, /*rtol=*/1e-6));
}

// --- TinyArray::operator* with broadcasting ----------------------------------------------------

TEST_CASE("tinyarray_mul_same_shape") {
  const TinyArray a({1, 2, 3, 4}, {2, 2});
  const TinyArray b({10, 20, 30, 40}, {2, 2});
  CHECK((a * b).to_nested() == json{{10.0, 40.0}, {90.0, 160.0}});
}

TEST_CASE("tinyarray_mul_broadcast") {
  const TinyArray a({1, 2, 3, 4, 5, 6}, {2, 3});
  const TinyArray b({10, 20, 30}, {3});
  const TinyArray c = a * b;
  CHECK(c.shape() == Shape{2, 3});
  CHECK(c.to_nested() == json{{10.0, 40.0, 90.0}, {40.0, 100.0, 180.0}});
}

// --- linear ------------------------------------------------------------------------------------

TEST_CASE("linear_shape") {
  torch::manual_seed(0);
  const auto x = torch::randn({8, 16});
  const auto W = torch::randn({16, 4});
  const auto b = torch::randn({4});
  INFO("x (8, 16) @ W (16, 4) = (8, 4): W is (in, out), multiply by it as it is");
  CHECK(linear(x, W, b).sizes() == torch::IntArrayRef({8, 4}));
}

TEST_CASE("linear_known") {
  // y = [[1*3 + 2*5, 1*4 + 2*6]] + [[0.5, -0.5]] = [[13.5, 15.5]]
  const auto x = torch::tensor({{1.0f, 2.0f}});
  const auto W = torch::tensor({{3.0f, 4.0f}, {5.0f, 6.0f}});
  const auto b = torch::tensor({0.5f, -0.5f});
  const auto y = linear(x, W, b);
  INFO(
      "y = x @ W + b with W (in, out); [[11.5, 16.5]] would be x @ W^T + b: W is not transposed "
      "here (torch::nn::Linear's weight is (out, in), this W is not). Got "
      << y);
  CHECK(py_allclose(y, torch::tensor({{13.5f, 15.5f}})));
}

TEST_CASE("linear_bias_broadcasts_across_batch") {
  // The bias is added to every row of the batch.
  const auto x = torch::zeros({5, 3});
  const auto W = torch::zeros({3, 2});
  const auto b = torch::tensor({1.0f, 2.0f});
  CHECK(py_allclose(linear(x, W, b), b.unsqueeze(0).expand({5, 2})));
}

// --- softmax -----------------------------------------------------------------------------------

TEST_CASE("softmax_sums_to_one") {
  torch::manual_seed(0);
  const auto y = g2c::tensors::softmax(torch::randn({4, 8}), -1);
  CHECK(py_allclose(y.sum(-1), torch::ones({4}), 1e-6));
}

TEST_CASE("softmax_all_positive") {
  torch::manual_seed(0);
  const auto y = g2c::tensors::softmax(torch::randn({4, 8}), -1);
  CHECK((y > 0).all().item<bool>());
}

TEST_CASE("softmax_uniform_input") {
  // Equal logits give a uniform distribution.
  const auto y = g2c::tensors::softmax(torch::zeros({1, 4}), -1);
  CHECK(py_allclose(y, torch::full({1, 4}, 0.25)));
}

TEST_CASE("softmax_shift_invariance") {
  // softmax(x) == softmax(x + c): the stability trick rests on it.
  torch::manual_seed(0);
  const auto x = torch::randn({4, 8});
  const auto y1 = g2c::tensors::softmax(x, -1);
  const auto y2 = g2c::tensors::softmax(x + 1000.0, -1);
  INFO(kSoftmaxMaxHint << ". softmax(x + 1000) has "
                       << torch::logical_not(torch::isfinite(y2)).sum().item<int>()
                       << " non-finite values");
  CHECK(py_allclose(y1, y2, 1e-5));
}

TEST_CASE("softmax_handles_large_values") {
  // Large logits overflow a naive softmax; the stable one handles them.
  const auto x = torch::tensor({{1000.0f, 1001.0f, 1002.0f}});
  const auto y = g2c::tensors::softmax(x, -1);
  INFO(kSoftmaxMaxHint << ". Got " << y);
  CHECK(torch::isfinite(y).all().item<bool>());
  CHECK(py_allclose(y.sum(), torch::tensor(1.0f), 1e-6));
  CHECK(y[0][2].item<float>() > y[0][1].item<float>());
  CHECK(y[0][1].item<float>() > y[0][0].item<float>());
}

TEST_CASE("softmax_shifts_each_slice_by_its_own_max") {
  // An edition addition: shifting by the whole tensor's max is still exact for the row that holds
  // it, but a row far below it underflows to 0 / 0.
  const auto x = torch::tensor({{1000.0f, 1001.0f}, {-1000.0f, -999.0f}});
  const auto y = g2c::tensors::softmax(x, -1);
  const auto expected = torch::tensor({{0.26894142f, 0.73105858f}, {0.26894142f, 0.73105858f}});
  INFO("your softmax " << y
                       << "\nSubtract each slice's own max, x.max(dim, /*keepdim=*/true), "
                          "not x.max() of the whole tensor: the second row's exponents would all "
                          "underflow to 0");
  CHECK(py_allclose(y, expected, 1e-6));
}

TEST_CASE("softmax_matches_torch") {
  torch::manual_seed(0);
  const auto x = torch::randn({4, 8});
  CHECK(py_allclose(g2c::tensors::softmax(x, -1), torch::softmax(x, -1), 1e-6));
}

TEST_CASE("softmax_along_first_dim") {
  torch::manual_seed(0);
  const auto y = g2c::tensors::softmax(torch::randn({4, 8}), 0);
  INFO("the max and the sum are taken along dim (here 0), kept as a size-1 dim to broadcast back");
  CHECK(py_allclose(y.sum(0), torch::ones({8}), 1e-6));
}

// --- classifier_forward (provided, built on linear and softmax) --------------------------------

TEST_CASE("classifier_forward_returns_logits_and_probs") {
  torch::manual_seed(0);
  const auto x = torch::randn({4, 3});
  const auto W = torch::randn({3, 5});
  const auto b = torch::randn({5});
  const auto [logits, probs] = classifier_forward(x, W, b);
  CHECK(logits.sizes() == torch::IntArrayRef({4, 5}));
  CHECK(probs.sizes() == torch::IntArrayRef({4, 5}));
  CHECK(py_allclose(logits, torch::matmul(x, W) + b, 1e-6));
  CHECK(py_allclose(probs, torch::softmax(logits, -1), 1e-6));
  CHECK(py_allclose(probs.sum(-1), torch::ones({4}), 1e-6));
}
