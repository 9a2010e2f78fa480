// Module 03b framework tests: AdamW against torch::optim::AdamW (float32 and float64, with and
// without weight decay, and on CUDA) and against a scalar hand loop where the course's global
// step counter differs from LibTorch's per-parameter one; the optimizer state's device, dtype and
// argument checks; clip_grad_norm_ against torch::nn::utils::clip_grad_norm_ over random sets of
// gradients; cosine_with_warmup against an independent closed form, its continuity at the end of
// the warmup and its range.
#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include <torch/torch.h>

#include "g2c/core/errors.h"
#include "g2c/nn/fused_adamw.h"
#include "g2c/nn/optim.h"
#include "g2c/training/clip.h"
#include "g2c/training/schedule.h"
#include "torch_test.h"

using g2c::nn::AdamW;
using g2c::nn::AdamWOptions;
using g2c::nn::FusedAdamW;
using g2c::testing::close;
using g2c::testing::max_abs_diff;
using g2c::training::clip_grad_norm_;
using g2c::training::cosine_with_warmup;

namespace {

/// Runs `steps` updates of ours and of torch::optim::AdamW from the same start on the same small
/// two-layer regression (four parameters) and returns the largest parameter difference seen
/// after any step.
double adamw_divergence(torch::Dtype dtype, torch::Device device, double weight_decay,
                        int steps = 25) {
  torch::manual_seed(4);
  const auto options = torch::TensorOptions().dtype(dtype).device(device);
  const std::vector<torch::Tensor> start{torch::randn({6, 8}), torch::randn({8}),
                                         torch::randn({8, 3}), torch::randn({3})};
  const auto x = torch::randn({32, 6}).to(options);
  const auto y = torch::randn({32, 3}).to(options);
  std::vector<torch::Tensor> ours_params, theirs_params;
  for (const auto& t : start) {
    ours_params.push_back(t.to(options).requires_grad_());
    theirs_params.push_back(t.to(options).requires_grad_());
  }
  auto loss = [&](const std::vector<torch::Tensor>& p) {
    const auto hidden = torch::tanh(torch::matmul(x, p[0]) + p[1]);  // (32, 8)
    return (torch::matmul(hidden, p[2]) + p[3] - y).pow(2).mean();
  };
  AdamW ours(ours_params, 0.01, {0.9, 0.95}, 1e-8, weight_decay);
  torch::optim::AdamW theirs(
      theirs_params,
      torch::optim::AdamWOptions(0.01).betas({0.9, 0.95}).eps(1e-8).weight_decay(weight_decay));
  double worst = 0.0;
  for (int step = 0; step < steps; ++step) {
    ours.zero_grad();
    theirs.zero_grad();
    loss(ours_params).backward();
    loss(theirs_params).backward();
    ours.step();
    theirs.step();
    for (std::size_t i = 0; i < ours_params.size(); ++i)
      worst = std::max(worst, max_abs_diff(ours_params[i].cpu(), theirs_params[i].cpu()));
  }
  return worst;
}

/// `count` parameters of random shapes (1 to 3 dimensions) with random gradients of typical size
/// `scale`; `every_other_gradless` leaves the odd ones without a gradient.
std::vector<torch::Tensor> random_parameters(int count, double scale, torch::Dtype dtype,
                                             bool every_other_gradless = false) {
  std::vector<torch::Tensor> params;
  for (int i = 0; i < count; ++i) {
    std::vector<std::int64_t> shape;
    const auto dims = torch::randint(1, 4, {1}).item<std::int64_t>();
    for (std::int64_t d = 0; d < dims; ++d)
      shape.push_back(torch::randint(1, 9, {1}).item<std::int64_t>());
    auto p = torch::randn(shape, dtype).requires_grad_();
    if (!(every_other_gradless && i % 2 == 1))
      p.mutable_grad() = scale * torch::randn(shape, dtype);
    params.push_back(p);
  }
  return params;
}

/// The same parameters with copies of their gradients (undefined ones stay undefined).
std::vector<torch::Tensor> copies(const std::vector<torch::Tensor>& params) {
  std::vector<torch::Tensor> out;
  for (const auto& p : params) {
    auto copy = p.detach().clone().requires_grad_();
    if (p.grad().defined()) copy.mutable_grad() = p.grad().clone();
    out.push_back(copy);
  }
  return out;
}

/// The schedule written another way: ½(1 + cos x) = cos²(x / 2).
double schedule_closed_form(std::int64_t step, std::int64_t warmup, std::int64_t max_steps,
                            double max_lr, double min_lr) {
  if (warmup > 0 && step < warmup) {
    return max_lr * static_cast<double>(step + 1) / static_cast<double>(warmup);
  }
  if (step >= max_steps) return min_lr;
  const double progress =
      static_cast<double>(step - warmup) / static_cast<double>(max_steps - warmup);
  const double c = std::cos(std::numbers::pi * progress / 2.0);
  return min_lr + (max_lr - min_lr) * c * c;
}

struct ScheduleCase {
  std::int64_t warmup, max_steps;
  double max_lr, min_lr;
};

// Warmup and decay of every length, no warmup, a one-step decay, and max_steps == warmup_steps
// (the ramp jumps straight to min_lr).
const std::vector<ScheduleCase> kScheduleCases{
    {10, 110, 1e-3, 1e-5}, {0, 100, 1.0, 0.0}, {100, 1000, 3e-4, 3e-5}, {1, 2, 0.5, 0.1},
    {7, 7, 1.0, 0.2},      {50, 60, 2.0, 1.0}, {3, 500, 6e-4, 6e-5},    {0, 1, 1e-2, 1e-3}};

}  // namespace

