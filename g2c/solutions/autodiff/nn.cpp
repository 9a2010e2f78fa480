// Module 01 — reference solution for g2c/autodiff/nn.cpp.
#include "g2c/autodiff/nn.h"

namespace g2c::autodiff {

Value single_neuron_forward(double x1, double x2, const Value& w1, const Value& w2,
                            const Value& b) {
  return (w1 * x1 + w2 * x2 + b).tanh();
}

Value ScalarNeuron::operator()(const std::vector<Value>& inputs) const {
  check_inputs(inputs.size());
  Value activation = b;
  for (std::size_t i = 0; i < w.size(); ++i) activation = activation + w[i] * inputs[i];
  return activation.tanh();
}

Value ScalarMLP::operator()(const std::array<double, 2>& x) const {
  const std::vector<double> inputs{x[0], x[1]};
  return out({hidden[0](inputs), hidden[1](inputs)});
}

Value xor_loss(const ScalarMLP& model, const std::vector<XorExample>& data) {
  check_dataset(data);
  Value total(0.0);
  for (const auto& [inputs, target] : data) total = total + (model(inputs) - target).pow(2.0);
  return total / static_cast<double>(data.size());
}

double train_xor_step(ScalarMLP& model, double lr) {
  const auto params = model.parameters();
  zero_grad(params);
  const Value loss = xor_loss(model);
  loss.backward();
  for (const auto& p : params) p.data() -= lr * p.grad();
  return loss.data();
}

}  // namespace g2c::autodiff
