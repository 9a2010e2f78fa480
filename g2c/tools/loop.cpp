// Module 18 — your work: the text-format tool loop.
#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/tools/loop.h"
#include "g2c/tools/parser.h"

namespace g2c::tools {

ToolRunResult run_text_loop(inference::Backend& backend, const ToolRegistry& registry,
                            std::string_view user_message, const ToolLoopOptions& options) {
  // TODO: The text-format tool loop, a transcript that grows. ValueError first for an empty
  // user_message or max_steps <= 0. The first prompt joins, with blank lines, the system text
  // (options.system, else DEFAULT_SYSTEM), render_tools_for_prompt(registry.tools()),
  // "User: <user_message>" and "Assistant:". Each of at most max_steps steps continues it with
  // backend.complete(prompt, options.sampling) and reads the calls with parse_tool_calls.
  // No call: the completion is the final answer; record the step, stop with "no_more_calls".
  // Calls: run each, in order, with dispatch_tool_call, record the step, and append to the prompt
  // " " + the completion (the model's own call) + "\n\n" + format_tool_results(results) +
  // "\n\nAssistant:". Without the results the model is asked the same question again and calls
  // the same tool until max_steps. Out of steps: no final answer, stopped_reason "max_steps".
  // The run's metadata comes from run_metadata.
  // Hints, one step at a time: scripts/hint.sh 18 run_text_loop
  throw g2c::todo("run_text_loop", "g2c/tools/loop.cpp", "18");
}

}  // namespace g2c::tools
