// Module 01 — a scalar autodiff engine: every number remembers how it was made.
//
// A Value is a handle to one node of a computation graph. The node holds
//   data        the number computed on the forward pass
//   grad        d(root)/d(this node), filled in by root.backward()
//   edges       one per parent: the parent and the local derivative d(this)/d(parent), the
//               operation's gradient rule evaluated at the forward values
//   op          what made it ("+", "*", "tanh", …; empty for a leaf), for printing and drawing
//
// Example: c = a * b + a with a = 2, b = 3
//   a ─┐ (local 3)                        d = a * b   edges {a: b.data = 3, b: a.data = 2}
//      ├─ d = 6 ─┐ (local 1)              c = d + a   edges {d: 1, a: 1}
//   b ─┘ (local 2)├─ c = 8
//   a ────────────┘ (local 1)
// c.backward() seeds dc/dc = 1, then visits c before d (reverse topological order) and adds
// local · grad(child) into each parent: dc/da = 1·1 + 3·1 = 4 (a is used twice: the two
// contributions add up), dc/db = 2·1 = 2.
//
// Ownership. Copying a Value copies the handle, never the node: `auto y = x;` is x. A child owns
// its parents (shared ownership along the edges, from the output back to the leaves), so the graph
// stays alive exactly as long as something holds its output, and a graph built for one training
// step is freed when that step's loss goes out of scope. No parent points at its children, so no
// cycle can leak. Freeing a long chain releases its nodes one after another, not by recursion.
//
// subtle: LibTorch keeps the same kind of record per tensor operation (its grad_fn); this engine
// is that idea one number at a time, and is used in the course only to see how backward() works.
// It is not thread-safe.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

namespace g2c::autodiff {

class Value;
struct Node;

/// One edge of the graph: a parent of a node and d(node)/d(parent) at the forward values.
struct Edge;

class Value {
 public:
  /// A leaf: a number with no parents, grad 0. Example: `Value x(3.0);` prints
  /// `Value(data=3.0000, grad=0.0000)`.
  explicit Value(double data);
  /// A node made by an operation: its forward value, one edge per parent, and the operation's name.
  /// Example: `Value(a.data() * b.data(), {{a, b.data()}, {b, a.data()}}, "*")`.
  Value(double data, std::vector<Edge> edges, std::string op);

  /// The node's number and gradient. The handle is const, the node it points at is not:
  /// `w.data() -= lr * w.grad();` updates the parameter every copy of `w` shares.
  double& data() const;
  double& grad() const;
  const std::vector<Edge>& edges() const;
  const std::string& op() const;
  /// Identifies the node: two handles are the same node when their ids are equal.
  const Node* id() const { return node_.get(); }

  // --- Your work (g2c/autodiff/value.cpp): the primitive operations and the reverse pass. ---
  /// this^exponent for a constant exponent. Example: Value(2).pow(3) has data 8; local 3·2² = 12.
  Value pow(double exponent) const;
  /// e^this. Example: Value(1).exp() has data e; local e.
  Value exp() const;
  /// ln(this), this > 0. Example: Value(2).log() has data 0.693…; local 1/2.
  Value log() const;
  /// tanh(this). Example: Value(0.5).tanh() has data 0.4621…; local 1 − 0.4621² = 0.7864.
  Value tanh() const;
  /// max(0, this). Example: Value(-1.5).relu() has data 0; local 0.
  Value relu() const;
  /// Reverse-mode autodiff from this node: this->grad = 1, then every node of its graph, in
  /// reverse topological order, adds local · grad(node) into each parent's grad. Gradients
  /// accumulate: call zero_grad on the parameters before the next backward().
  void backward() const;

  /// "Value(data=3.0000, grad=0.0000)", as the Python edition prints it.
  std::string repr() const;

 private:
  friend struct Node;
  std::shared_ptr<Node> node_;
};

struct Edge {
  Value parent;
  double local_grad;  // d(node)/d(parent), evaluated on the forward pass
};

struct Node {
  double data = 0.0;
  double grad = 0.0;
  std::vector<Edge> edges;  // empty for a leaf
  std::string op;           // empty for a leaf
  /// Frees a chain of nodes iteratively: a 10,000-node chain must not take 10,000 stack frames.
  ~Node();
};

// --- Your work (g2c/autodiff/value.cpp): the two binary primitives. ---
/// a + b; local derivatives 1 and 1.
Value operator+(const Value& a, const Value& b);
/// a · b; local derivatives b.data and a.data.
Value operator*(const Value& a, const Value& b);

// --- Built for you on the primitives above (g2c/autodiff/value_provided.cpp). ---
Value operator-(const Value& a);                  // a · (−1)
Value operator-(const Value& a, const Value& b);  // a + (−b)
Value operator/(const Value& a, const Value& b);  // a · b^(−1)
Value operator+(const Value& a, double b);
Value operator+(double a, const Value& b);
Value operator-(const Value& a, double b);
Value operator-(double a, const Value& b);
Value operator*(const Value& a, double b);
Value operator*(double a, const Value& b);
Value operator/(const Value& a, double b);
Value operator/(double a, const Value& b);

std::ostream& operator<<(std::ostream& out, const Value& value);

/// Every node of the graph that ends in `root` (root included), each once, in no particular order.
/// For drawing and counting (01_graph), not for backward(), which needs an order.
std::vector<Value> graph_nodes(const Value& root);

}  // namespace g2c::autodiff
