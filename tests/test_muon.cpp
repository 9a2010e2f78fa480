// Beyond module muon course tests: orthogonalised updates, one for one with the Python edition's
// tests/test_muon.py, plus the additions listed in tests/course_tests.txt. Tests tagged [clean]
// pass on the scaffold: they check Muon's construction, its 2-D check and zero_grad, which are
// provided.
//
// Suggested order: zeropower_via_newtonschulz first (the newton_schulz_* tests: the orthogonal
// input, scale invariance and transposition pin nearly every bug), then Muon::step (muon_*), both
// in g2c/muon/optimizer.cpp. The AdamW-side test runs module 03b's AdamW inside Muon, so it also
// needs that module (yours, or `-DG2C_SOLUTIONS=03b,muon`).
//
// Python's torch.allclose(a, b, atol=x) means |a - b| <= x + 1e-5·|b|; py_allclose() keeps that
// meaning. Singular values come from LibTorch's own linalg_svdvals, an oracle independent of the
// code under test.
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <torch/csrc/autograd/profiler_legacy.h>
#include <torch/torch.h>

#include "g2c/core/errors.h"
#include "g2c/muon/optimizer.h"
#include "g2c/nn/optim.h"
#include "torch_test.h"

using g2c::muon::Muon;
using g2c::muon::MuonOptions;
using g2c::muon::zeropower_via_newtonschulz;
using g2c::testing::max_abs_diff;
using g2c::testing::py_allclose;

namespace {

/// A float32 leaf that requires grad, drawn after seeding when `seed` is given (Python's _leaf).
torch::Tensor leaf(std::vector<std::int64_t> shape, std::optional<std::uint64_t> seed = {},
                   double scale = 1.0) {
  if (seed) torch::manual_seed(*seed);
  return (torch::randn(shape) * scale).requires_grad_(true);
}

/// The parameter's value, detached and copied.
torch::Tensor value(const torch::Tensor& p) {
  return p.detach().clone();
}

/// Singular values of a finite matrix, in float64; a matrix with inf or nan entries fails the test
/// here, with what usually causes them.
torch::Tensor svdvals(const torch::Tensor& matrix) {
  INFO(
      "the matrix has inf or nan entries: the passes blew up. Divide G by its Frobenius norm "
      "(G.norm() + eps) before the first pass, so that every singular value starts in [0, 1]; "
      "and check the coefficients' order: a multiplies X, b (X Xᵀ) X, c (X Xᵀ)² X (NS_COEFFS "
      "= {3.4445, −4.7750, 2.0315})");
  REQUIRE(torch::isfinite(matrix).all().item<bool>());
  return torch::linalg_svdvals(matrix.detach().to(torch::kDouble));
}

std::string spectrum(const torch::Tensor& values) {
  std::string text;
  for (std::int64_t i = 0; i < values.numel(); ++i) {
    text += (i ? ", " : "") + std::to_string(values[i].item<double>()).substr(0, 6);
  }
  return "[" + text + "]";
}

/// The operand shapes of every matrix product (aten::mm, aten::addmm, aten::matmul) LibTorch runs
/// while `work` runs, as LibTorch's own (CPU) profiler records them.
std::vector<std::vector<std::vector<std::int64_t>>> products_during(
    const std::function<void()>& work) {
  namespace profiler = torch::autograd::profiler;
  profiler::enableProfilerLegacy(profiler::ProfilerConfig(torch::profiler::impl::ProfilerState::CPU,
                                                          /*report_input_shapes=*/true));
  try {
    work();
  } catch (...) {
    profiler::disableProfilerLegacy();
    throw;
  }
  std::vector<std::vector<std::vector<std::int64_t>>> products;
  for (const auto& thread_events : profiler::disableProfilerLegacy()) {
    for (const auto& event : thread_events) {
      const std::string name = event.name();
      if (event.kind() != profiler::EventKind::PushRange) continue;
      if (name != "aten::mm" && name != "aten::addmm" && name != "aten::matmul") continue;
      std::vector<std::vector<std::int64_t>> operands;
      for (const auto& shape : event.shapes()) {
        if (shape.size() == 2) operands.push_back(shape);
      }
      products.push_back(operands);
    }
  }
  return products;
}

}  // namespace

// --- Provided plumbing: green from the start ----------------------------------------------------

