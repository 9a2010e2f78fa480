// Module 01 — the parts of Value implemented for you: construction, access, printing, freeing a
// graph, and the operators built on the primitives you write in value.cpp.
#include <ostream>
#include <unordered_set>
#include <utility>

#include <fmt/format.h>

#include "g2c/autodiff/value.h"

namespace g2c::autodiff {

Value::Value(double data) : node_(std::make_shared<Node>()) {
  node_->data = data;
}

Value::Value(double data, std::vector<Edge> edges, std::string op)
    : node_(std::make_shared<Node>()) {
  node_->data = data;
  node_->edges = std::move(edges);
  node_->op = std::move(op);
}

double& Value::data() const {
  return node_->data;
}
double& Value::grad() const {
  return node_->grad;
}
const std::vector<Edge>& Value::edges() const {
  return node_->edges;
}
const std::string& Value::op() const {
  return node_->op;
}

std::string Value::repr() const {
  return fmt::format("Value(data={:.4f}, grad={:.4f})", node_->data, node_->grad);
}

std::ostream& operator<<(std::ostream& out, const Value& value) {
  return out << value.repr();
}

Node::~Node() {
  // Destroying `edges` would destroy each parent this node alone holds, which destroys its parents
  // in turn: one stack frame per node of a chain. Instead, the parents are taken over here and
  // freed one at a time, each handing over its own parents first.
  std::vector<std::shared_ptr<Node>> pending;
  for (auto& edge : edges) pending.push_back(std::move(edge.parent.node_));
  while (!pending.empty()) {
    std::shared_ptr<Node> node = std::move(pending.back());
    pending.pop_back();
    if (node && node.use_count() == 1) {
      for (auto& edge : node->edges) pending.push_back(std::move(edge.parent.node_));
    }
    // `node` is freed here when this was its last handle; its edges hold nothing any more.
  }
}

std::vector<Value> graph_nodes(const Value& root) {
  std::vector<Value> nodes;
  std::unordered_set<const Node*> seen{root.id()};
  std::vector<Value> stack{root};
  while (!stack.empty()) {
    Value node = stack.back();
    stack.pop_back();
    nodes.push_back(node);
    for (const auto& edge : node.edges()) {
      if (seen.insert(edge.parent.id()).second) stack.push_back(edge.parent);
    }
  }
  return nodes;
}

Value operator-(const Value& a) {
  return a * -1.0;
}
Value operator-(const Value& a, const Value& b) {
  return a + (-b);
}
Value operator/(const Value& a, const Value& b) {
  return a * b.pow(-1.0);
}
Value operator+(const Value& a, double b) {
  return a + Value(b);
}
Value operator+(double a, const Value& b) {
  return b + a;
}
Value operator-(const Value& a, double b) {
  return a + (-b);
}
Value operator-(double a, const Value& b) {
  return (-b) + a;
}
Value operator*(const Value& a, double b) {
  return a * Value(b);
}
Value operator*(double a, const Value& b) {
  return b * a;
}
Value operator/(const Value& a, double b) {
  return a * (1.0 / b);
}
Value operator/(double a, const Value& b) {
  return b.pow(-1.0) * a;
}

}  // namespace g2c::autodiff
