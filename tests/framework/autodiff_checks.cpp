// Module 01 framework tests: the scalar engine against LibTorch's autograd in float64 — every
// operation at random points, randomly generated expressions (depth up to 6, shared
// subexpressions included), the XOR network's nine gradients, a 10,000-node chain (no deep
// recursion in backward() or in freeing the graph); numerical_grad against the exact derivative;
// the bad-input messages.
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <torch/torch.h>
#include <catch2/catch.hpp>

#include "g2c/autodiff/grad_check.h"
#include "g2c/autodiff/nn.h"
#include "g2c/autodiff/value.h"
#include "g2c/core/errors.h"

using namespace g2c::autodiff;

namespace {

torch::Tensor leaf(double x) {
  return torch::tensor(x, torch::TensorOptions().dtype(torch::kDouble).requires_grad(true));
}

/// Relative agreement to `rtol`, with an absolute floor for values near zero.
bool agrees(double ours, double theirs, double rtol = 1e-10) {
  return std::abs(ours - theirs) <= rtol * std::max(1.0, std::abs(theirs));
}

/// One expression written twice, on Values and on LibTorch tensors, from the same leaves.
struct Expression {
  std::string name;
  std::function<Value(const std::vector<Value>&)> ours;
  std::function<torch::Tensor(const std::vector<torch::Tensor>&)> theirs;
};

/// Evaluates `expression` at `inputs` both ways, runs both backward passes, and checks the value
/// and every input's gradient.
void check_against_torch(const Expression& expression, const std::vector<double>& inputs) {
  std::vector<Value> values;
  std::vector<torch::Tensor> tensors;
  for (const double x : inputs) {
    values.emplace_back(x);
    tensors.push_back(leaf(x));
  }
  const Value out = expression.ours(values);
  const torch::Tensor expected = expression.theirs(tensors);
  out.backward();
  expected.backward();
  INFO(expression.name);
  CHECK(agrees(out.data(), expected.item<double>()));
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const double theirs = tensors[i].grad().defined() ? tensors[i].grad().item<double>() : 0.0;
    INFO("input " << i << " = " << inputs[i] << ": ours " << values[i].grad() << ", LibTorch's "
                  << theirs);
    CHECK(agrees(values[i].grad(), theirs));
  }
}

/// A random expression over three leaves: a tree of the engine's operations, depth <= `depth`,
/// each operation's domain respected (log of a positive value, pow of a positive base for
/// fractional exponents). Subtrees are reused, so nodes are shared as in real graphs.
Expression random_expression(std::mt19937& rng, int depth) {
  std::uniform_int_distribution<int> pick(0, 9);
  std::uniform_real_distribution<double> constant(-2.0, 2.0);
  std::uniform_int_distribution<int> which_leaf(0, 2);
  if (depth == 0 || pick(rng) < 2) {
    const int i = which_leaf(rng);
    return {"x" + std::to_string(i), [i](const auto& v) { return v[i]; },
            [i](const auto& t) { return t[i]; }};
  }
  const Expression a = random_expression(rng, depth - 1);
  const int op = pick(rng);
  if (op == 0) {
    const Expression b = random_expression(rng, depth - 1);
    return {"(" + a.name + " + " + b.name + ")",
            [a, b](const auto& v) { return a.ours(v) + b.ours(v); },
            [a, b](const auto& t) { return a.theirs(t) + b.theirs(t); }};
  }
  if (op == 1) {
    const Expression b = random_expression(rng, depth - 1);
    return {"(" + a.name + " * " + b.name + ")",
            [a, b](const auto& v) { return a.ours(v) * b.ours(v); },
            [a, b](const auto& t) { return a.theirs(t) * b.theirs(t); }};
  }
  if (op == 2) {  // a shared subexpression: a * a + a
    return {"(" + a.name + "² + " + a.name + ")",
            [a](const auto& v) {
              const Value x = a.ours(v);
              return x * x + x;
            },
            [a](const auto& t) {
              const auto x = a.theirs(t);
              return x * x + x;
            }};
  }
  if (op == 3) {
    const Expression b = random_expression(rng, depth - 1);
    return {"(" + a.name + " - " + b.name + ")",
            [a, b](const auto& v) { return a.ours(v) - b.ours(v); },
            [a, b](const auto& t) { return a.theirs(t) - b.theirs(t); }};
  }
  if (op == 4) {  // division by something kept away from zero: 1 + b²
    const Expression b = random_expression(rng, depth - 1);
    return {"(" + a.name + " / (1 + " + b.name + "²))",
            [a, b](const auto& v) { return a.ours(v) / (1.0 + b.ours(v).pow(2)); },
            [a, b](const auto& t) { return a.theirs(t) / (1.0 + b.theirs(t).pow(2)); }};
  }
  if (op == 5) {
    return {"tanh(" + a.name + ")", [a](const auto& v) { return a.ours(v).tanh(); },
            [a](const auto& t) { return torch::tanh(a.theirs(t)); }};
  }
  if (op == 6) {  // exp of a tanh keeps the numbers small
    return {"exp(tanh(" + a.name + "))", [a](const auto& v) { return a.ours(v).tanh().exp(); },
            [a](const auto& t) { return torch::exp(torch::tanh(a.theirs(t))); }};
  }
  if (op == 7) {  // log of a positive value
    return {"log(1 + " + a.name + "²)",
            [a](const auto& v) { return (1.0 + a.ours(v).pow(2)).log(); },
            [a](const auto& t) { return torch::log(1.0 + a.theirs(t).pow(2)); }};
  }
  if (op == 8) {
    return {"relu(" + a.name + ")", [a](const auto& v) { return a.ours(v).relu(); },
            [a](const auto& t) { return torch::relu(a.theirs(t)); }};
  }
  const double c = constant(rng);
  return {"(" + std::to_string(c) + " * " + a.name + ")",
          [a, c](const auto& v) { return c * a.ours(v); },
          [a, c](const auto& t) { return c * a.theirs(t); }};
}

}  // namespace

