// Module 01 — the parts of nn.h implemented for you: the data, construction, parameters, checks.
#include <fmt/format.h>

#include "g2c/autodiff/nn.h"
#include "g2c/core/errors.h"

namespace g2c::autodiff {

const std::vector<XorExample> XOR_DATA = {
    {{0.0, 0.0}, -1.0},
    {{0.0, 1.0}, 1.0},
    {{1.0, 0.0}, 1.0},
    {{1.0, 1.0}, -1.0},
};

namespace {

int checked_width(int n_inputs) {
  if (n_inputs <= 0) {
    throw g2c::ValueError(fmt::format(
        "ScalarNeuron: n_inputs must be positive (got {}); a neuron needs at least one input",
        n_inputs));
  }
  return n_inputs;
}

}  // namespace

ScalarNeuron::ScalarNeuron(int n_inputs, std::mt19937& rng) {
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  w.reserve(static_cast<std::size_t>(checked_width(n_inputs)));
  for (int i = 0; i < n_inputs; ++i) w.emplace_back(uniform(rng));
  b = Value(uniform(rng));
}

Value ScalarNeuron::operator()(const std::vector<double>& inputs) const {
  std::vector<Value> leaves;
  leaves.reserve(inputs.size());
  for (const double x : inputs) leaves.emplace_back(x);
  return (*this)(leaves);
}

std::vector<Value> ScalarNeuron::parameters() const {
  std::vector<Value> params = w;
  params.push_back(b);
  return params;
}

void ScalarNeuron::check_inputs(std::size_t width) const {
  if (width != w.size()) {
    throw g2c::ValueError(fmt::format(
        "ScalarNeuron: this neuron has {} weights and takes {} inputs, but got {} inputs", w.size(),
        w.size(), width));
  }
}

ScalarMLP::ScalarMLP(std::mt19937& rng)
    : hidden{ScalarNeuron(2, rng), ScalarNeuron(2, rng)}, out(2, rng) {}

std::vector<Value> ScalarMLP::parameters() const {
  std::vector<Value> params;
  for (const auto& neuron : hidden) {
    for (const auto& p : neuron.parameters()) params.push_back(p);
  }
  for (const auto& p : out.parameters()) params.push_back(p);
  return params;
}

void zero_grad(const std::vector<Value>& params) {
  for (const auto& p : params) p.grad() = 0.0;
}

void check_dataset(const std::vector<XorExample>& data) {
  if (data.empty()) {
    throw g2c::ValueError(
        "xor_loss: the dataset is empty; the mean squared error needs at least "
        "one (inputs, target) row, such as XOR_DATA's four");
  }
}

}  // namespace g2c::autodiff
