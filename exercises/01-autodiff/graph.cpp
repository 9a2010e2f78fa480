// Exercise 01.2 — one neuron, tanh(w1·x1 + w2·x2 + b), as the graph your engine builds: every node
// with its data and, after backward(), its grad; every edge with its local derivative. Drawn with
// Graphviz (`dot`, installed by scripts/setup.sh) as graph.png, written as graph.dot, and printed
// as text.
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>

#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "g2c/autodiff/nn.h"
#include "g2c/autodiff/value.h"
#include "g2c/core/atomic_file.h"

namespace exercise_01_graph {

using g2c::autodiff::Node;
using g2c::autodiff::Value;

namespace {

struct Config {
  // The neuron's numbers. b is chosen so that the weighted sum is 0.8814 and the output
  // tanh(0.8814) = 1/√2: its local derivative is then exactly 1 − 1/2 = 0.5.
  double x1 = 2.0, x2 = 0.0, w1 = -3.0, w2 = 1.0, b = 6.8813735870195432;
};

/// What a node is called in the picture: the name of a leaf the program made, else its operation.
std::string label_of(const Value& node, const std::map<const Node*, std::string>& names) {
  const auto named = names.find(node.id());
  return named != names.end() ? named->second : node.op();
}

/// The graph from `root` as indented text, the output first; a node reached a second time is
/// printed once more by name only.
void print_tree(const Value& node, const std::map<const Node*, std::string>& names, int depth,
                double local, std::map<const Node*, bool>& printed) {
  const std::string indent(static_cast<std::size_t>(2 * depth), ' ');
  const std::string edge = depth == 0 ? "" : fmt::format("(local {:+.4f}) ", local);
  if (printed[node.id()]) {
    fmt::print("{}{}{} (shown above)\n", indent, edge, label_of(node, names));
    return;
  }
  printed[node.id()] = true;
  fmt::print("{}{}{:<6} data {:+.4f}  grad {:+.4f}\n", indent, edge, label_of(node, names),
             node.data(), node.grad());
  for (const auto& e : node.edges()) print_tree(e.parent, names, depth + 1, e.local_grad, printed);
}

/// The graph in Graphviz's language: one record per node (label | data | grad), one arrow per
/// edge from parent to child, labelled with its local derivative.
std::string to_dot(const std::vector<Value>& nodes, const std::map<const Node*, int>& index,
                   const std::map<const Node*, std::string>& names) {
  std::string dot = "digraph neuron {\n  rankdir=LR;\n  node [shape=record, fontname=Helvetica];\n";
  for (const auto& node : nodes) {
    const bool leaf = node.edges().empty();
    dot += fmt::format("  n{} [label=\"{{ {} | data {:.4f} | grad {:.4f} }}\"{}];\n",
                       index.at(node.id()), label_of(node, names), node.data(), node.grad(),
                       leaf ? ", style=filled, fillcolor=\"#e8f0fe\"" : "");
  }
  for (const auto& node : nodes) {
    for (const auto& e : node.edges()) {
      dot += fmt::format("  n{} -> n{} [label=\"{:.4f}\", fontname=Helvetica, fontsize=10];\n",
                         index.at(e.parent.id()), index.at(node.id()), e.local_grad);
    }
  }
  return dot + "}\n";
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Module 01, exercise 2: draw the graph of one neuron with its data and gradients"};
  g2c::exercises::CommonOptions options;
  options.out = "results/01-autodiff";
  Config config;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--x1", config.x1, "First input");
  app.add_option("--x2", config.x2, "Second input");
  app.add_option("--w1", config.w1, "First weight");
  app.add_option("--w2", config.w2, "Second weight");
  app.add_option("--b", config.b, "Bias");
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);  // recorded; the engine runs on the CPU
    const Value w1(config.w1), w2(config.w2), b(config.b);
    const Value out = g2c::autodiff::single_neuron_forward(config.x1, config.x2, w1, w2, b);
    out.backward();

    // The inputs are plain numbers inside single_neuron_forward, so they become leaves there; they
    // are named by their data. The parameters are named by their handles.
    std::map<const Node*, std::string> names{{w1.id(), "w1"}, {w2.id(), "w2"}, {b.id(), "b"}};
    const auto nodes = g2c::autodiff::graph_nodes(out);
    std::map<const Node*, int> index;
    for (const auto& node : nodes) {
      index.emplace(node.id(), static_cast<int>(index.size()));
      if (node.edges().empty() && !names.contains(node.id())) {
        names[node.id()] = node.data() == config.x1   ? "x1"
                           : node.data() == config.x2 ? "x2"
                                                      : "const";
      }
    }
    std::map<const Node*, bool> printed;
    fmt::print(
        "tanh(w1·x1 + w2·x2 + b), output first; each edge's local derivative in brackets:\n");
    print_tree(out, names, 0, 1.0, printed);
    fmt::print("{} nodes. Check by hand: dout/dw1 = (1 − out²)·x1 = {:.4f}, grad of w1 = {:.4f}\n",
               nodes.size(), (1 - out.data() * out.data()) * config.x1, w1.grad());

    const auto dot_path = options.out / "graph.dot";
    g2c::write_file_atomic(dot_path, to_dot(nodes, index, names));
    std::cout << "wrote " << dot_path.string() << "\n";
    std::string picture;
    if (options.plot) {
      const auto png = options.out / "graph.png";
      const auto partial = options.out / "graph.png.partial";
      const std::string command = fmt::format("dot -Tpng \"{}\" -o \"{}\" 2>/dev/null",
                                              dot_path.string(), partial.string());
      if (std::system("command -v dot >/dev/null 2>&1") != 0) {
        std::cerr
            << "(no picture: Graphviz's `dot` is not installed; scripts/setup.sh installs it, "
               "or read the text above and graph.dot)\n";
      } else if (std::system(command.c_str()) != 0) {
        std::filesystem::remove(partial);
        std::cerr << "(Graphviz could not draw " << dot_path.string()
                  << "; the text above is "
                     "complete)\n";
      } else {
        std::filesystem::rename(partial, png);
        picture = png.filename().string();
        std::cout << "wrote " << png.string() << "\n";
      }
    }

    auto result = g2c::exercises::run_metadata("01_graph", options, device);
    result["config"] = {{"x1", config.x1},
                        {"x2", config.x2},
                        {"w1", config.w1},
                        {"w2", config.w2},
                        {"b", config.b}};
    nlohmann::json node_list = nlohmann::json::array();
    for (const auto& node : nodes) {
      nlohmann::json edges = nlohmann::json::array();
      for (const auto& e : node.edges()) {
        edges.push_back({{"parent", index.at(e.parent.id())}, {"local_grad", e.local_grad}});
      }
      node_list.push_back({{"id", index.at(node.id())},
                           {"label", label_of(node, names)},
                           {"data", node.data()},
                           {"grad", node.grad()},
                           {"edges", edges}});
    }
    result["nodes"] = node_list;
    result["output"] = out.data();
    result["gradients"] = {{"w1", w1.grad()}, {"w2", w2.grad()}, {"b", b.grad()}};
    result["dot"] = dot_path.filename().string();
    result["picture"] = picture.empty() ? nlohmann::json(nullptr) : nlohmann::json(picture);
    result["figures"] = nlohmann::json::array();  // the picture is Graphviz's, not plot.py's
    g2c::exercises::save_result(options, "graph.json", result);
  });
}

}  // namespace exercise_01_graph
