// Module 18 — your work: check a model's arguments against its tool's JSON-schema-lite.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "g2c/core/errors.h"
#include "g2c/tokenizer/utf8.h"
#include "g2c/tools/schema.h"

namespace g2c::tools {

nlohmann::json validate_arguments(const Tool& tool, const nlohmann::json& arguments) {
  // TODO: return a copy of `arguments` once it passes, in this order (each failure a ToolError
  // whose message names the offending keys, so the model can fix its next call):
  //   1. arguments.is_object(), else "arguments must be a JSON object, got <python_type_name>";
  //   2. schema = tool.parameters(); schema.value("type", nlohmann::json()) == "object", else
  //      "schema must be of type object";
  //   3. properties = schema.value("properties", object), required = schema.value("required",
  //      array): every name of `required` is a key of arguments, else "missing required
  //      arguments: ['b']" (all the missing ones);
  //   4. every key of arguments is a key of properties, else "unknown arguments: ['junk']";
  //   5. each value has its property's "type" (default "string"): string is_string(), integer
  //      is_number_integer(), number is_number(), boolean is_boolean(); another tag is
  //      "unknown type tag 'widget'"; a mismatch "argument 'text': expected string, got int".
  // A JSON true is not a number here: nlohmann's get<int>() would turn it into 1, so check the
  // JSON type, never whether a conversion succeeds.
  // Hints, one step at a time: scripts/hint.sh 18 validate_arguments
  throw g2c::todo("validate_arguments", "g2c/tools/schema.cpp", "18");
}

}  // namespace g2c::tools