TEST_CASE("construction_and_state", "[clean]") {
  auto W = leaf({8, 4}, 0);
  auto b = leaf({4}, 1);
  Muon opt({W}, {b}, MuonOptions().lr(0.02));
  REQUIRE(opt.muon_params.size() == 1);
  CHECK(opt.muon_params[0].is_same(W));
  REQUIRE(opt.adamw_params.size() == 1);
  CHECK(opt.adamw_params[0].is_same(b));
  REQUIRE(opt.momentum_buffers.size() == 1);
  CHECK(opt.momentum_buffers[0].sizes() == torch::IntArrayRef({8, 4}));
  CHECK(opt.momentum_buffers[0].abs().sum().item<double>() == 0.0);
  CHECK(opt.step_count == 0);
  REQUIRE(opt.params().size() == 2);
  CHECK(opt.params()[0].is_same(W));
  CHECK(opt.params()[1].is_same(b));
}

TEST_CASE("construction_rejects_non_matrix_muon_params", "[clean]") {
  CHECK_THROWS_AS(Muon({leaf({4}, 2)}), g2c::ValueError);
  CHECK_THROWS_AS(Muon({leaf({2, 3, 4}, 3)}), g2c::ValueError);
}

TEST_CASE("zero_grad_clears_both_groups", "[clean]") {
  auto W = leaf({4, 4}, 4);
  auto b = leaf({4}, 5);
  W.mutable_grad() = torch::ones_like(W);
  b.mutable_grad() = torch::ones_like(b);
  Muon({W}, {b}).zero_grad();
  CHECK(W.grad().abs().sum().item<double>() == 0.0);
  CHECK(b.grad().abs().sum().item<double>() == 0.0);
}

// --- Newton–Schulz orthogonalisation ------------------------------------------------------------

TEST_CASE("newton_schulz_rejects_non_matrices") {
  INFO(
      "zeropower_via_newtonschulz orthogonalises a matrix: for a G whose dim() is not 2, throw "
      "g2c::ValueError naming its shape (before any arithmetic)");
  CHECK_THROWS_AS(zeropower_via_newtonschulz(torch::randn({4})), g2c::ValueError);
}

TEST_CASE("newton_schulz_preserves_shape") {
  torch::manual_seed(10);
  for (const auto& shape : {std::vector<std::int64_t>{16, 8}, {8, 16}, {8, 8}}) {
    const auto G = torch::randn(shape);
    INFO("G of shape ("
         << shape[0] << ", " << shape[1]
         << "): when you transpose a tall matrix "
            "(rows > cols) to work on the smaller Gram matrix, transpose the result back");
    CHECK(zeropower_via_newtonschulz(G).sizes() == G.sizes());
  }
}

TEST_CASE("newton_schulz_pushes_singular_values_toward_one") {
  torch::manual_seed(11);
  const auto G = torch::randn({16, 8});
  const auto before = svdvals(G / G.norm());
  const auto after = svdvals(zeropower_via_newtonschulz(G));
  INFO("singular values of NS(G): "
       << spectrum(after)
       << ". Five passes of f(s) = a s + b s³ + c s⁵ on a spectrum inside [0, 1] land every value "
          "in a band around 1. Values in the hundreds, inf or nan: X = G / (‖G‖_F + eps) first. "
          "Values near 0: check X = a X + (b A + c A A) X with A = X Xᵀ, and that all `steps` "
          "passes run");
  CHECK(before.max().item<double>() < 1.0);
  CHECK(((after > 0.4) & (after < 1.6)).all().item<bool>());
  const double mean = after.mean().item<double>();
  CHECK(mean > 0.7);
  CHECK(mean < 1.3);
}

TEST_CASE("newton_schulz_preserves_orthogonal_directions") {
  torch::manual_seed(12);
  const auto Q = std::get<0>(torch::linalg_qr(torch::randn({8, 8})));
  // Q's singular values are all 1, so the polynomial moves them as one: the result is c·Q. Not Q
  // itself: the Frobenius normalisation first scales every singular value to 1/√8.
  const auto R = zeropower_via_newtonschulz(Q);
  const auto c = (R * Q).sum() / (Q * Q).sum();
  INFO(
      "an orthogonal Q must come back as c·Q: its singular vectors untouched. The coefficients "
      "multiply X, (X Xᵀ) X and (X Xᵀ)² X in that order: a = 3.4445, b = −4.7750, c = 2.0315 "
      "(NS_COEFFS); c = "
      << c.item<double>() << ", largest difference " << max_abs_diff(R, c * Q));
  CHECK(py_allclose(R, c * Q, 1e-4));
  CHECK(c.item<double>() > 0.7);
  CHECK(c.item<double>() < 1.3);
}

