// Module 20 — the assistant: modules 16-19 joined into one chat turn.
//
//   module 16  Backend          the model, whichever it is
//   module 17  Retriever        optional: chunks of documents that bear on the question
//   module 18  ToolRegistry     the tools the model may call
//   module 19  NativeAgent      the loop that calls them (or Agent, the ReAct text loop)
//   module 20  Conversation     what was said in earlier turns
//
// One turn, chat("And times 3?") after "What is 2+2?" was answered with "4":
//
//   history  = conversation.format_for_prompt()    "User: What is 2+2?\nAssistant: 4"
//              (rendered BEFORE the new message is added: the question goes in once, below)
//   context  = the retriever's k chunks, numbered  "Context from documents:\n\n[1] (source: …)…"
//              ("" without a retriever, with RAG off, or when nothing came back)
//   message  = "Previous conversation:\n" + history, context, the question — blank lines between,
//              empty parts left out
//   run      = the agent's run on that message: tools, steps, a final answer or a stop reason
//   record     conversation += user "And times 3?", assistant "12"
//              (no answer: a note such as "(no answer — stopped: max_steps)", so the next turn's
//              history still reads as a conversation)
//   return     AssistantTurn{question, "12", run, context, message, metadata}
//
// What can go wrong, and where it surfaces. The model's wobbles (unreadable steps, loops, running
// out of steps) are data on the run, as in module 19. A backend that fails mid-turn (a server
// down, a timeout) is data too: the turn comes back without an answer, its run's stopped_reason is
// "error" and its metadata["error"] says what failed, and the exchange is still recorded — the
// conversation survives and the user's words are kept. A retriever that fails is a configuration
// error, not the model's: chat throws AssistantError, before anything is recorded. Unwritten
// course code (a NotImplementedError) always propagates, so a TODO is never mistaken for a model
// failure.
//
// Plain C++, no LibTorch. Everything is provided except Assistant::chat, which is yours
// (g2c/assistant/assistant.cpp).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "g2c/agent/agent.h"
#include "g2c/agent/native.h"
#include "g2c/agent/types.h"
#include "g2c/assistant/config.h"
#include "g2c/assistant/conversation.h"
#include "g2c/inference/backend.h"
#include "g2c/rag/retriever.h"
#include "g2c/tools/registry.h"

namespace g2c::assistant {

/// The agent a turn runs: module 19's NativeAgent (structured tool calls) or its ReAct Agent.
using AnyAgent = std::variant<agent::NativeAgent, agent::Agent>;

/// What one chat call did. A plain record, writable so that an evaluation or the CLI can attach
/// its own notes to metadata.
struct AssistantTurn {
  std::string user_message;  // what the user typed
  // The answer; nullopt when the agent gave none (stopped early, or the backend failed): the
  // conversation then holds a "(no answer — …)" note instead.
  std::optional<std::string> final_answer;
  agent::AgentRunResult agent_run;     // the agent's whole run: steps, plan, stop reason
  std::string retrieved_context;       // the context block spliced in; "" when none
  std::string contextualized_message;  // exactly what the agent was asked
  // chat fills "turn_index", "rag_fired", "had_plan", "n_agent_steps", "stopped_reason",
  // "n_tool_calls".
  nlohmann::json metadata = nlohmann::json::object();
};

/// The Assistant's optional parts, by the Python edition's keyword names.
struct AssistantOptions {
  AssistantConfig config = {};
  /// Retrieval before each turn; nullptr: none. Not owned: it must outlive the assistant.
  rag::Retriever* retriever = nullptr;
  /// A conversation to continue (a saved transcript read back); nullopt: a fresh one capped at
  /// config.max_history_messages. A given conversation keeps its own cap.
  std::optional<Conversation> conversation = std::nullopt;
  /// The agent to run; nullopt: one built from the config (NativeAgent, or Agent when
  /// config.use_native is false).
  std::optional<AnyAgent> agent = std::nullopt;
};

/// The agent settings a config stands for: its loop limits, and its sampling for every backend
/// call. Example: agent_options({.max_steps = 4}).max_steps == 4.
agent::AgentOptions agent_options(const AssistantConfig& config);

/// The retrieved chunks as the prompt shows them: "Context from documents:", then each chunk as
/// "[n] (source: <source>)\n<text>" ("[n] <text>" when its source is empty), numbered from 1, all
/// joined by blank lines; "" for no chunks, so that no empty "Context" heading reaches the model.
/// Example: one chunk "Madrid is in Spain." from geo.md ->
///   "Context from documents:\n\n[1] (source: geo.md)\nMadrid is in Spain."
std::string format_context_block(const std::vector<rag::RetrievedChunk>& retrieved);

/// The capstone assistant. Holds the backend and the retriever by reference (both must outlive
/// it); owns its registry, conversation, agent and the turns since the last reset. One instance
/// can drive many sessions: reset() starts a new one.
class Assistant {
 public:
  /// AssistantError when options.config.validate() fails, and when the native agent is asked for
  /// (config.use_native, no agent given) and `backend` has no chat_with_tools (it is not an
  /// inference::ChatBackend): the message says to set use_native = false.
  Assistant(inference::Backend& backend, g2c::tools::ToolRegistry registry,
            AssistantOptions options = {});

