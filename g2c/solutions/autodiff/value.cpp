// Module 01 — reference solution for g2c/autodiff/value.cpp.
#include <cmath>
#include <unordered_set>
#include <utility>
#include <vector>

#include "g2c/autodiff/value.h"

namespace g2c::autodiff {

Value operator+(const Value& a, const Value& b) {
  // d(a + b)/da = 1, d(a + b)/db = 1
  return Value(a.data() + b.data(), {{a, 1.0}, {b, 1.0}}, "+");
}

Value operator*(const Value& a, const Value& b) {
  // d(a · b)/da = b, d(a · b)/db = a
  return Value(a.data() * b.data(), {{a, b.data()}, {b, a.data()}}, "*");
}

Value Value::pow(double exponent) const {
  // d(x^n)/dx = n · x^(n − 1)
  const double local = exponent * std::pow(data(), exponent - 1.0);
  return Value(std::pow(data(), exponent), {{*this, local}}, "pow");
}

Value Value::exp() const {
  // d(e^x)/dx = e^x, the output itself
  const double out = std::exp(data());
  return Value(out, {{*this, out}}, "exp");
}

Value Value::log() const {
  // d(ln x)/dx = 1 / x
  return Value(std::log(data()), {{*this, 1.0 / data()}}, "log");
}

Value Value::tanh() const {
  // d(tanh x)/dx = 1 − tanh²(x), from the output
  const double t = std::tanh(data());
  return Value(t, {{*this, 1.0 - t * t}}, "tanh");
}

Value Value::relu() const {
  // d(max(0, x))/dx = 1 where x > 0, else 0
  const bool positive = data() > 0.0;
  return Value(positive ? data() : 0.0, {{*this, positive ? 1.0 : 0.0}}, "relu");
}

void Value::backward() const {
  // Topological order: every node after all of its parents. A depth-first walk with an explicit
  // stack; a node is appended once all of its parents have been (the `true` entry marks that).
  std::vector<Value> order;
  std::unordered_set<const Node*> visited;
  std::vector<std::pair<Value, bool>> stack{{*this, false}};
  while (!stack.empty()) {
    auto [node, parents_done] = stack.back();
    stack.pop_back();
    if (parents_done) {
      order.push_back(node);
      continue;
    }
    if (!visited.insert(node.id()).second) continue;
    stack.emplace_back(node, true);
    for (const auto& edge : node.edges()) {
      if (!visited.contains(edge.parent.id())) stack.emplace_back(edge.parent, false);
    }
  }
  // The seed, then the chain rule from the output back: each node's grad is complete before it
  // passes it on, because all of its children come later in `order`.
  grad() = 1.0;
  for (auto node = order.rbegin(); node != order.rend(); ++node) {
    for (const auto& edge : node->edges()) edge.parent.grad() += edge.local_grad * node->grad();
  }
}

}  // namespace g2c::autodiff
