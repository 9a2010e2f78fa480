// Module 18 — the tool loop: the model writes, the loop runs the tools it asked for, the results go
// back into the prompt, and round again until the model answers without calling anything.
//
//   prompt = system, the tools, "User: <message>", "Assistant:"
//   step 1: complete(prompt) -> "<tool_call>{calculator, 13 + 28}</tool_call>"
//           dispatch -> 41;  prompt += the completion, the <tool_result> block, "Assistant:"
//   step 2: complete(prompt) -> "13 + 28 = 41."   no calls: the final answer
//
// Two channels. The text format (run_text_loop, yours) works with any Backend: the tools are
// described in the prompt and calls are <tool_call> blocks in the completion. The native channel
// works with a ChatBackend (Ollama's /api/chat): the tools travel as function specs, the calls
// come back structured, the results go back as "tool" messages; when a model writes the call's
// JSON into its text instead, the call is rescued from there (rescue_tool_call) and counted.
// run_with_tools, provided, checks the inputs and picks the channel.
//
// Every way a call can fail — an unknown tool, arguments the schema refuses, a tool that throws —
// comes back from dispatch_tool_call as a ToolResult with is_error set, so the model sees the error
// and can recover; nothing a model writes ends the run. max_steps bounds the backend calls, so a
// model that calls tools forever stops there with no final answer.
// Plain C++, no LibTorch. run_text_loop is yours (g2c/tools/loop.cpp); the rest is provided.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "g2c/inference/backend.h"
#include "g2c/tools/registry.h"
#include "g2c/tools/schema.h"
#include "g2c/tools/tool.h"

namespace g2c::tools {

/// The loop's settings, by the Python edition's keyword names. The sampling settings go to every
/// backend call; near-greedy by default, since choosing a tool benefits from consistency.
struct ToolLoopOptions {
  std::optional<std::string> system;  // nullopt: DEFAULT_SYSTEM (text), DEFAULT_NATIVE_SYSTEM
  std::int64_t max_steps = 5;         // backend calls at most, > 0
  inference::CompletionOptions sampling =
      inference::CompletionOptions().with_max_new_tokens(512).with_temperature(0.2);
};

/// run_with_tools' settings: the loop's, and the choice of channel.
struct RunWithToolsOptions : ToolLoopOptions {
  /// nullopt: the native channel when the backend is a ChatBackend, the text format otherwise;
  /// true: native (ValueError for a backend without chat_with_tools); false: the text format.
  std::optional<bool> use_native_tools;
  /// The native channel's "think" flag (reasoning models), sent only when set.
  std::optional<bool> think;
};

/// The native channel's system prompt: the tools travel as specs, so it only says when to use them.
inline constexpr std::string_view DEFAULT_NATIVE_SYSTEM =
    "You are a helpful assistant that can use tools. Call a tool when it helps you answer; once "
    "you know enough, answer in plain text.";

/// One call run: the tool looked up, its arguments validated, its function called, the output as
/// text (a JSON string as it is, any other value as its JSON). Never throws for the model's
/// mistakes: an unknown name, invalid arguments, a ToolError from the tool (its message) or any
/// other exception from it ("<type>: <message>", e.g. "runtime_error: kaboom") all come back as a
/// result with is_error set.
ToolResult dispatch_tool_call(const ToolRegistry& registry, const ToolCall& call);

/// A run's metadata: {"n_steps", "n_tool_calls" (over all steps), "tools_available" (the
/// registry's names), "backend_name", "backend_model_id"}.
nlohmann::json run_metadata(const std::vector<ToolStep>& steps, const ToolRegistry& registry,
                            const inference::BackendInfo& backend);

/// Your work: the text-format loop. The first prompt joins, with blank lines between them,
/// options.system (DEFAULT_SYSTEM when unset), render_tools_for_prompt(registry.tools()),
/// "User: <user_message>" and "Assistant:". Each step calls backend.complete(prompt,
/// options.sampling) and parses the completion's calls:
///   - none: the completion is the final answer; record the step (no calls, no results), stop
///     with stopped_reason "no_more_calls";
///   - some: dispatch each (in order), record the step, and extend the prompt with " " + the
///     completion + "\n\n" + format_tool_results(results) + "\n\nAssistant:".
/// After max_steps steps without an answer: final_answer nullopt, stopped_reason "max_steps".
/// metadata: run_metadata(steps, registry, backend.info()). ValueError for an empty user_message
/// or max_steps <= 0.
ToolRunResult run_text_loop(inference::Backend& backend, const ToolRegistry& registry,
                            std::string_view user_message, const ToolLoopOptions& options = {});

/// The tool loop over either channel (see RunWithToolsOptions::use_native_tools). ValueError for
/// an empty user_message, max_steps <= 0, or the native channel asked of a backend without it.
/// metadata as run_text_loop's, plus "channel" ("text-format" or "native") and, on the native
/// channel, "n_rescued_calls" (calls found in the text rather than in tool_calls).
ToolRunResult run_with_tools(inference::Backend& backend, const ToolRegistry& registry,
                             std::string_view user_message,
                             const RunWithToolsOptions& options = {});

}  // namespace g2c::tools
