// Module 18 — ToolRegistry (registry.h).
#include "g2c/tools/registry.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "g2c/core/errors.h"
#include "g2c/tokenizer/utf8.h"

namespace g2c::tools {

namespace {

/// "['a', 'b']": the names sorted and quoted as a Python list prints them.
std::string sorted_name_list(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  for (auto& name : names) name = g2c::tokenizer::python_repr(name);
  return fmt::format("[{}]", fmt::join(names, ", "));
}

}  // namespace

ToolRegistry::ToolRegistry(std::vector<Tool> tools) {
  for (auto& tool : tools) register_tool(std::move(tool));
}

void ToolRegistry::register_tool(Tool tool) {
  if (contains(tool.name())) {
    throw ValueError(
        fmt::format("tool {} is already registered; give the new tool another name "
                    "or build a registry without the old one",
                    g2c::tokenizer::python_repr(tool.name())));
  }
  tools_.push_back(std::move(tool));
}

const Tool& ToolRegistry::get(std::string_view name) const {
  for (const auto& tool : tools_) {
    if (tool.name() == name) return tool;
  }
  throw UnknownToolError(fmt::format("no tool named {}; registered: {}",
                                     g2c::tokenizer::python_repr(name), sorted_name_list(names())));
}

std::vector<std::string> ToolRegistry::names() const {
  std::vector<std::string> out;
  out.reserve(tools_.size());
  for (const auto& tool : tools_) out.push_back(tool.name());
  return out;
}

bool ToolRegistry::contains(std::string_view name) const {
  return std::any_of(tools_.begin(), tools_.end(),
                     [&](const Tool& tool) { return tool.name() == name; });
}

std::ostream& operator<<(std::ostream& stream, const ToolRegistry& registry) {
  return stream << "ToolRegistry(" << sorted_name_list(registry.names()) << ")";
}

}  // namespace g2c::tools