TEST_CASE("newton_schulz_is_scale_invariant") {
  torch::manual_seed(13);
  const auto G = torch::randn({8, 8});
  INFO(
      "NS(7 G) must equal NS(G): divide by the Frobenius norm (G.norm() + eps) before the "
      "passes, so the gradient's size never matters");
  CHECK(py_allclose(zeropower_via_newtonschulz(G), zeropower_via_newtonschulz(7.0 * G), 1e-4));
}

TEST_CASE("newton_schulz_transpose_consistency") {
  torch::manual_seed(14);
  const auto G = torch::randn({12, 4});
  INFO("NS(Gᵀ) must equal NS(G)ᵀ: a tall G is transposed, orthogonalised and transposed back");
  CHECK(py_allclose(zeropower_via_newtonschulz(G.t()), zeropower_via_newtonschulz(G).t(), 1e-5));
}

TEST_CASE("newton_schulz_works_on_the_smaller_gram_matrix") {
  // A (64, 4) matrix: X Xᵀ of X as given is (64, 64), sixteen times the (4, 4) of Xᵀ. Both give
  // the same numbers, which is why no other test sees the difference: only the cost does, and at a
  // model's (4D, D) projections it is the cost of the whole optimizer.
  torch::manual_seed(15);
  const auto G = torch::randn({64, 4});
  const auto products = products_during([&] { zeropower_via_newtonschulz(G); });
  REQUIRE_FALSE(products.empty());
  for (const auto& operands : products) {
    REQUIRE(operands.size() >= 2);
    const auto& left = operands[operands.size() - 2];  // addmm(bias, a, b): a and b are last
    const auto& right = operands.back();
    if (left[0] == 64 && right[1] == 64) {
      FAIL("a product (" << left[0] << ", " << left[1] << ") @ (" << right[0] << ", " << right[1]
                         << "), a (64, 64) result: for a tall G (rows > cols) transpose X first, "
                            "so that A = X Xᵀ is (cols, cols), here (4, 4); transpose back at the "
                            "end");
    }
  }
}

// --- The Muon step ------------------------------------------------------------------------------

TEST_CASE("muon_step_moves_matrices_and_counts") {
  auto W = leaf({8, 4}, 20);
  Muon opt({W}, {}, MuonOptions().lr(0.01));
  W.mutable_grad() = torch::randn({8, 4});
  const auto before = value(W);
  opt.step();
  INFO(
      "after one step the matrix must move, its momentum buffer hold the gradient, and "
      "step_count be 1");
  CHECK_FALSE(torch::allclose(value(W), before));
  CHECK(opt.momentum_buffers[0].abs().sum().item<double>() > 0.0);
  CHECK(opt.step_count == 1);
}

TEST_CASE("muon_step_skips_none_grads") {
  auto W1 = leaf({4, 4}, 21);
  auto W2 = leaf({4, 4}, 22);
  Muon opt({W1, W2}, {}, MuonOptions().lr(0.01));
  W2.mutable_grad() = torch::randn({4, 4});
  const auto before = value(W1);
  opt.step();
  INFO(
      "a parameter without a gradient (p.grad() undefined) is skipped: continue to the next, "
      "and keep the index so that momentum_buffers[i] stays parameter i's");
  CHECK(torch::allclose(value(W1), before));
}

TEST_CASE("muon_update_is_gradient_scale_invariant") {
  // Muon's signature: NS normalises the momentum by its Frobenius norm, so a gradient 100 times
  // larger gives the same step.
  torch::manual_seed(23);
  const auto init = torch::randn({8, 4});
  const auto grad = torch::randn({8, 4});
  std::vector<torch::Tensor> results;
  for (const double factor : {1.0, 100.0}) {
    auto W = init.clone().requires_grad_(true);
    Muon opt({W}, {}, MuonOptions().lr(0.01));
    W.mutable_grad() = grad * factor;
    opt.step();
    results.push_back(value(W));
  }
  INFO(
      "the step from g and from 100 g must be the same: p moves by lr · √max(1, rows/cols) · "
      "NS(m), never by the momentum m itself");
  CHECK(py_allclose(results[0], results[1], 1e-4));
}

