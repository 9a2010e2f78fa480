// Module 18, reference: the text-format loop — complete, parse, dispatch, feed the results back —
// until a completion makes no calls or the steps run out.
#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/tools/loop.h"
#include "g2c/tools/parser.h"

namespace g2c::tools {

ToolRunResult run_text_loop(inference::Backend& backend, const ToolRegistry& registry,
                            std::string_view user_message, const ToolLoopOptions& options) {
  if (user_message.empty()) throw ValueError("run_text_loop: user_message must be non-empty");
  if (options.max_steps <= 0) {
    throw ValueError(
        fmt::format("run_text_loop: max_steps must be > 0, got {}", options.max_steps));
  }
  std::string prompt = fmt::format(
      "{}\n\n{}\n\nUser: {}\n\nAssistant:", options.system.value_or(std::string(DEFAULT_SYSTEM)),
      render_tools_for_prompt(registry.tools()), user_message);

  ToolRunResult run{std::string(user_message), std::nullopt, {}, "max_steps"};
  for (std::int64_t step = 0; step < options.max_steps; ++step) {
    auto inference = backend.complete(prompt, options.sampling);
    const std::string completion = inference.completion;
    auto calls = parse_tool_calls(completion);
    if (calls.empty()) {
      run.final_answer = completion;
      run.steps.push_back({completion, {}, {}, std::move(inference)});
      run.stopped_reason = "no_more_calls";
      break;
    }
    std::vector<ToolResult> results;
    for (const auto& call : calls) results.push_back(dispatch_tool_call(registry, call));
    // The model reads its own call and the results, then writes the next assistant turn.
    prompt += " " + completion + "\n\n" + format_tool_results(results) + "\n\nAssistant:";
    run.steps.push_back({completion, std::move(calls), std::move(results), std::move(inference)});
  }
  run.metadata = run_metadata(run.steps, registry, backend.info());
  return run;
}

}  // namespace g2c::tools
