// Module 18 — the provided half of schema.h: type names for messages and the tool renderers.
#include <sstream>

#include "g2c/tools/schema.h"

namespace g2c::tools {

std::string python_type_name(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::string:
      return "str";
    case nlohmann::json::value_t::boolean:
      return "bool";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
      return "int";
    case nlohmann::json::value_t::number_float:
      return "float";
    case nlohmann::json::value_t::object:
      return "dict";
    case nlohmann::json::value_t::array:
      return "list";
    case nlohmann::json::value_t::null:
      return "NoneType";
    default:
      return value.type_name();
  }
}

std::string render_tools_for_prompt(const std::vector<Tool>& tools) {
  constexpr std::string_view kCallFormat =
      "Call format: <tool_call>{\"name\": \"<tool>\", \"arguments\": {...}}</tool_call>";
  if (tools.empty()) return "Tools available: (none)\n\n" + std::string(kCallFormat);
  std::ostringstream out;
  out << "Tools available:\n";
  for (const auto& tool : tools) {
    out << "- " << tool.name() << ": " << tool.description() << "\n  parameters:\n";
    // The schema as indented JSON, every line indented two more spaces to sit under its bullet.
    std::istringstream schema(tool.parameters().dump(2));
    for (std::string line; std::getline(schema, line);) out << "  " << line << "\n";
  }
  out << "\n" << kCallFormat;
  return out.str();
}

nlohmann::json tool_to_ollama_spec(const Tool& tool) {
  return {{"type", "function"},
          {"function",
           {{"name", tool.name()},
            {"description", tool.description()},
            {"parameters", tool.parameters()}}}};
}

nlohmann::json render_tools_for_ollama(const std::vector<Tool>& tools) {
  auto specs = nlohmann::json::array();
  for (const auto& tool : tools) specs.push_back(tool_to_ollama_spec(tool));
  return specs;
}

}  // namespace g2c::tools
