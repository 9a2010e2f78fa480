// Module 03 framework tests: the hand-written layers, loss and SGD against LibTorch's own
// implementations, float64 gradient checks, devices and bad input. (AdamW, module 03b, is checked
// in training_oracles.cpp.)
#include <cmath>

#include <torch/torch.h>

#include "g2c/core/errors.h"
#include "g2c/nn/activations.h"
#include "g2c/nn/device.h"
#include "g2c/nn/fused_cross_entropy.h"
#include "g2c/nn/linear.h"
#include "g2c/nn/losses.h"
#include "g2c/nn/optim.h"
#include "g2c/nn/sequential.h"
#include "g2c/nn/training.h"
#include "torch_test.h"

namespace F = torch::nn::functional;
using namespace g2c::nn;
using g2c::testing::close;
using g2c::testing::max_abs_diff;

TEST_CASE("linear_matches_functional_linear_with_transposed_weight", "[nn]") {
  torch::manual_seed(1);
  Linear layer(7, 5);
  {
    torch::NoGradGuard no_grad;
    layer->b.uniform_(-1, 1);
  }
  const torch::Tensor x = torch::randn({2, 3, 7});
  const torch::Tensor expected = F::linear(x, layer->W.t(), layer->b);
  const torch::Tensor actual = layer(x);
  INFO("max |difference| = " << max_abs_diff(actual, expected));
  CHECK(close(actual, expected, 1e-5));
}

TEST_CASE("linear_init_range_is_one_over_sqrt_in", "[nn]") {
  Linear layer(64, 256);
  CHECK(layer->W.abs().max().item<double>() <= 1.0 / std::sqrt(64.0));
  CHECK(layer->W.std().item<double>() > 0.5 / std::sqrt(3.0 * 64.0));
}

TEST_CASE("linear_rejects_wrong_feature_size_with_shape", "[nn]") {
  Linear layer(4, 2);
  CHECK_THROWS_AS(layer(torch::randn({3, 5})), g2c::ValueError);
  CHECK_THROWS_WITH(layer(torch::randn({3, 5})), Catch::Contains("4") && Catch::Contains("5"));
}

TEST_CASE("cross_entropy_matches_functional_including_extreme_logits", "[nn]") {
  torch::manual_seed(2);
  const float scale = GENERATE(1.0f, 30.0f, 1000.0f);
  const torch::Tensor logits = torch::randn({16, 9}) * scale;
  const torch::Tensor targets = torch::randint(0, 9, {16}, torch::kLong);
  const torch::Tensor actual = CrossEntropyLoss()(logits, targets);
  const torch::Tensor expected = F::cross_entropy(logits, targets);
  INFO("scale " << scale << ", max |difference| = " << max_abs_diff(actual, expected));
  CHECK(std::isfinite(actual.item<double>()));
  CHECK(close(actual, expected, 1e-4 * scale, 1e-5));
}

// The fast path (g2c/nn/fused_cross_entropy.h) against the course's loss: the same value and the
// same gradient, for ordinary and extreme logits, and the same refusals.
TEST_CASE("fused_cross_entropy_matches_the_course_cross_entropy", "[nn]") {
  torch::manual_seed(31);
  const double scale = GENERATE(1.0, 1000.0);
  const auto logits = (scale * torch::randn({16, 50}, torch::kDouble)).requires_grad_();
  const auto fused_logits = logits.detach().clone().requires_grad_();
  const auto targets = torch::randint(0, 50, {16}, torch::kLong);
  const auto course = CrossEntropyLoss()(logits, targets);
  const auto fused = fused_cross_entropy(fused_logits, targets);
  course.backward();
  fused.backward();
  INFO("logits of scale " << scale << ": loss " << course.item<double>() << " vs "
                          << fused.item<double>());
  CHECK(close(fused, course, 1e-9 * scale));
  CHECK(close(fused_logits.grad(), logits.grad(), 1e-12));
  CHECK_THROWS_AS(fused_cross_entropy(torch::zeros({2, 3}), torch::tensor({0})), g2c::ValueError);
  CHECK_THROWS_AS(fused_cross_entropy(torch::zeros({2, 3, 4}), torch::tensor({0, 1})),
                  g2c::ValueError);
}