TEST_CASE("every_operation_matches_libtorch_autograd_in_float64") {
  std::mt19937 rng(1);
  std::uniform_real_distribution<double> point(-2.0, 2.0);
  std::uniform_real_distribution<double> positive(0.1, 3.0);
  const std::vector<Expression> one_input = {
      {"-x", [](const auto& v) { return -v[0]; }, [](const auto& t) { return -t[0]; }},
      {"exp(x)", [](const auto& v) { return v[0].exp(); },
       [](const auto& t) { return t[0].exp(); }},
      {"tanh(x)", [](const auto& v) { return v[0].tanh(); },
       [](const auto& t) { return t[0].tanh(); }},
      {"relu(x)", [](const auto& v) { return v[0].relu(); },
       [](const auto& t) { return t[0].relu(); }},
      {"x^3", [](const auto& v) { return v[0].pow(3); }, [](const auto& t) { return t[0].pow(3); }},
      {"x^-2", [](const auto& v) { return v[0].pow(-2); },
       [](const auto& t) { return t[0].pow(-2); }},
      {"3 - x", [](const auto& v) { return 3 - v[0]; }, [](const auto& t) { return 3 - t[0]; }},
      {"2 / x", [](const auto& v) { return 2 / v[0]; }, [](const auto& t) { return 2 / t[0]; }},
      {"x / 4 + 1", [](const auto& v) { return v[0] / 4 + 1; },
       [](const auto& t) { return t[0] / 4 + 1; }},
  };
  const std::vector<Expression> positive_input = {
      {"log(x)", [](const auto& v) { return v[0].log(); },
       [](const auto& t) { return t[0].log(); }},
      {"x^0.5", [](const auto& v) { return v[0].pow(0.5); },
       [](const auto& t) { return t[0].pow(0.5); }},
      {"x^-1.5", [](const auto& v) { return v[0].pow(-1.5); },
       [](const auto& t) { return t[0].pow(-1.5); }},
  };
  const std::vector<Expression> two_inputs = {
      {"a + b", [](const auto& v) { return v[0] + v[1]; },
       [](const auto& t) { return t[0] + t[1]; }},
      {"a * b", [](const auto& v) { return v[0] * v[1]; },
       [](const auto& t) { return t[0] * t[1]; }},
      {"a - b", [](const auto& v) { return v[0] - v[1]; },
       [](const auto& t) { return t[0] - t[1]; }},
      {"a / b", [](const auto& v) { return v[0] / v[1]; },
       [](const auto& t) { return t[0] / t[1]; }},
  };
  for (int trial = 0; trial < 20; ++trial) {
    for (const auto& expression : one_input) {
      double x = point(rng);
      if (std::abs(x) < 0.05) x = 0.5;  // x^-2 and 2/x stay finite; relu's kink is not at a draw
      check_against_torch(expression, {x});
    }
    for (const auto& expression : positive_input) check_against_torch(expression, {positive(rng)});
    for (const auto& expression : two_inputs) {
      double b = point(rng);
      if (std::abs(b) < 0.05) b = -0.7;
      check_against_torch(expression, {point(rng), b});
    }
  }
}

TEST_CASE("random_expressions_match_libtorch_autograd") {
  std::mt19937 rng(2026);
  std::uniform_real_distribution<double> point(-1.5, 1.5);
  for (int trial = 0; trial < 300; ++trial) {
    const Expression expression = random_expression(rng, /*depth=*/6);
    check_against_torch(expression, {point(rng), point(rng), point(rng)});
  }
}

TEST_CASE("xor_network_gradients_match_libtorch_autograd") {
  std::mt19937 rng(5);
  ScalarMLP model(rng);
  const auto params = model.parameters();
  std::vector<torch::Tensor> p;
  for (const auto& param : params) p.push_back(leaf(param.data()));
  // The same network on tensors: hidden neuron i uses p[3i], p[3i+1] (weights) and p[3i+2] (bias).
  torch::Tensor total = torch::zeros({}, torch::kDouble);
  for (const auto& [x, y] : XOR_DATA) {
    const auto h0 = torch::tanh(p[0] * x[0] + p[1] * x[1] + p[2]);
    const auto h1 = torch::tanh(p[3] * x[0] + p[4] * x[1] + p[5]);
    const auto out = torch::tanh(p[6] * h0 + p[7] * h1 + p[8]);
    total = total + (out - y).pow(2);
  }
  const auto expected = total / static_cast<double>(XOR_DATA.size());
  expected.backward();
  zero_grad(params);
  const Value loss = xor_loss(model);
  loss.backward();
  CHECK(agrees(loss.data(), expected.item<double>()));
  for (std::size_t i = 0; i < params.size(); ++i) {
    INFO("parameter " << i << ": ours " << params[i].grad() << ", LibTorch's "
                      << p[i].grad().item<double>());
    CHECK(agrees(params[i].grad(), p[i].grad().item<double>()));
  }
}

