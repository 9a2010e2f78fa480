// Module 18 — ToolRegistry: the tools of one run, by name.
//
// One table serves both ends of the loop: the prompt lists the registry's tools
// (render_tools_for_prompt), and a call is looked up in it by name (dispatch_tool_call), so the
// model can never run a tool the prompt did not describe. Each task builds the registry it needs:
// a calculator alone, or read_file beside run_python.
//
//   ToolRegistry registry({make_calculator(), make_read_file({.root = "notes"})});
//   registry.names()           -> {"calculator", "read_file"}   (registration order)
//   registry.get("calculator") -> the Tool
//   registry.get("calc")       -> UnknownToolError "no tool named 'calc'; registered: [...]"
//
// Plain C++, no LibTorch. Provided.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "g2c/tools/tool.h"

namespace g2c::tools {

class ToolRegistry {
 public:
  ToolRegistry() = default;
  /// Registers each tool in order (ValueError for a repeated name, as register_tool).
  explicit ToolRegistry(std::vector<Tool> tools);

  /// Adds a tool. ValueError when its name is already registered: replacing a tool silently
  /// would leave the prompt describing one function and the loop running another.
  void register_tool(Tool tool);

  /// The tool of that name; UnknownToolError naming the registered ones otherwise.
  const Tool& get(std::string_view name) const;

  /// A copy of the tools in registration order: changing it leaves the registry as it was.
  std::vector<Tool> tools() const { return tools_; }
  /// The names in registration order.
  std::vector<std::string> names() const;

  std::size_t size() const { return tools_.size(); }
  bool empty() const { return tools_.empty(); }
  bool contains(std::string_view name) const;

  /// Iterates the tools in registration order.
  std::vector<Tool>::const_iterator begin() const { return tools_.begin(); }
  std::vector<Tool>::const_iterator end() const { return tools_.end(); }

 private:
  std::vector<Tool> tools_;  // a handful per run: a linear search is the simplest index
};

/// "ToolRegistry(['a', 'b'])", the names sorted, as the Python edition prints it.
std::ostream& operator<<(std::ostream& stream, const ToolRegistry& registry);

}  // namespace g2c::tools