// --- AdamW -------------------------------------------------------------------------------------

TEST_CASE("adamw_matches_torch_optim_adamw_step_for_step", "[training]") {
  const auto dtype = GENERATE(torch::kFloat, torch::kDouble);
  const double weight_decay = GENERATE(0.0, 0.01, 0.3);
  const double worst = adamw_divergence(dtype, torch::kCPU, weight_decay);
  INFO(c10::toString(dtype) << ", weight_decay " << weight_decay
                            << ", max |difference| over 25 steps = " << worst);
  CHECK(worst < (dtype == torch::kDouble ? 1e-12 : 1e-5));
}

TEST_CASE("adamw_matches_torch_optim_adamw_on_cuda", "[training]") {
  if (!torch::cuda::is_available()) G2C_SKIP("CUDA is not available on this machine");
  const double weight_decay = GENERATE(0.0, 0.3);
  const double worst = adamw_divergence(torch::kFloat, torch::kCUDA, weight_decay);
  INFO("weight_decay " << weight_decay << ", max |difference| over 25 steps = " << worst);
  CHECK(worst < 1e-5);
}

// The fast path (g2c/nn/fused_adamw.h) against the course's AdamW: the same parameters, moments
// and step count after every step, with and without decay, and with parameters that have no
// gradient (both must skip them and leave their moments alone).
TEST_CASE("fused_adamw_matches_the_course_adamw_step_for_step", "[training]") {
  const auto dtype = GENERATE(torch::kFloat, torch::kDouble);
  const double weight_decay = GENERATE(0.0, 0.1);
  const bool every_other_gradless = GENERATE(false, true);
  torch::manual_seed(1234);
  const auto course_params = random_parameters(6, 0.1, dtype, every_other_gradless);
  const auto fused_params = copies(course_params);
  const auto options = AdamWOptions(1e-2).beta1(0.8).beta2(0.95).weight_decay(weight_decay);
  AdamW course(course_params, options);
  FusedAdamW fused(fused_params, options);
  double worst = 0.0;
  for (int step = 0; step < 20; ++step) {
    for (std::size_t i = 0; i < course_params.size(); ++i) {
      if (!course_params[i].grad().defined()) continue;
      const auto grad = 0.1 * torch::randn_like(course_params[i]);
      course_params[i].mutable_grad().copy_(grad);
      fused_params[i].mutable_grad().copy_(grad);
    }
    course.step();
    fused.step();
    for (std::size_t i = 0; i < course_params.size(); ++i) {
      worst =
          std::max({worst, max_abs_diff(course_params[i], fused_params[i]),
                    max_abs_diff(course.m[i], fused.m[i]), max_abs_diff(course.v[i], fused.v[i])});
    }
  }
  INFO(c10::toString(dtype) << ", weight_decay " << weight_decay << ", gradless parameters "
                            << every_other_gradless
                            << ": max |difference| in parameters, m and v over 20 steps = "
                            << worst);
  CHECK(worst < (dtype == torch::kDouble ? 1e-12 : 1e-6));
  CHECK(fused.step_count == course.step_count);
  for (std::size_t i = 0; i < course_params.size(); ++i) {
    if (course_params[i].grad().defined()) continue;
    CHECK(fused.m[i].abs().sum().item<double>() == 0.0);  // skipped: never updated
  }
}

