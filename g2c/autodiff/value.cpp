// Module 01 — your work: the primitive operations of the scalar engine and the reverse pass.
// Each operation does two things: it computes its forward value, and it records, on one edge per
// parent, the local derivative d(out)/d(parent) at those values (value.h draws an example).
#include <cmath>
#include <unordered_set>
#include <utility>
#include <vector>

#include "g2c/autodiff/value.h"
#include "g2c/core/errors.h"

namespace g2c::autodiff {

Value operator+(const Value& a, const Value& b) {
  // TODO: The sum as a new node: data a + b, one edge to each parent. Moving either input by ε
  // moves the sum by ε, so both local derivatives are 1. Operations: the node-making constructor
  // Value(data, {{parent, local}, …}, "+").
  // Hints, one step at a time: scripts/hint.sh 01 operator+
  throw g2c::todo("operator+", "g2c/autodiff/value.cpp", "01");
}

Value operator*(const Value& a, const Value& b) {
  // TODO: The product as a new node: data a · b. Moving a by ε moves the product by b · ε, and
  // moving b moves it by a · ε, so the local derivatives are b's data (towards a) and a's data
  // (towards b) — each parent's derivative is the *other* factor.
  // Hints, one step at a time: scripts/hint.sh 01 operator*
  throw g2c::todo("operator*", "g2c/autodiff/value.cpp", "01");
}

Value Value::pow(double exponent) const {
  // TODO: x^n for a constant n (negative too: x^-1 is how division is built): data x^n, one edge
  // to this node with the power rule's local derivative n · x^(n − 1). Operations: std::pow (the
  // std:: matters inside this member, which is itself called pow).
  // Hints, one step at a time: scripts/hint.sh 01 Value::pow
  throw g2c::todo("Value::pow", "g2c/autodiff/value.cpp", "01");
}

Value Value::exp() const {
  // TODO: e^x: data e^x, one edge to this node. The exponential is its own derivative, so the
  // local derivative is the output itself. Operations: std::exp.
  // Hints, one step at a time: scripts/hint.sh 01 Value::exp
  throw g2c::todo("Value::exp", "g2c/autodiff/value.cpp", "01");
}

Value Value::log() const {
  // TODO: the natural logarithm ln x (x > 0): data ln x, one edge to this node with local
  // derivative 1 / x. Operations: std::log.
  // Hints, one step at a time: scripts/hint.sh 01 Value::log
  throw g2c::todo("Value::log", "g2c/autodiff/value.cpp", "01");
}

Value Value::tanh() const {
  // TODO: t = tanh x, the squashing activation of the XOR network: data t, one edge to this node
  // with local derivative 1 − t² (the derivative is written with the output, squared).
  // Operations: std::tanh.
  // Hints, one step at a time: scripts/hint.sh 01 Value::tanh
  throw g2c::todo("Value::tanh", "g2c/autodiff/value.cpp", "01");
}

Value Value::relu() const {
  // TODO: max(0, x): data x where x > 0, else 0; one edge to this node with local derivative 1
  // where x > 0 and 0 elsewhere (at x = 0 too, by convention), so a switched-off unit passes no
  // gradient back.
  // Hints, one step at a time: scripts/hint.sh 01 Value::relu
  throw g2c::todo("Value::relu", "g2c/autodiff/value.cpp", "01");
}

void Value::backward() const {
  // TODO: Reverse-mode autodiff from this node, in three parts:
  // 1. A topological order of the graph ending here: every node after all of its parents, each
  //    node once even when it is reached by several paths (a set of visited ids()). Walk it with
  //    an explicit stack, not recursion: a 10,000-node chain must not take 10,000 stack frames.
  // 2. The seed: d(this)/d(this) = 1.
  // 3. The order backwards: for each node, for each edge, parent.grad += local · node.grad.
  //    Add, never assign: a node used twice (a * a) gets one contribution per use.
  // Operations: std::vector as the stack and the order, std::unordered_set<const Node*>.
  // Hints, one step at a time: scripts/hint.sh 01 Value::backward
  throw g2c::todo("Value::backward", "g2c/autodiff/value.cpp", "01");
}

}  // namespace g2c::autodiff