TEST_CASE("ten_thousand_node_chain_backward_without_deep_recursion") {
  // x → tanh(0.9·x + 0.01) 10,000 times. A recursive topological sort or a recursive free of the
  // graph would take one stack frame (or several) per node; this must run in a flat loop.
  constexpr int kLength = 10000;
  const Value x(0.3);
  Value y = x;
  auto t = leaf(0.3);
  torch::Tensor u = t;
  for (int i = 0; i < kLength; ++i) {
    y = (0.9 * y + 0.01).tanh();
    u = torch::tanh(0.9 * u + 0.01);
  }
  y.backward();
  u.backward();
  INFO("d(chain)/dx: ours " << x.grad() << ", LibTorch's " << t.grad().item<double>());
  CHECK(agrees(y.data(), u.item<double>()));
  CHECK(agrees(x.grad(), t.grad().item<double>(), 1e-9));
}

TEST_CASE("a_million_node_graph_is_freed_without_deep_recursion") {
  // Freed when the last handle goes: the provided ~Node releases the chain iteratively.
  Value y(1.0);
  for (int i = 0; i < 1000000; ++i) y = y * 1.0;
  CHECK(y.data() == 1.0);
  y = Value(0.0);  // the chain's only handle is gone here
  SUCCEED("freed");
}

TEST_CASE("numerical_grad_matches_the_exact_derivative") {
  struct Case {
    const char* name;
    ScalarFunction f;
    std::function<double(double)> derivative;
  };
  const std::vector<Case> cases = {
      {"x^3 + 2x", [](const Value& x) { return x.pow(3) + 2 * x; },
       [](double x) { return 3 * x * x + 2; }},
      {"exp(x) * tanh(x)", [](const Value& x) { return x.exp() * x.tanh(); },
       [](double x) {
         return std::exp(x) * std::tanh(x) + std::exp(x) * (1 - std::pow(std::tanh(x), 2));
       }},
      {"log(1 + x^2)", [](const Value& x) { return (1 + x.pow(2)).log(); },
       [](double x) { return 2 * x / (1 + x * x); }},
      {"1 / (1 + x^2)", [](const Value& x) { return 1 / (1 + x.pow(2)); },
       [](double x) { return -2 * x / std::pow(1 + x * x, 2); }},
  };
  for (const auto& c : cases) {
    for (const double x : {-1.3, -0.2, 0.4, 1.7}) {
      const Value point(x);
      const double numeric = numerical_grad(c.f, point);
      INFO(c.name << " at x = " << x << ": numerical " << numeric << ", exact " << c.derivative(x));
      CHECK(std::abs(numeric - c.derivative(x)) <= 1e-7 * std::max(1.0, std::abs(c.derivative(x))));
      // The point itself is untouched: no graph was built on it, its grad is still 0.
      CHECK(point.grad() == 0.0);
      CHECK(point.data() == x);
    }
  }
}

TEST_CASE("backward_accumulates_across_calls_until_zero_grad") {
  const Value a(3.0);
  const Value f = a * a;
  f.backward();
  f.backward();
  CHECK(a.grad() == 12.0);  // 6 + 6: gradients add up across backward() calls
  zero_grad({a});
  f.backward();
  CHECK(a.grad() == 6.0);
}

TEST_CASE("copies_of_a_value_share_its_node") {
  const Value a(2.0);
  const Value alias = a;  // NOLINT(performance-unnecessary-copy-initialization): the point
  alias.data() = 5.0;
  CHECK(a.data() == 5.0);
  CHECK(alias.id() == a.id());
  CHECK(graph_nodes(a * a + alias).size() == 3);  // a, a*a, the sum: one node for a and alias
}

TEST_CASE("bad_input_is_a_value_error_that_says_what_was_expected") {
  std::mt19937 rng(0);
  const ScalarNeuron neuron(2, rng);
  CHECK_THROWS_WITH(neuron(std::vector<double>{1.0, 2.0, 3.0}),
                    Catch::Contains("2 inputs") && Catch::Contains("got 3"));
  CHECK_THROWS_WITH(ScalarNeuron(-1, rng), Catch::Contains("got -1"));
  CHECK_THROWS_AS(numerical_grad([](const Value& x) { return x; }, Value(1.0), 0.0),
                  g2c::ValueError);
  const ScalarMLP model(rng);
  CHECK_THROWS_WITH(xor_loss(model, {}), Catch::Contains("empty"));
}
