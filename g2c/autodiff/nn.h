// Module 01 — a tiny neural network made of Values: one tanh neuron, a 2-2-1 MLP, and XOR.
//
// XOR is the smallest problem no single neuron can solve (its two classes are not separable by a
// line), and a 2-2-1 tanh network can: the lesson's first training loop, with every gradient
// computed by your backward().
//
//   neuron(x) = tanh(w · x + b)            x: n_inputs numbers, w: n_inputs Values, b: one Value
//   mlp(x)    = out(hidden₀(x), hidden₁(x))   2 inputs → 2 tanh units → 1 tanh unit, 9 parameters
//   loss      = mean over the 4 XOR rows of (mlp(x) − y)²,   targets y = ±1 (tanh's range)
//
// Example:
//   std::mt19937 rng(0);
//   ScalarMLP model(rng);
//   for (int step = 0; step < 500; ++step) train_xor_step(model, /*lr=*/0.1);
//   std::cout << model({0.0, 1.0});   // close to Value(data=1.0000, …)
#pragma once

#include <array>
#include <random>
#include <vector>

#include "g2c/autodiff/value.h"

namespace g2c::autodiff {

/// One row of a two-input dataset: the inputs and the target.
struct XorExample {
  std::array<double, 2> inputs;
  double target;
};

/// The XOR truth table with targets ±1: (0,0) → −1, (0,1) → +1, (1,0) → +1, (1,1) → −1.
extern const std::vector<XorExample> XOR_DATA;

/// tanh(w1·x1 + w2·x2 + b), built from Value operations so that backward() reaches w1, w2 and b.
/// Your work (g2c/autodiff/nn.cpp).
Value single_neuron_forward(double x1, double x2, const Value& w1, const Value& w2, const Value& b);

/// One tanh neuron with n_inputs weights and a bias, each drawn uniformly from [−1, 1] by `rng`
/// (weights first, then the bias). ValueError for n_inputs <= 0.
class ScalarNeuron {
 public:
  ScalarNeuron(int n_inputs, std::mt19937& rng);

  /// tanh(w · x + b) for n_inputs inputs; ValueError naming both widths otherwise. Your work.
  Value operator()(const std::vector<Value>& inputs) const;
  /// The same on plain numbers (each becomes a leaf).
  Value operator()(const std::vector<double>& inputs) const;

  /// w₀ … w_{n−1}, then b: handles to the neuron's own parameters.
  std::vector<Value> parameters() const;
  /// Refuses inputs of the wrong width, naming both widths.
  void check_inputs(std::size_t width) const;

  std::vector<Value> w;
  Value b{0.0};
};

/// The fixed 2-2-1 network of the XOR exercise: two hidden tanh neurons and one output neuron.
class ScalarMLP {
 public:
  explicit ScalarMLP(std::mt19937& rng);

  /// out(hidden₀(x), hidden₁(x)) for one input pair. Your work.
  Value operator()(const std::array<double, 2>& x) const;

  /// hidden₀'s 3, hidden₁'s 3, then out's 3: 9 handles.
  std::vector<Value> parameters() const;

  std::array<ScalarNeuron, 2> hidden;
  ScalarNeuron out;
};

/// Sets every parameter's grad to 0 (backward() accumulates).
void zero_grad(const std::vector<Value>& params);

/// Refuses an empty dataset (a mean over no rows).
void check_dataset(const std::vector<XorExample>& data);

/// Mean squared error of the model over `data`: (1/N) Σ (model(x) − y)². Your work.
Value xor_loss(const ScalarMLP& model, const std::vector<XorExample>& data = XOR_DATA);

/// One full-batch gradient-descent step: zero the grads, compute the loss, backward(), then
/// p.data −= lr · p.grad for every parameter. Returns the loss before the update. Your work.
double train_xor_step(ScalarMLP& model, double lr);

}  // namespace g2c::autodiff
