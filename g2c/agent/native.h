// Module 19 — the native agent: the same loop, spoken in structured tool calls instead of ReAct
// text. Provided.
//
// The ReAct agent (agent.h) describes a text format and parses what the model writes. A model
// trained for tool calling (Ollama's /api/chat, g2c-serve, the pretrained backend) is given the
// tools as function specs instead and answers with structured calls, so there is nothing to parse:
//
//   messages = system (+ plan), user                     -> reply: tool_calls [calculator {...}]
//   messages += assistant {tool_calls}, tool {"108"}     -> reply: content "12 * 9 is 108."
//
// Each reply becomes an AgentStep, so the records, the metadata and the stop conditions are the
// ReAct agent's: a reply with a call acts (the first call only: a step holds one action), a reply
// with text only is the final answer, an empty reply is stuck; a call repeated from the last action
// step stops the run (loop_detection). When a model writes the call's JSON in its text instead
// of a structured call, the call is rescued from there (module 18's rescue_tool_call) and counted.
// The policy here is written out in full rather than calling Agent::decide_step, so the native
// agent works before module 19's own functions are written. Plain C++, no LibTorch.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "g2c/agent/agent.h"
#include "g2c/inference/backend.h"
#include "g2c/tools/registry.h"

namespace g2c::agent {

/// The native channel's system prompt: when to call a tool and when to stop — and nothing about
/// Thought or Action markers, which would pull a tool-calling model toward writing them as text.
extern const std::string_view NATIVE_DEFAULT_AGENT_SYSTEM;

/// The agent's settings, and the native channel's own.
struct NativeAgentOptions : AgentOptions {
  std::optional<std::string> system = std::nullopt;  // nullopt: NATIVE_DEFAULT_AGENT_SYSTEM
  std::optional<bool> think = std::nullopt;          // sent to chat_with_tools only when set
};

/// The messages the next chat_with_tools call sees: the system prompt (with the plan block after a
/// blank line, when there is a plan), the user's task, then for each step that acted an
/// "assistant" message carrying its call ({"id": "call_<i>", "type": "function", "function":
/// {"name", "arguments"}}, its thought as content) and a "tool" message with the observation.
/// Steps that answered or could not be read are left out.
nlohmann::json history_to_messages(std::string_view system, std::string_view user_message,
                                   const std::optional<Plan>& plan,
                                   const std::vector<AgentStep>& steps);

class NativeAgent {
 public:
  /// AgentError when the backend has no chat_with_tools (it is not an inference::ChatBackend), and
  /// as check_agent_options says.
  NativeAgent(inference::Backend& backend, g2c::tools::ToolRegistry registry,
              NativeAgentOptions options = {});

  inference::Backend& backend() const { return *backend_; }
  const g2c::tools::ToolRegistry& registry() const { return registry_; }
  const NativeAgentOptions& options() const { return options_; }
  /// The system prompt sent: options.system or NATIVE_DEFAULT_AGENT_SYSTEM.
  const std::string& system() const { return system_; }

  /// One task, as Agent::run. metadata adds "channel": "native" and "n_rescued_calls".
  /// ValueError for an empty user_message.
  AgentRunResult run(std::string_view user_message) const;
  AgentRunResult run(std::nullptr_t) const = delete;

 private:
  inference::Backend* backend_;
  inference::ChatBackend* chat_;  // the same backend, as a chat backend
  g2c::tools::ToolRegistry registry_;
  NativeAgentOptions options_;
  std::string system_;
};

/// "NativeAgent(backend=fake-chat, tools=['calculator'], max_steps=8)".
std::ostream& operator<<(std::ostream& stream, const NativeAgent& agent);

}  // namespace g2c::agent
