// Module 18, reference: JSON-schema-lite, strict: required keys present, no unknown keys, each
// value of its property's type (booleans are never numbers).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "g2c/tokenizer/utf8.h"
#include "g2c/tools/schema.h"

namespace g2c::tools {

namespace {

/// "['a', 'b']", as Python prints a list of names.
std::string name_list(const std::vector<std::string>& names) {
  std::vector<std::string> quoted;
  for (const auto& name : names) quoted.push_back(g2c::tokenizer::python_repr(name));
  return fmt::format("[{}]", fmt::join(quoted, ", "));
}

/// Does `value` have the JSON-schema-lite type `tag`? nullopt for a tag the subset does not know.
std::optional<bool> has_type(const nlohmann::json& value, const std::string& tag) {
  if (tag == "string") return value.is_string();
  if (tag == "integer") return value.is_number_integer();  // false for true/false and for 3.5
  if (tag == "number") return value.is_number();           // false for true/false
  if (tag == "boolean") return value.is_boolean();
  return std::nullopt;
}

}  // namespace

nlohmann::json validate_arguments(const Tool& tool, const nlohmann::json& arguments) {
  if (!arguments.is_object()) {
    throw ToolError(
        fmt::format("arguments must be a JSON object, got {}", python_type_name(arguments)));
  }
  const auto& schema = tool.parameters();
  if (schema.value("type", nlohmann::json()) != "object") {
    throw ToolError(fmt::format("tool {}: schema must be of type object, got {}",
                                g2c::tokenizer::python_repr(tool.name()), schema.dump()));
  }
  const auto properties = schema.value("properties", nlohmann::json::object());
  const auto required = schema.value("required", nlohmann::json::array());
  if (!properties.is_object() || !required.is_array()) {
    throw ToolError(
        fmt::format("tool {}: schema's properties must be an object and its required "
                    "a list of names, got {}",
                    g2c::tokenizer::python_repr(tool.name()), schema.dump()));
  }

  std::vector<std::string> missing;
  for (const auto& key : required) {
    if (!key.is_string()) throw ToolError("schema's required must list names, got " + key.dump());
    if (!arguments.contains(key.get<std::string>())) missing.push_back(key.get<std::string>());
  }
  if (!missing.empty()) {
    throw ToolError(fmt::format("missing required arguments: {}", name_list(missing)));
  }

  std::vector<std::string> unknown;
  for (const auto& [key, value] : arguments.items()) {
    if (!properties.contains(key)) unknown.push_back(key);
  }
  if (!unknown.empty()) {
    throw ToolError(
        fmt::format("unknown arguments: {} (the tool takes {})", name_list(unknown), name_list([&] {
                      std::vector<std::string> keys;
                      for (const auto& [key, _] : properties.items()) keys.push_back(key);
                      return keys;
                    }())));
  }

  for (const auto& [key, value] : arguments.items()) {
    const auto& property = properties[key];
    const auto type =
        property.is_object() ? property.value("type", nlohmann::json("string")) : nlohmann::json();
    const std::string tag = type.is_string() ? type.get<std::string>() : type.dump();
    const auto matches = has_type(value, tag);
    if (!matches) {
      throw ToolError(
          fmt::format("unknown type tag {} for argument {} (expected string, number, "
                      "integer or boolean)",
                      g2c::tokenizer::python_repr(tag), g2c::tokenizer::python_repr(key)));
    }
    if (!*matches) {
      throw ToolError(fmt::format("argument {}: expected {}, got {}",
                                  g2c::tokenizer::python_repr(key), tag, python_type_name(value)));
    }
  }
  return arguments;
}

}  // namespace g2c::tools
