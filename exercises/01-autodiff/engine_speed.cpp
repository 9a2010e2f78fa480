// Exercise 01.3 — why tensors exist. The same 2-16-16-1 tanh network and the same training step
// (forward, mean squared error, backward, gradient descent) twice: on your scalar engine, one
// graph node per multiplication, and on LibTorch in float64, one tensor operation per layer. Both
// start from the same weights and must agree on the loss and every gradient; then each is timed
// over a sweep of batch sizes.
#include <chrono>
#include <random>

#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "exercises/common/timing.h"
#include "g2c/autodiff/nn.h"
#include "g2c/autodiff/value.h"

namespace exercise_01_engine_speed {

using g2c::autodiff::ScalarNeuron;
using g2c::autodiff::Value;

namespace {

struct Config {
  std::vector<std::int64_t> batches{1, 4, 16, 64, 256};
  std::int64_t hidden = 16;  // two hidden layers of this width
  double lr = 0.05;          // the step taken after each timed backward pass
  double min_seconds = 0.3;  // each timing repeats the step at least this long, at least 3 times
};

/// A layer of scalar neurons, each reading every output of the layer before.
using ScalarLayer = std::vector<ScalarNeuron>;

struct ScalarNet {
  std::vector<ScalarLayer> layers;

  Value operator()(const std::vector<Value>& x) const {
    std::vector<Value> h = x;
    for (const auto& layer : layers) {
      std::vector<Value> next;
      for (const auto& neuron : layer) next.push_back(neuron(h));
      h = std::move(next);
    }
    return h.front();
  }

  std::vector<Value> parameters() const {
    std::vector<Value> params;
    for (const auto& layer : layers)
      for (const auto& neuron : layer)
        for (const auto& p : neuron.parameters()) params.push_back(p);
    return params;
  }
};

/// The same network as LibTorch tensors: W (in, out) and b (out) per layer, copied from the
/// scalar neurons (neuron j's weight i is W[i, j]).
struct TensorNet {
  std::vector<torch::Tensor> W, b;

  explicit TensorNet(const ScalarNet& net) {
    const auto f64 = torch::TensorOptions().dtype(torch::kDouble);
    for (const auto& layer : net.layers) {
      const auto in = static_cast<std::int64_t>(layer.front().w.size());
      const auto out = static_cast<std::int64_t>(layer.size());
      auto weights = torch::empty({in, out}, f64);
      auto bias = torch::empty({out}, f64);
      for (std::int64_t j = 0; j < out; ++j) {
        for (std::int64_t i = 0; i < in; ++i) weights[i][j] = layer[j].w[i].data();
        bias[j] = layer[j].b.data();
      }
      W.push_back(weights.requires_grad_());
      b.push_back(bias.requires_grad_());
    }
  }

