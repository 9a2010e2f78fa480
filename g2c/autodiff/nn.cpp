// Module 01 — your work: a neuron, a 2-2-1 network, its loss on XOR and one training step, all
// built from Value operations so that backward() reaches every parameter.
#include "g2c/autodiff/nn.h"
#include "g2c/core/errors.h"

namespace g2c::autodiff {

Value single_neuron_forward(double x1, double x2, const Value& w1, const Value& w2,
                            const Value& b) {
  // TODO: One neuron on two inputs: tanh(w1·x1 + w2·x2 + b). The inputs are plain numbers, the
  // weights and bias are Values, so the result is a Value whose graph leads back to w1, w2 and b.
  // Operations: Value * double, Value + Value, tanh().
  // Hints, one step at a time: scripts/hint.sh 01 single_neuron_forward
  throw g2c::todo("single_neuron_forward", "g2c/autodiff/nn.cpp", "01");
}

Value ScalarNeuron::operator()(const std::vector<Value>& inputs) const {
  // TODO: The same neuron for any width: tanh(Σᵢ wᵢ·xᵢ + b) over this neuron's weights w and bias
  // b. Refuse inputs of the wrong width first (check_inputs). The inputs are Values, so a neuron
  // can take another neuron's outputs.
  // Hints, one step at a time: scripts/hint.sh 01 ScalarNeuron::operator()
  throw g2c::todo("ScalarNeuron::operator()", "g2c/autodiff/nn.cpp", "01");
}

Value ScalarMLP::operator()(const std::array<double, 2>& x) const {
  // TODO: The 2-2-1 network on one input pair: both hidden neurons read x, and the output neuron
  // reads the two hidden outputs (Values): out(hidden₀(x), hidden₁(x)).
  // Hints, one step at a time: scripts/hint.sh 01 ScalarMLP::operator()
  throw g2c::todo("ScalarMLP::operator()", "g2c/autodiff/nn.cpp", "01");
}

Value xor_loss(const ScalarMLP& model, const std::vector<XorExample>& data) {
  // TODO: The mean squared error over the dataset, as one Value: (1/N) Σ (model(x) − y)², N rows.
  // Refuse an empty dataset first (check_dataset). Operations: Value − double, pow(2), Value +
  // Value, Value / double.
  // Hints, one step at a time: scripts/hint.sh 01 xor_loss
  throw g2c::todo("xor_loss", "g2c/autodiff/nn.cpp", "01");
}

double train_xor_step(ScalarMLP& model, double lr) {
  // TODO: One step of gradient descent on the whole XOR table: zero every parameter's grad (grads
  // accumulate across backward() calls), compute the loss on XOR_DATA, backward(), then move each
  // parameter against its gradient, p.data −= lr · p.grad. Return the loss computed before the
  // update, as a number.
  // Hints, one step at a time: scripts/hint.sh 01 train_xor_step
  throw g2c::todo("train_xor_step", "g2c/autodiff/nn.cpp", "01");
}

}  // namespace g2c::autodiff
