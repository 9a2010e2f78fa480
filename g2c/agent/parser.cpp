// Module 19 — your work: read one ReAct step out of a completion.
#include <fmt/format.h>

#include "g2c/agent/parser.h"
#include "g2c/core/errors.h"
#include "g2c/tokenizer/utf8.h"
#include "g2c/tools/schema.h"

namespace g2c::agent {

ParsedStep parse_react_step(std::string_view text) {
  // TODO: the recipe of parser.h, with react_field(text, ReactMarker::...) to find each marker's
  // text and strip_whitespace / strip_code_fences to clean it:
  //   thought = strip_whitespace(react_field(text, ReactMarker::Thought).value_or(""));
  //   a Final Answer that is non-empty once stripped -> ParsedStep(thought, std::nullopt, answer,
  //   std::nullopt), even when an Action is there too (the model says it is done);
  //   otherwise the Action and the Action Input, each missing case its own parse_error; the tool
  //   name stripped of whitespace, then of trailing '.', ',', ';', ':'; the input parsed with
  //   nlohmann::json::parse (catch nlohmann::json::parse_error) and required to be an object.
  // Every failure is a ParsedStep(thought, std::nullopt, std::nullopt, "why"), never an exception:
  // the loop shows the model its parse error and the run goes on.
  // Hints, one step at a time: scripts/hint.sh 19 parse_react_step
  throw g2c::todo("parse_react_step", "g2c/agent/parser.cpp", "19");
}

}  // namespace g2c::agent