TEST_CASE("muon_update_is_near_orthogonal") {
  torch::manual_seed(24);
  auto W = leaf({8, 8}, 24);
  const auto before = value(W);
  Muon opt({W}, {}, MuonOptions().lr(0.01));
  W.mutable_grad() = torch::randn({8, 8});
  opt.step();
  // Square: the scale is 1, so the update is lr · O with O nearly orthogonal.
  const auto update = (before - value(W)) / 0.01;
  const auto s = svdvals(update);
  INFO("singular values of the update / lr: "
       << spectrum(s)
       << "; a square matrix moves by lr · NS(m) (subtracted), singular values near 1");
  CHECK(((s > 0.4) & (s < 1.6)).all().item<bool>());
}

TEST_CASE("muon_rectangular_scale_factor") {
  // A tall (8, 2) matrix takes a √(8/2) = 2 times larger step than its (2, 8) twin.
  torch::manual_seed(25);
  const auto grad = torch::randn({8, 2});
  auto tall = torch::zeros({8, 2}).requires_grad_(true);
  auto wide = torch::zeros({2, 8}).requires_grad_(true);
  Muon opt_tall({tall}, {}, MuonOptions().lr(0.01));
  Muon opt_wide({wide}, {}, MuonOptions().lr(0.01));
  tall.mutable_grad() = grad;
  wide.mutable_grad() = grad.t().clone();
  opt_tall.step();
  opt_wide.step();
  const auto ratio = value(tall).norm() / value(wide).norm();
  INFO("‖step of the (8, 2) matrix‖ / ‖step of its (2, 8) twin‖ = "
       << ratio.item<double>()
       << ", expected 2: scale the update by √max(1, rows/cols) with rows = p.size(0), cols = "
          "p.size(1)");
  CHECK(py_allclose(ratio, torch::tensor(2.0f), 1e-3));
}

TEST_CASE("muon_weight_decay_shrinks_before_update") {
  torch::manual_seed(26);
  auto W = leaf({4, 4}, 26);
  Muon opt({W}, {}, MuonOptions().lr(0.1).weight_decay(0.5));
  W.mutable_grad() = torch::zeros({4, 4});
  const auto before = value(W);
  opt.step();
  // A zero gradient leaves the buffer at zero and NS of zero is zero: only the decay acts.
  INFO(
      "with a zero gradient only the decay acts: p ← p (1 − lr · weight_decay) = 0.95 p. NS of a "
      "zero matrix must be zero (the + eps in the normalisation keeps it finite)");
  CHECK(py_allclose(value(W), before * (1 - 0.1 * 0.5), 1e-6));
}

TEST_CASE("muon_momentum_buffer_keeps_the_raw_momentum") {
  torch::manual_seed(29);
  auto W = leaf({6, 3}, 29);
  Muon opt({W}, {}, MuonOptions().lr(0.01).momentum(0.9));
  const auto g1 = torch::randn({6, 3});
  const auto g2 = torch::randn({6, 3});
  W.mutable_grad() = g1.clone();
  opt.step();
  {
    INFO(
        "after the first step the buffer must be the gradient itself, m = 0.9 · 0 + g: no "
        "(1 − μ) damping, and the buffer is never orthogonalised in place (O = NS(m) is a new "
        "tensor)");
    CHECK(py_allclose(opt.momentum_buffers[0], g1, 1e-7));
  }
  W.mutable_grad() = g2.clone();
  const auto before = value(W);
  opt.step();
  {
    INFO("after the second step the buffer must be m = 0.9 g1 + g2");
    CHECK(py_allclose(opt.momentum_buffers[0], 0.9 * g1 + g2, 1e-6));
  }
  const auto expected = before - 0.01 * std::sqrt(2.0) * zeropower_via_newtonschulz(0.9 * g1 + g2);
  INFO(
      "the second step must move W by −lr · √2 · NS(m) with m = 0.9 g1 + g2: orthogonalise the "
      "momentum buffer (after adding g), not the gradient; largest difference "
      << max_abs_diff(value(W), expected));
  CHECK(py_allclose(value(W), expected, 1e-6));
}