TEST_CASE("make_optimizer_builds_the_course_optimizers_by_name", "[training]") {
  const auto params = random_parameters(2, 0.1, torch::kFloat);
  CHECK(dynamic_cast<g2c::nn::SGD*>(g2c::nn::make_optimizer("sgd", params, 0.1).get()) != nullptr);
  const auto adamw = g2c::nn::make_optimizer("AdamW", params, 0.1, 0.01);
  REQUIRE(dynamic_cast<AdamW*>(adamw.get()) != nullptr);
  CHECK(dynamic_cast<FusedAdamW*>(adamw.get()) == nullptr);
  CHECK(dynamic_cast<AdamW*>(adamw.get())->weight_decay == 0.01);
  CHECK(dynamic_cast<FusedAdamW*>(g2c::nn::make_optimizer("adamw", params, 0.1, 0.0, true).get()) !=
        nullptr);
  CHECK_THROWS_WITH(g2c::nn::make_optimizer("adam", params, 0.1),
                    Catch::Contains("optimizer must be 'sgd' or 'adamw', got 'adam'"));
}

TEST_CASE("adamw_counts_one_step_per_call_for_all_parameters", "[training]") {
  // p1 has a gradient on every step, p2 only from the third step on. The course's AdamW
  // bias-corrects p2 with the global t (3, 4, 5), which a scalar loop reproduces here;
  // torch::optim::AdamW would use p2's own count (1, 2, 3).
  const double lr = 0.05, beta1 = 0.9, beta2 = 0.99, eps = 1e-8, weight_decay = 0.1;
  torch::Tensor p1 = torch::tensor({1.0}, torch::kDouble).requires_grad_();
  torch::Tensor p2 = torch::tensor({-2.0}, torch::kDouble).requires_grad_();
  AdamW opt({p1, p2}, lr, {beta1, beta2}, eps, weight_decay);

  opt.step();  // no gradient anywhere: only the counter moves
  CHECK(opt.step_count == 1);
  CHECK(p1.item<double>() == 1.0);
  CHECK(torch::equal(opt.m[0], torch::zeros_like(p1)));

  double value[2] = {1.0, -2.0}, m[2] = {0, 0}, v[2] = {0, 0};
  const double grads[5][2] = {{0, 0}, {0.3, 0}, {-0.2, 0.7}, {0.5, -0.1}, {0.1, 0.4}};
  for (int t = 2; t <= 5; ++t) {
    p1.mutable_grad() = torch::tensor({grads[t - 1][0]}, torch::kDouble);
    p2.mutable_grad() = t >= 3 ? torch::tensor({grads[t - 1][1]}, torch::kDouble) : torch::Tensor();
    opt.step();
    for (int i = 0; i < 2; ++i) {
      if (i == 1 && t < 3) continue;  // no gradient: untouched
      const double g = grads[t - 1][i];
      m[i] = beta1 * m[i] + (1 - beta1) * g;
      v[i] = beta2 * v[i] + (1 - beta2) * g * g;
      const double m_hat = m[i] / (1 - std::pow(beta1, t));
      const double v_hat = v[i] / (1 - std::pow(beta2, t));
      value[i] *= 1 - lr * weight_decay;
      value[i] -= lr * m_hat / (std::sqrt(v_hat) + eps);
    }
    INFO("after step " << t << ": p1 " << p1.item<double>() << " vs " << value[0] << ", p2 "
                       << p2.item<double>() << " vs " << value[1]);
    CHECK(opt.step_count == t);
    CHECK(p1.item<double>() == Approx(value[0]).epsilon(1e-12));
    CHECK(p2.item<double>() == Approx(value[1]).epsilon(1e-12));
  }
}