  torch::Tensor operator()(const torch::Tensor& x) const {  // (N, 2) -> (N, 1)
    torch::Tensor h = x;
    for (std::size_t l = 0; l < W.size(); ++l) h = torch::tanh(torch::matmul(h, W[l]) + b[l]);
    return h;
  }
};

/// One step on the scalar engine: loss, backward, update. Returns the loss.
double scalar_step(const ScalarNet& net, const std::vector<double>& x, const std::vector<double>& y,
                   double lr) {
  const auto params = net.parameters();
  g2c::autodiff::zero_grad(params);
  Value total(0.0);
  for (std::size_t n = 0; n < y.size(); ++n) {
    const Value out = net({Value(x[2 * n]), Value(x[2 * n + 1])});
    total = total + (out - y[n]).pow(2.0);
  }
  const Value loss = total / static_cast<double>(y.size());
  loss.backward();
  for (const auto& p : params) p.data() -= lr * p.grad();
  return loss.data();
}

double tensor_step(TensorNet& net, const torch::Tensor& x, const torch::Tensor& y, double lr) {
  for (auto* group : {&net.W, &net.b})
    for (auto& p : *group) p.mutable_grad() = torch::Tensor();
  const auto loss = (net(x) - y).pow(2).mean();
  loss.backward();
  torch::NoGradGuard no_grad;
  for (auto* group : {&net.W, &net.b})
    for (auto& p : *group) p.sub_(lr * p.grad());
  return loss.item<double>();
}

/// Median seconds per call of `step`, repeated for at least `min_seconds` and 3 times.
template <typename Step>
double seconds_per_step(Step&& step, double min_seconds) {
  std::vector<double> times;
  const auto start = std::chrono::steady_clock::now();
  while (times.size() < 3 ||
         std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() <
             min_seconds) {
    const auto t0 = std::chrono::steady_clock::now();
    step();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return g2c::exercises::median(times);
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Module 01, exercise 3: the scalar engine against LibTorch on the same network"};
  g2c::exercises::CommonOptions options;
  options.out = "results/01-autodiff";
  options.threads = 1;  // one core each: the comparison is per operation, not per machine
  Config config;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--batches", config.batches, "Batch sizes to time").range(1, 100000);
  app.add_option("--hidden", config.hidden, "Width of the two hidden layers").range(1, 4096);
  app.add_option("--min-seconds", config.min_seconds, "Time each measurement at least this long")
      .non_negative();
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);  // LibTorch here runs on the CPU
    std::mt19937 rng(static_cast<std::mt19937::result_type>(options.seed));
    const int width = static_cast<int>(config.hidden);
    ScalarNet scalar;
    for (const auto& [in, out] :
         {std::pair{2, width}, std::pair{width, width}, std::pair{width, 1}}) {
      ScalarLayer layer;
      for (int j = 0; j < out; ++j) layer.emplace_back(in, rng);
      scalar.layers.push_back(std::move(layer));
    }
    const auto parameter_count = scalar.parameters().size();

    nlohmann::json rows = nlohmann::json::array();
    std::vector<double> scalar_ms, torch_ms, ratios, batch_axis;
    fmt::print("{:>6} {:>9} {:>14} {:>14} {:>9}\n", "batch", "nodes", "scalar ms/step",
               "LibTorch ms", "slower");
    for (const auto batch : config.batches) {
      // XOR-like points: the inputs uniform in [0, 1]², the target the sign of (x1 − ½)(x2 − ½).
      std::uniform_real_distribution<double> uniform(0.0, 1.0);
      std::vector<double> x(static_cast<std::size_t>(2 * batch)),
          y(static_cast<std::size_t>(batch));
      for (std::int64_t n = 0; n < batch; ++n) {
        x[2 * n] = uniform(rng);
        x[2 * n + 1] = uniform(rng);
        y[n] = (x[2 * n] - 0.5) * (x[2 * n + 1] - 0.5) > 0 ? -1.0 : 1.0;
      }
      const auto x_t = torch::tensor(x, torch::kDouble).reshape({batch, 2});  // (N, 2)
      const auto y_t = torch::tensor(y, torch::kDouble).reshape({batch, 1});  // (N, 1)

      // The same computation: the two losses and every gradient agree before anything is timed.
      TensorNet tensors(scalar);
      const auto params = scalar.parameters();
      g2c::autodiff::zero_grad(params);
      Value total(0.0);
      for (std::int64_t n = 0; n < batch; ++n)
        total = total + (scalar({Value(x[2 * n]), Value(x[2 * n + 1])}) - y[n]).pow(2.0);
      const Value loss = total / static_cast<double>(batch);
      const std::size_t nodes = g2c::autodiff::graph_nodes(loss).size();
      loss.backward();
      const auto torch_loss = (tensors(x_t) - y_t).pow(2).mean();
      torch_loss.backward();
      double worst = std::abs(loss.data() - torch_loss.item<double>());
      std::size_t k = 0;
      for (std::size_t l = 0; l < tensors.W.size(); ++l) {
        const auto& layer = scalar.layers[l];
        for (std::size_t j = 0; j < layer.size(); ++j) {
          for (std::size_t i = 0; i < layer[j].w.size(); ++i) {
            worst = std::max(
                worst, std::abs(layer[j].w[i].grad() - tensors.W[l].grad()[i][j].item<double>()));
          }
          worst =
              std::max(worst, std::abs(layer[j].b.grad() - tensors.b[l].grad()[j].item<double>()));
          k += layer[j].w.size() + 1;
        }
      }
      if (worst > 1e-9) {
        throw std::runtime_error(fmt::format(
            "the scalar engine and LibTorch disagree by {:.3g} on the loss or a gradient at batch "
            "{}: check backward() with ctest --preset student -L check -R '^01\\.'",
            worst, batch));
      }

      // The timings: copies of the network, so every batch size starts from the same weights.
      const double scalar_s =
          seconds_per_step([&] { scalar_step(scalar, x, y, config.lr); }, config.min_seconds);
      const double torch_s =
          seconds_per_step([&] { tensor_step(tensors, x_t, y_t, config.lr); }, config.min_seconds);
      fmt::print("{:>6} {:>9} {:>14.3f} {:>14.3f} {:>8.0f}×\n", batch, nodes, 1e3 * scalar_s,
                 1e3 * torch_s, scalar_s / torch_s);
      rows.push_back({{"batch", batch},
                      {"graph_nodes", nodes},
                      {"scalar_ms", 1e3 * scalar_s},
                      {"torch_ms", 1e3 * torch_s},
                      {"slower", scalar_s / torch_s},
                      {"max_difference", worst},
                      {"parameters_compared", k}});
      batch_axis.push_back(static_cast<double>(batch));
      scalar_ms.push_back(1e3 * scalar_s);
      torch_ms.push_back(1e3 * torch_s);
      ratios.push_back(scalar_s / torch_s);
    }
    fmt::print(
        "{} parameters. A scalar step builds and walks one graph node per multiplication, "
        "addition and tanh; LibTorch's records one node per tensor operation, a few per "
        "layer, whatever the batch\n",
        parameter_count);

    auto result = g2c::exercises::run_metadata("01_engine_speed", options, device);
    result["config"] = {{"batches", config.batches},
                        {"hidden", config.hidden},
                        {"lr", config.lr},
                        {"min_seconds", config.min_seconds},
                        {"threads", options.threads}};
    result["parameters"] = parameter_count;
    result["rows"] = rows;
    result["series"] = {{"batch", batch_axis},
                        {"scalar_ms", scalar_ms},
                        {"torch_ms", torch_ms},
                        {"slower", ratios}};
    using g2c::exercises::Figure;
    using g2c::exercises::Series;
    result["figures"] = g2c::exercises::figures(
        {Figure::line(
             "engine_speed.png",
             fmt::format("One training step of a 2-{0}-{0}-1 network, one thread", config.hidden),
             "batch size", "milliseconds per step")
             .logx()
             .logy()
             .add(Series("scalar engine (module 01)", "/series/batch", "/series/scalar_ms")
                      .marker("o"))
             .add(Series("LibTorch, float64", "/series/batch", "/series/torch_ms").marker("s"))});
    const auto path = g2c::exercises::save_result(options, "engine_speed.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_01_engine_speed
