// Module 20 — your work: one chat turn, modules 16-19 joined.
#include "g2c/assistant/assistant.h"
#include "g2c/core/errors.h"

namespace g2c::assistant {

AssistantTurn Assistant::chat(std::string_view user_message, std::optional<bool> use_rag) {
  // TODO: One turn, modules 16-19 joined; the lesson is the order (assistant.h shows a turn).
  // An empty user_message -> AssistantError ("must be a non-empty string"). The history from
  // conversation_.format_for_prompt() BEFORE the message is added (else the question reaches the
  // model twice); the context from maybe_retrieve (it decides whether RAG runs this turn); the
  // message from build_contextualized_message; the run from run_agent. A run that throws becomes
  // data, failed_run(message, what()), except a NotImplementedError (unwritten course code),
  // which propagates. Then record the exchange (the user's words, then the final answer or
  // no_answer_note(run)) and the turn: an AssistantTurn whose metadata holds "turn_index"
  // (turns_.size() before it), "rag_fired", "had_plan", "n_agent_steps", "stopped_reason" and
  // "n_tool_calls" (run.metadata's, 0 when absent); push it onto turns_ and return it.
  // Hints, one step at a time: scripts/hint.sh 20 Assistant::chat
  throw g2c::todo("Assistant::chat", "g2c/assistant/assistant.cpp", "20");
}

}  // namespace g2c::assistant