TEST_CASE("cross_entropy_rejects_bad_shapes", "[nn]") {
  CrossEntropyLoss loss;
  CHECK_THROWS_AS(loss(torch::randn({4}), torch::zeros({4}, torch::kLong)), g2c::ValueError);
  CHECK_THROWS_AS(loss(torch::randn({4, 3}), torch::zeros({5}, torch::kLong)), g2c::ValueError);
  CHECK_THROWS_AS(loss(torch::randn({4, 3}), torch::zeros({4})), g2c::ValueError);
}

TEST_CASE("float64_gradients_match_finite_differences", "[nn]") {
  torch::manual_seed(3);
  Sequential model(Linear(3, 4), Tanh(), Linear(4, 3), Sigmoid(), Linear(3, 3));
  model->to(torch::kDouble);
  const torch::Tensor x = torch::randn({5, 3}, torch::kDouble);
  const torch::Tensor targets = torch::tensor({0, 2, 1, 1, 0}, torch::kLong);
  const CrossEntropyLoss loss;
  auto objective = [&] { return loss(model(x), targets); };

  g2c::testing::check_gradients(objective, model->parameters(), 1e-7);
}

namespace {

/// Runs `steps` updates of ours and LibTorch's optimizer on the same problem from the same start
/// and returns the largest parameter difference seen after any step.
template <typename Ours, typename Theirs>
double optimizer_divergence(int steps,
                            const std::function<Ours(std::vector<torch::Tensor>)>& make_ours,
                            const std::function<Theirs(std::vector<torch::Tensor>)>& make_theirs) {
  torch::manual_seed(4);
  const torch::Tensor start_w = torch::randn({6, 3});
  const torch::Tensor start_b = torch::randn({3});
  const torch::Tensor x = torch::randn({32, 6});
  const torch::Tensor y = torch::randn({32, 3});
  auto fresh = [](const torch::Tensor& t) { return t.clone().requires_grad_(); };
  std::vector<torch::Tensor> ours_params{fresh(start_w), fresh(start_b)};
  std::vector<torch::Tensor> theirs_params{fresh(start_w), fresh(start_b)};
  Ours ours = make_ours(ours_params);
  Theirs theirs = make_theirs(theirs_params);
  double worst = 0.0;
  for (int step = 0; step < steps; ++step) {
    ours.zero_grad();
    theirs.zero_grad();
    (torch::matmul(x, ours_params[0]) + ours_params[1] - y).pow(2).mean().backward();
    (torch::matmul(x, theirs_params[0]) + theirs_params[1] - y).pow(2).mean().backward();
    ours.step();
    theirs.step();
    for (std::size_t i = 0; i < ours_params.size(); ++i)
      worst = std::max(worst, max_abs_diff(ours_params[i], theirs_params[i]));
  }
  return worst;
}

}  // namespace

TEST_CASE("sgd_matches_torch_optim_sgd_step_for_step", "[nn]") {
  const double weight_decay = GENERATE(0.0, 0.1);
  const double worst = optimizer_divergence<SGD, torch::optim::SGD>(
      20, [&](auto params) { return SGD(params, 0.05, weight_decay); },
      [&](auto params) {
        return torch::optim::SGD(params, torch::optim::SGDOptions(0.05).weight_decay(weight_decay));
      });
  INFO("weight_decay " << weight_decay << ", max |difference| over 20 steps = " << worst);
  CHECK(worst < 1e-6);
}

