// Module 18 — your work: the text-format tool loop.
#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/tools/loop.h"
#include "g2c/tools/parser.h"

namespace g2c::tools {

ToolRunResult run_text_loop(inference::Backend& backend, const ToolRegistry& registry,
                            std::string_view user_message, const ToolLoopOptions& options) {
  // TODO: ValueError for an empty user_message or options.max_steps <= 0. Then:
  //   prompt = system (options.system.value_or(std::string(DEFAULT_SYSTEM))), "\n\n",
  //            render_tools_for_prompt(registry.tools()), "\n\nUser: ", user_message,
  //            "\n\nAssistant:"
  //   run = ToolRunResult{std::string(user_message), std::nullopt, {}, "max_steps"}
  //   up to options.max_steps times:
  //     inference = backend.complete(prompt, options.sampling); calls =
  //     parse_tool_calls(inference.completion)
  //     no calls: final_answer = the completion, push ToolStep{completion, {}, {}, inference},
  //               stopped_reason = "no_more_calls", stop
  //     else: results = dispatch_tool_call(registry, call) for each call, in order; push the
  //           step; prompt += " " + completion + "\n\n" + format_tool_results(results) +
  //           "\n\nAssistant:"
  //   run.metadata = run_metadata(run.steps, registry, backend.info()); return run.
  // Feeding the results back is the whole point: a loop that only appends "Assistant:" asks the
  // model the same question again and it calls the same tool again until max_steps.
  // Hints, one step at a time: scripts/hint.sh 18 run_text_loop
  throw g2c::todo("run_text_loop", "g2c/tools/loop.cpp", "18");
}

}  // namespace g2c::tools
