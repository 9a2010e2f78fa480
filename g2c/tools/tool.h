// Module 18 — tools: what a model may call, what it asked for, and what came back.
//
//   Tool           a name the model calls it by, a description the model reads to decide when to
//                  call it, a JSON-schema-lite `parameters` object the arguments must match, and
//                  the function that runs
//   ToolCall       one call found in the model's text: the tool's name, the arguments as the
//                  model wrote them (not yet validated) and an id for matching the result to it
//   ToolResult     what one call gave back, or what went wrong with it (is_error)
//   ToolStep       one turn of the loop: the model's text, the calls in it, their results and the
//                  backend's answer (token counts, latency)
//   ToolRunResult  a whole run: the final answer (none when the steps ran out), every step, why
//                  it stopped, and counts worth keeping
//
// A failed call becomes a ToolResult with is_error set, never an exception that ends the run: the
// model reads the error in its next prompt and can try again with better arguments. ToolError is
// what validators and tools throw for that; dispatch_tool_call (loop.h) turns it into a result.
// Plain C++, no LibTorch. Everything here is provided.
#pragma once

#include <functional>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "g2c/inference/backend.h"

namespace g2c::tools {

/// A call the model made that cannot run as written: arguments that do not match the schema, an
/// expression the calculator refuses, a path outside the sandbox. Its message is written for the
/// model, which reads it in the next prompt: it names what was wrong and what is accepted.
class ToolError : public std::runtime_error {
 public:
  explicit ToolError(const std::string& message) : std::runtime_error(message) {}
};

/// ToolRegistry::get for a name nobody registered (the Python edition's KeyError); the message
/// lists the names that are registered.
class UnknownToolError : public std::out_of_range {
 public:
  explicit UnknownToolError(const std::string& message) : std::out_of_range(message) {}
};

/// A tool's function: the validated arguments (a JSON object) in, the output out. A string comes
/// back to the model as it is; any other JSON value as its JSON text (42 -> "42").
using ToolFunction = std::function<nlohmann::json(const nlohmann::json& arguments)>;

/// A callable the model can use, fixed once made (getters, no setters): a tool that changed after
/// the prompt described it would run against a schema the model never saw.
///
/// `parameters` is JSON-schema-lite, an object with primitive properties:
///   {"type": "object",
///    "properties": {"expression": {"type": "string", "description": "..."}},
///    "required": ["expression"]}
/// with "type" one of "string", "number", "integer", "boolean" per property (validate_arguments
/// in schema.h checks calls against it).
class Tool {
 public:
  /// ValueError for an empty name or description, `parameters` that are not a JSON object, or an
  /// empty function; each message names the field.
  Tool(std::string name, std::string description, nlohmann::json parameters, ToolFunction func);

  const std::string& name() const { return name_; }
  const std::string& description() const { return description_; }
  const nlohmann::json& parameters() const { return parameters_; }
  /// The function, to call with arguments already validated: tool.func()({{"expression", "1+1"}}).
  const ToolFunction& func() const { return func_; }

 private:
  std::string name_;
  std::string description_;
  nlohmann::json parameters_;
  ToolFunction func_;
};

/// "Tool(name='calculator')".
std::ostream& operator<<(std::ostream& stream, const Tool& tool);

/// One call parsed out of the model's output. `arguments` is what the model wrote, not yet checked
/// against the tool's schema (dispatch_tool_call does that). `call_id` is given by the parser,
/// "call_<index>_<8 hex digits>": unique within one parse, so that a result can be matched to its
/// call when one turn makes several.
class ToolCall {
 public:
  ToolCall(std::string name, nlohmann::json arguments, std::string call_id);

  const std::string& name() const { return name_; }
  const nlohmann::json& arguments() const { return arguments_; }
  const std::string& call_id() const { return call_id_; }

  bool operator==(const ToolCall& other) const = default;

 private:
  std::string name_;
  nlohmann::json arguments_;
  std::string call_id_;
};

/// "ToolCall(name='calculator', arguments={"expression":"2 + 2"}, call_id='call_0_1a2b3c4d')".
std::ostream& operator<<(std::ostream& stream, const ToolCall& call);

/// One call's outcome: the tool's output as text, or (is_error) the error message the model will
/// read, inside a <tool_error> block rather than a <tool_result> one so that it reads as a signal
/// to try again and not as an answer to repeat.
class ToolResult {
 public:
  ToolResult(std::string call_id, std::string name, std::string output, bool is_error = false);

  const std::string& call_id() const { return call_id_; }
  const std::string& name() const { return name_; }
  const std::string& output() const { return output_; }
  bool is_error() const { return is_error_; }

  bool operator==(const ToolResult& other) const = default;

 private:
  std::string call_id_;
  std::string name_;
  std::string output_;
  bool is_error_;
};

/// "ToolResult(name='calculator', call_id='call_0_1a2b3c4d', is_error=False, output='4')".
std::ostream& operator<<(std::ostream& stream, const ToolResult& result);

/// One turn of the loop: the completion, the calls parsed from it and their results (one per call,
/// in order; both empty on the turn that answers), and the backend's answer with its token counts
/// and latency, so a run can say what each step cost.
struct ToolStep {
  std::string completion;
  std::vector<ToolCall> tool_calls;
  std::vector<ToolResult> tool_results;
  inference::InferenceResult inference;
};

/// A whole run. `final_answer` is the completion of the turn that made no calls, nullopt when the
/// loop ran out of steps first; `stopped_reason` is "no_more_calls" or "max_steps". `metadata`
/// holds the run's counts ("n_steps", "n_tool_calls"), "tools_available", "backend_name",
/// "backend_model_id" and the channel used; callers may add their own (an evaluation's verdict).
struct ToolRunResult {
  std::string user_message;
  std::optional<std::string> final_answer;
  std::vector<ToolStep> steps;
  std::string stopped_reason;
  nlohmann::json metadata = nlohmann::json::object();
};

}  // namespace g2c::tools