TEST_CASE("adamw_state_matches_each_parameter_dtype_and_shape", "[training]") {
  torch::Tensor a = torch::randn({3, 4}, torch::kDouble).requires_grad_();
  torch::Tensor b = torch::randn({5}).requires_grad_();
  AdamW opt({a, b}, 1e-3);
  CHECK(opt.weight_decay == 0.0);  // the course's default, unlike torch::optim::AdamW's 0.01
  for (std::size_t i = 0; i < 2; ++i) {
    for (const auto& state : {opt.m[i], opt.v[i]}) {
      CHECK(state.sizes() == opt.params()[i].sizes());
      CHECK(state.scalar_type() == opt.params()[i].scalar_type());
      CHECK(state.device() == opt.params()[i].device());
      CHECK_FALSE(state.requires_grad());
    }
  }
  a.mutable_grad() = torch::ones_like(a);
  opt.step();
  CHECK(opt.m[0].scalar_type() == torch::kDouble);
  CHECK(opt.m[1].scalar_type() == torch::kFloat);
}

TEST_CASE("adamw_state_lives_on_cuda_with_the_parameters", "[training]") {
  if (!torch::cuda::is_available()) G2C_SKIP("CUDA is not available on this machine");
  torch::Tensor p = torch::randn({4, 4}, torch::Device(torch::kCUDA)).requires_grad_();
  AdamW opt({p}, 1e-3);
  CHECK(opt.m[0].is_cuda());
  CHECK(opt.v[0].is_cuda());
  p.mutable_grad() = torch::ones_like(p);
  opt.step();
  CHECK(opt.m[0].is_cuda());
  CHECK(p.is_cuda());
}

TEST_CASE("adamw_rejects_bad_arguments_with_their_values", "[training]") {
  const std::vector<torch::Tensor> params{torch::zeros({2}).requires_grad_()};
  CHECK_THROWS_WITH(AdamW(params, -1e-3),
                    Catch::Contains("learning rate") && Catch::Contains("-0.001"));
  CHECK_THROWS_WITH(AdamW(params, std::nan("")), Catch::Contains("learning rate"));
  CHECK_THROWS_WITH(AdamW(params, 1e-3, {1.0, 0.999}),
                    Catch::Contains("betas") && Catch::Contains("(1, 0.999)"));
  CHECK_THROWS_AS(AdamW(params, 1e-3, {0.9, -0.1}), g2c::ValueError);
  CHECK_THROWS_WITH(AdamW(params, 1e-3, {0.9, 0.999}, -1.0), Catch::Contains("eps"));
  CHECK_THROWS_WITH(AdamW(params, 1e-3, {0.9, 0.999}, 1e-8, -0.1),
                    Catch::Contains("weight_decay") && Catch::Contains("-0.1"));
  CHECK_THROWS_AS(AdamW({torch::Tensor()}, 1e-3), g2c::ValueError);
  CHECK_NOTHROW(AdamW(params, 0.0, {0.0, 0.0}, 0.0, 0.0));
}

TEST_CASE("optimizer_lr_can_be_scheduled_through_the_base_class", "[training]") {
  torch::Tensor p = torch::tensor({1.0}, torch::kDouble).requires_grad_();
  AdamW adamw({p}, 1.0);
  g2c::nn::Optimizer& optimizer = adamw;
  optimizer.lr = 0.0;  // what a trainer does before each step
  p.mutable_grad() = torch::tensor({0.5}, torch::kDouble);
  optimizer.step();
  CHECK(p.item<double>() == 1.0);  // lr 0: no move, although the moments did update
  CHECK(adamw.m[0].item<double>() == Approx(0.05));
}