  inference::Backend& backend() const { return *backend_; }
  const g2c::tools::ToolRegistry& registry() const { return registry_; }
  const AssistantConfig& config() const { return config_; }
  rag::Retriever* retriever() const { return retriever_; }
  Conversation& conversation() { return conversation_; }
  const Conversation& conversation() const { return conversation_; }
  const AnyAgent& agent() const { return agent_; }
  /// The turns since the last reset(), oldest first.
  const std::vector<AssistantTurn>& turns() const { return turns_; }

  /// Clears the conversation and the turns; the agent and the settings stay.
  void reset();
  /// Later turns show themselves while they run: each backend call's text goes to `on_text` as it
  /// is generated (by a backend that can stream; see inference::TextSink), each agent step to
  /// `on_step` once it is recorded. Empty functions: nobody watches (the default). The terminal
  /// loop watches its turns this way.
  void watch(inference::TextSink on_text, std::function<void(const agent::AgentStep&)> on_step);

  /// Your work: one turn (the top of this file shows it): the history rendered, the context
  /// retrieved (use_rag: this turn's override of config.rag_enabled; nullopt: the config decides),
  /// the agent run on the contextualized message, the exchange recorded in the conversation, the
  /// turn recorded in turns() and returned. Throws AssistantError for an empty message ("must be
  /// a non-empty string") and when the retriever fails; a backend that fails gives a turn without
  /// an answer (stopped_reason "error") instead of an exception.
  AssistantTurn chat(std::string_view user_message, std::optional<bool> use_rag = std::nullopt);
  /// The Python edition refuses a non-string with an AssistantError; here it does not compile.
  AssistantTurn chat(std::nullptr_t, std::optional<bool> use_rag = std::nullopt) = delete;

  /// The run that stands in for one that threw: no steps, no answer, stopped_reason "error",
  /// metadata {"n_steps": 0, "n_tool_calls": 0, "error": error}.
  static agent::AgentRunResult failed_run(std::string message, std::string_view error);

  /// What the conversation records for a run without an answer: "(no answer — stopped:
  /// <stopped_reason>)", or "(no answer — error: <what failed>)" for a failed run. The
  /// terminal loop records the same note for a turn that failed before chat recorded it.
  static std::string no_answer_note(const agent::AgentRunResult& run);

  /// What the agent is asked: "Previous conversation:\n" + history_block, then context_block,
  /// then user_message, joined by "\n\n", the empty parts left out.
  /// Example: ("again", "User: hi\nAssistant: hello", "") ->
  ///   "Previous conversation:\nUser: hi\nAssistant: hello\n\nagain". Public: exercise 18b
  /// trains SmolLM2 on later turns as the assistant words them.
  static std::string build_contextualized_message(std::string_view user_message,
                                                  std::string_view history_block,
                                                  std::string_view context_block);

 private:
  /// The context block for this turn (format_context_block), or "" when there is no retriever or
  /// RAG is off (use_rag, else config.rag_enabled). Retrieves config.rag_k chunks for `query`;
  /// AssistantError "Assistant: retriever failed: …" when the retriever throws.
  std::string maybe_retrieve(std::string_view query, std::optional<bool> use_rag) const;

  /// The agent's run on `message`, whichever agent this is. Throws what the agent throws (a
  /// backend's failure included).
  agent::AgentRunResult run_agent(std::string_view message) const;

  inference::Backend* backend_;
  g2c::tools::ToolRegistry registry_;
  AssistantConfig config_;
  rag::Retriever* retriever_;
  Conversation conversation_;
  AnyAgent agent_;
  std::vector<AssistantTurn> turns_;
};

/// "Assistant(name='g2c-assistant', backend=fake, tools=['calculator'], rag=off, turns=0)".
std::ostream& operator<<(std::ostream& stream, const Assistant& assistant);

}  // namespace g2c::assistant
