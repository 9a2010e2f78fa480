// Module 20 — your work: one chat turn, modules 16-19 joined.
#include "g2c/assistant/assistant.h"
#include "g2c/core/errors.h"

namespace g2c::assistant {

AssistantTurn Assistant::chat(std::string_view user_message, std::optional<bool> use_rag) {
  // TODO: one turn, in this order (assistant.h shows it on an example):
  //   1. an empty user_message: throw AssistantError("Assistant::chat: user_message must be a
  //      non-empty string ...");
  //   2. history = conversation_.format_for_prompt(), BEFORE the new message is added (else the
  //      question reaches the model twice: in the history and as the question);
  //   3. context = maybe_retrieve(user_message, use_rag) (it decides whether to retrieve);
  //   4. message = build_contextualized_message(user_message, history, context);
  //   5. run = run_agent(message); when it throws, rethrow a NotImplementedError (unwritten
  //      course code) and turn any other std::exception into run = failed_run(message, what());
  //   6. record the exchange: conversation_.add_user(...), then conversation_.add_assistant(...)
  //      with the final answer, or no_answer_note(run) when there is none;
  //   7. the AssistantTurn{user_message, run.final_answer, run, context, message, metadata} with
  //      metadata "turn_index" (turns_.size()), "rag_fired" (context not empty), "had_plan",
  //      "n_agent_steps", "stopped_reason" and "n_tool_calls" (run.metadata's, 0 when absent);
  //      push it onto turns_ and return it.
  // Hints, one step at a time: scripts/hint.sh 20 Assistant::chat
  throw g2c::todo("Assistant::chat", "g2c/assistant/assistant.cpp", "20");
}

}  // namespace g2c::assistant