// --- clip_grad_norm_ ---------------------------------------------------------------------------

TEST_CASE("clip_grad_norm_matches_torch_clip_grad_norm", "[training]") {
  const auto dtype = GENERATE(torch::kFloat, torch::kDouble);
  const double scale = GENERATE(0.01, 1.0, 100.0);  // mostly below, around and above max_norm
  const double max_norm = GENERATE(0.5, 5.0);
  const int count = GENERATE(1, 3, 7);
  torch::manual_seed(static_cast<std::uint64_t>(count * 1000 + scale * 10 + max_norm));
  const auto ours = random_parameters(count, scale, dtype, /*every_other_gradless=*/count == 7);
  const auto theirs = copies(ours);

  const double our_total = clip_grad_norm_(ours, max_norm);
  const double their_total = torch::nn::utils::clip_grad_norm_(theirs, max_norm);
  INFO(c10::toString(dtype) << ", " << count << " tensors, gradient scale " << scale
                            << ", max_norm " << max_norm << ": total " << our_total << " vs "
                            << their_total);
  CHECK(our_total == Approx(their_total).epsilon(1e-5));
  double worst = 0.0;
  for (std::size_t i = 0; i < ours.size(); ++i) {
    REQUIRE(ours[i].grad().defined() == theirs[i].grad().defined());
    if (ours[i].grad().defined())
      worst = std::max(worst, max_abs_diff(ours[i].grad(), theirs[i].grad()));
  }
  INFO("max |grad difference| = " << worst);
  CHECK(worst <= 1e-5 * std::max(1.0, max_norm));
}

TEST_CASE("clip_grad_norm_after_a_clip_the_global_norm_is_max_norm", "[training]") {
  torch::manual_seed(11);
  const auto params = random_parameters(5, 10.0, torch::kDouble);
  const double before = clip_grad_norm_(params, 2.0);
  const double after = clip_grad_norm_(params, 2.0);  // now below the threshold: measured only
  INFO("before " << before << ", after " << after);
  CHECK(before > 2.0);
  CHECK(after == Approx(2.0 * before / (before + 1e-6)).epsilon(1e-12));
  CHECK(after < 2.0);
}

TEST_CASE("clip_grad_norm_on_a_model_without_gradients", "[training]") {
  // A model before its first backward(): nothing to measure, nothing to clip, no gradient made.
  const std::vector<torch::Tensor> params{torch::randn({4, 3}).requires_grad_(),
                                          torch::randn({3}).requires_grad_()};
  CHECK(clip_grad_norm_(params, 1.0) == 0.0);
  CHECK(clip_grad_norm_({}, 1.0) == 0.0);
  for (const auto& p : params) CHECK_FALSE(p.grad().defined());
}

TEST_CASE("clip_grad_norm_on_cuda_matches_cpu", "[training]") {
  if (!torch::cuda::is_available()) G2C_SKIP("CUDA is not available on this machine");
  torch::manual_seed(12);
  const auto on_cpu = random_parameters(4, 10.0, torch::kFloat);
  std::vector<torch::Tensor> on_cuda;
  for (const auto& p : on_cpu) {
    auto q = p.detach().to(torch::kCUDA).requires_grad_();
    q.mutable_grad() = p.grad().to(torch::kCUDA);
    on_cuda.push_back(q);
  }
  const double cuda_total = clip_grad_norm_(on_cuda, 1.0);
  const double cpu_total = clip_grad_norm_(on_cpu, 1.0);
  CHECK(cuda_total == Approx(cpu_total).epsilon(1e-5));
  for (std::size_t i = 0; i < on_cpu.size(); ++i) {
    CHECK(on_cuda[i].grad().is_cuda());
    CHECK(close(on_cuda[i].grad().cpu(), on_cpu[i].grad(), 1e-6));
  }
}

// --- cosine_with_warmup ------------------------------------------------------------------------

