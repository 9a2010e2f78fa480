// Module 19, reference: a Final Answer wins; otherwise an Action needs its Action Input, a name,
// and a JSON object; whatever cannot be read becomes a parse_error, never an exception.
#include <fmt/format.h>

#include "g2c/agent/parser.h"
#include "g2c/tokenizer/utf8.h"
#include "g2c/tools/schema.h"

namespace g2c::agent {

ParsedStep parse_react_step(std::string_view text) {
  const std::string thought =
      strip_whitespace(react_field(text, ReactMarker::Thought).value_or(""));
  if (const auto answer = react_field(text, ReactMarker::FinalAnswer)) {
    if (auto final_answer = strip_whitespace(*answer); !final_answer.empty()) {
      return ParsedStep(thought, std::nullopt, std::move(final_answer), std::nullopt);
    }
  }
  const auto stuck = [&](std::string why) {
    return ParsedStep(thought, std::nullopt, std::nullopt, std::move(why));
  };
  const auto action = react_field(text, ReactMarker::Action);
  const auto input = react_field(text, ReactMarker::ActionInput);
  if (!action && !input) return stuck("no Action, Action Input, or Final Answer found");
  if (!action) return stuck("Action Input present but Action missing");
  if (!input) {
    return stuck(fmt::format("Action {} found but no Action Input",
                             g2c::tokenizer::python_repr(strip_whitespace(*action))));
  }
  std::string tool = strip_whitespace(*action);
  while (!tool.empty() && std::string_view(".,;:").find(tool.back()) != std::string_view::npos) {
    tool.pop_back();
  }
  if (tool.empty()) return stuck("Action name is empty");
  nlohmann::json arguments;
  try {
    arguments = nlohmann::json::parse(strip_code_fences(*input));
  } catch (const nlohmann::json::parse_error& error) {
    return stuck(std::string("Action Input is not valid JSON: ") + error.what());
  }
  if (!arguments.is_object()) {
    return stuck(fmt::format("Action Input must be a JSON object, got {}",
                             g2c::tools::python_type_name(arguments)));
  }
  return ParsedStep(thought, Action(tool, arguments), std::nullopt, std::nullopt);
}

}  // namespace g2c::agent
