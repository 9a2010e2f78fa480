// Module 19 — your work: read one ReAct step out of a completion.
#include <fmt/format.h>

#include "g2c/agent/parser.h"
#include "g2c/core/errors.h"
#include "g2c/tokenizer/utf8.h"
#include "g2c/tools/schema.h"

namespace g2c::agent {

ParsedStep parse_react_step(std::string_view text) {
  // TODO: What one ReAct completion means: an answer, an action, or why neither could be read.
  // react_field(text, ReactMarker::…) finds each marker's text; parser.h has the rules and the
  // exact messages. In order: the thought (strip_whitespace, "" when absent); a Final Answer
  // non-empty once stripped wins, even beside an Action (the model says it is done); otherwise
  // an Action needs both its name and its Action Input; the name loses whitespace, then trailing
  // ".,;:"; the input, out of its code fence (strip_code_fences), must parse as JSON
  // (nlohmann::json::parse; catch nlohmann::json::parse_error) and be an object. The messages
  // quote the tool name with g2c::tokenizer::python_repr and name a wrong JSON type with
  // g2c::tools::python_type_name. Every failure is a ParsedStep with a parse_error, never an
  // exception: the loop shows it to the model and the run goes on.
  // Hints, one step at a time: scripts/hint.sh 19 parse_react_step
  throw g2c::todo("parse_react_step", "g2c/agent/parser.cpp", "19");
}

}  // namespace g2c::agent