TEST_CASE("muon_step_follows_the_formula") {
  // Two matrices of different shapes after one without a gradient, decay on, three Newton–Schulz
  // passes: each moves by the recipe exactly, with the student's own Newton–Schulz as O.
  torch::manual_seed(30);
  auto idle = leaf({3, 3}, 32);
  auto tall = leaf({6, 4}, 30);
  auto wide = leaf({4, 6}, 31);
  const double lr = 0.05;
  const double decay = 0.2;
  Muon opt({idle, tall, wide}, {}, MuonOptions().lr(lr).weight_decay(decay).ns_steps(3));
  const auto g_tall = torch::randn({6, 4});
  const auto g_wide = torch::randn({4, 6});
  tall.mutable_grad() = g_tall.clone();
  wide.mutable_grad() = g_wide.clone();
  const auto idle_before = value(idle);
  const auto tall_before = value(tall);
  const auto wide_before = value(wide);
  opt.step();
  {
    INFO("a parameter without a gradient is skipped with `continue`: the ones after it still step");
    CHECK(torch::equal(value(idle), idle_before));
    CHECK_FALSE(torch::allclose(value(tall), tall_before));
  }
  const auto tall_expected =
      tall_before * (1 - lr * decay) - lr * std::sqrt(1.5) * zeropower_via_newtonschulz(g_tall, 3);
  const auto wide_expected =
      wide_before * (1 - lr * decay) - lr * zeropower_via_newtonschulz(g_wide, 3);
  {
    INFO(
        "p ← p (1 − lr · wd) − lr · √max(1, rows/cols) · NS(m, ns_steps): decay the weight first, "
        "then subtract the scaled update (decaying after it shrinks the update too); here "
        "√(6/4) for the (6, 4) matrix — rows/cols in floating point: 6 / 4 in integers is 1 — "
        "and 1 for the (4, 6); NS with this optimizer's ns_steps (3 here). Largest differences "
        << max_abs_diff(value(tall), tall_expected) << " and "
        << max_abs_diff(value(wide), wide_expected));
    CHECK(py_allclose(value(tall), tall_expected, 1e-6));
    CHECK(py_allclose(value(wide), wide_expected, 1e-6));
  }
  INFO("step_count counts step() calls, once per call, not once per parameter");
  CHECK(opt.step_count == 1);
}

TEST_CASE("muon_adamw_side_follows_adamw") {
  // The other group is driven by module 03b's AdamW itself.
  torch::manual_seed(27);
  const auto init = torch::randn({6});
  const auto grad = torch::randn({6});
  auto b_muon = init.clone().requires_grad_(true);
  auto b_ref = init.clone().requires_grad_(true);
  Muon opt({}, {b_muon}, MuonOptions().adamw_lr(1e-3));
  g2c::nn::AdamW ref({b_ref}, 1e-3);
  b_muon.mutable_grad() = grad.clone();
  b_ref.mutable_grad() = grad.clone();
  opt.step();
  ref.step();
  INFO(
      "after the Muon parameters, when adamw_params is not empty, run one adamw.step(): the "
      "AdamW side is module 03b's optimizer, with its own lr");
  CHECK(py_allclose(value(b_muon), value(b_ref), 1e-8));
}

TEST_CASE("muon_training_smoke") {
  // Muon alone drives a least-squares problem to a lower loss.
  torch::manual_seed(28);
  const auto X = torch::randn({4, 32});
  const auto W_true = torch::randn({4, 4});
  const auto Y = W_true.mm(X);
  auto W = torch::zeros({4, 4}).requires_grad_(true);
  Muon opt({W}, {}, MuonOptions().lr(0.05).momentum(0.9));
  const auto loss_value = [&] { return (W.mm(X) - Y).pow(2).mean(); };
  const double initial = loss_value().item<double>();
  for (int i = 0; i < 60; ++i) {
    opt.zero_grad();
    loss_value().backward();
    opt.step();
  }
  const double final_loss = loss_value().item<double>();
  INFO("loss " << initial << " -> " << final_loss
               << " after 60 steps; it must fall below a fifth. Step against the momentum "
                  "(p − lr · O), and keep the buffer's raw momentum between steps");
  CHECK(final_loss < 0.2 * initial);
}
