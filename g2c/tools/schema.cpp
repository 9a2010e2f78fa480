// Module 18 — your work: check a model's arguments against its tool's JSON-schema-lite.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "g2c/core/errors.h"
#include "g2c/tokenizer/utf8.h"
#include "g2c/tools/schema.h"

namespace g2c::tools {

nlohmann::json validate_arguments(const Tool& tool, const nlohmann::json& arguments) {
  // TODO: The gate between a model's guessed arguments and the tool: return them unchanged (a
  // copy) only when they fit tool.parameters(), else throw a ToolError the model can act on. The
  // checks, in this order, stop at the first failure (schema.h gives each message): arguments is
  // an object; the schema's "type" is "object"; no name of "required" is missing (list them all);
  // no key is outside "properties" (list them all); each value has its property's "type"
  // (default "string"; a tag other than string/number/integer/boolean is itself an error).
  // Judge a type by the JSON value (is_string, is_number_integer, is_number, is_boolean), never
  // by whether get<>() converts: nlohmann turns true into 1. Quote names as Python prints them
  // with g2c::tokenizer::python_repr (a list reads ['a', 'b']); name a type with python_type_name.
  // Hints, one step at a time: scripts/hint.sh 18 validate_arguments
  throw g2c::todo("validate_arguments", "g2c/tools/schema.cpp", "18");
}

}  // namespace g2c::tools