TEST_CASE("resolve_device_names_and_errors", "[nn]") {
  CHECK(resolve_device("cpu").is_cpu());
  CHECK_THROWS_AS(resolve_device("tpu"), g2c::ValueError);
  CHECK_THROWS_WITH(resolve_device("tpu"), Catch::Contains("tpu"));
  if (!torch::cuda::is_available()) {
    CHECK_THROWS_AS(resolve_device("cuda"), g2c::ValueError);
    CHECK_THROWS_WITH(resolve_device("cuda"), Catch::Contains("cuda"));
  }
  if (!torch::hasMPS()) CHECK_THROWS_AS(resolve_device("mps"), g2c::ValueError);
  const torch::Device automatic = resolve_device();
  if (torch::cuda::is_available())
    CHECK(automatic.is_cuda());
  else if (!torch::hasMPS())
    CHECK(automatic.is_cpu());
}

TEST_CASE("to_moves_existing_gradients_and_changes_dtype", "[nn]") {
  Linear layer(3, 2);
  layer(torch::randn({4, 3})).sum().backward();
  layer->to(torch::kDouble);
  CHECK(layer->W.scalar_type() == torch::kDouble);
  REQUIRE(layer->W.grad().defined());
  CHECK(layer->W.grad().scalar_type() == torch::kDouble);
  CHECK(layer->W.is_leaf());
}

TEST_CASE("training_on_cuda_matches_cpu", "[nn]") {
  if (!torch::cuda::is_available()) G2C_SKIP("CUDA is not available on this machine");
  const torch::Tensor x = torch::randn({64, 2});
  const torch::Tensor y = (x.select(1, 0) * x.select(1, 1) > 0).to(torch::kLong);
  torch::manual_seed(5);
  Sequential cpu_model = build_2d_classifier(8);
  torch::manual_seed(5);
  Sequential cuda_model = build_2d_classifier(8);
  cuda_model->to(torch::Device(torch::kCUDA));
  const auto cpu_losses = train_classifier(*cpu_model, x, y, 50, 0.1);
  const auto cuda_losses =
      train_classifier(*cuda_model, x.to(torch::kCUDA), y.to(torch::kCUDA), 50, 0.1);
  REQUIRE(cpu_losses.size() == cuda_losses.size());
  CHECK(cuda_losses.back() == Approx(cpu_losses.back()).margin(1e-4));
}

TEST_CASE("epoch_helpers_reject_empty_loaders", "[nn]") {
  Sequential model = build_mnist_mlp(16);
  SGD sgd(model->parameters(), 0.1);
  CHECK_THROWS_WITH(train_one_epoch(*model, {}, sgd, CrossEntropyLoss()),
                    Catch::Contains("loader produced no examples"));
  CHECK_THROWS_WITH(evaluate_accuracy(*model, {}), Catch::Contains("loader produced no examples"));
}

TEST_CASE("train_one_epoch_weights_the_mean_by_batch_size", "[nn]") {
  torch::manual_seed(6);
  Sequential model = build_mnist_mlp(16);
  std::vector<Batch> batches{
      {torch::randn({5, 1, 28, 28}), torch::randint(0, 10, {5}, torch::kLong)},
      {torch::randn({1, 28, 28}), torch::randint(0, 10, {1}, torch::kLong)}};
  // With lr = 0 the model does not change, so the expected mean is computable beforehand.
  double weighted = 0.0;
  {
    torch::NoGradGuard no_grad;
    for (const auto& batch : batches) {
      const auto logits = model(batch.inputs.reshape({batch.inputs.size(0), -1}));
      weighted += F::cross_entropy(logits, batch.targets).item<double>() * batch.inputs.size(0);
    }
  }
  SGD frozen(model->parameters(), 0.0);
  CHECK(train_one_epoch(*model, batches, frozen, CrossEntropyLoss()) == Approx(weighted / 6.0));
  const double accuracy = evaluate_accuracy(*model, batches);
  CHECK(accuracy >= 0.0);
  CHECK(accuracy <= 1.0);
}