TEST_CASE("cosine_with_warmup_matches_closed_form_everywhere", "[training]") {
  for (const auto& c : kScheduleCases) {
    double worst = 0.0;
    for (std::int64_t step = 0; step <= c.max_steps + 20; ++step) {
      const double actual = cosine_with_warmup(step, c.warmup, c.max_steps, c.max_lr, c.min_lr);
      const double expected = schedule_closed_form(step, c.warmup, c.max_steps, c.max_lr, c.min_lr);
      worst = std::max(worst, std::abs(actual - expected) / c.max_lr);
    }
    INFO("warmup " << c.warmup << ", max_steps " << c.max_steps << ", max_lr " << c.max_lr
                   << ", min_lr " << c.min_lr << ": max relative difference " << worst);
    CHECK(worst < 1e-12);
  }
}

TEST_CASE("cosine_with_warmup_is_continuous_at_the_end_of_warmup", "[training]") {
  for (const auto& c : kScheduleCases) {
    if (c.warmup == 0 || c.max_steps <= c.warmup) continue;
    INFO("warmup " << c.warmup << ", max_steps " << c.max_steps);
    const double last_ramp =
        cosine_with_warmup(c.warmup - 1, c.warmup, c.max_steps, c.max_lr, c.min_lr);
    const double first_cosine =
        cosine_with_warmup(c.warmup, c.warmup, c.max_steps, c.max_lr, c.min_lr);
    CHECK(last_ramp == Approx(c.max_lr).epsilon(1e-12));
    CHECK(first_cosine == Approx(c.max_lr).epsilon(1e-12));
    // The ramp climbs in equal steps of max_lr / warmup.
    for (std::int64_t step = 1; step < c.warmup; ++step) {
      const double rise = cosine_with_warmup(step, c.warmup, c.max_steps, c.max_lr, c.min_lr) -
                          cosine_with_warmup(step - 1, c.warmup, c.max_steps, c.max_lr, c.min_lr);
      CHECK(rise == Approx(c.max_lr / static_cast<double>(c.warmup)).epsilon(1e-9));
    }
  }
}

TEST_CASE("cosine_with_warmup_stays_within_its_range", "[training]") {
  // After the warmup every value lies in [min_lr, max_lr]; the ramp lies in (0, max_lr] and may
  // start below min_lr (warmup 100, max_lr 3e-4, min_lr 3e-5: step 0 gives 3e-6).
  for (const auto& c : kScheduleCases) {
    INFO("warmup " << c.warmup << ", max_steps " << c.max_steps);
    double previous = c.max_lr;
    for (std::int64_t step = 0; step <= c.max_steps + 50; ++step) {
      const double lr = cosine_with_warmup(step, c.warmup, c.max_steps, c.max_lr, c.min_lr);
      INFO("step " << step << ": " << lr);
      CHECK(lr <= c.max_lr * (1 + 1e-12));
      if (step < c.warmup) {
        CHECK(lr > 0.0);
      } else {
        CHECK(lr >= c.min_lr * (1 - 1e-12));
        CHECK(lr <= previous * (1 + 1e-12));  // never rises again after the warmup
        previous = lr;
      }
    }
  }
}

TEST_CASE("cosine_with_warmup_unvalidated_edges_follow_the_formula", "[training]") {
  // As in the Python edition nothing is checked; these pin down what the formula gives.
  CHECK(cosine_with_warmup(-1, 10, 100, 1.0) == 0.0);           // ramp at step -1: 0
  CHECK(cosine_with_warmup(-5, 10, 100, 1.0) < 0.0);            // and below 0 further back
  CHECK(cosine_with_warmup(4, 5, 3, 1.0, 0.1) == Approx(1.0));  // max_steps < warmup: the ramp,
  CHECK(cosine_with_warmup(5, 5, 3, 1.0, 0.1) == 0.1);          // then min_lr at once
  CHECK(cosine_with_warmup(0, 0, 0, 1.0, 0.25) == 0.25);        // no steps at all: min_lr
}
