// Module 20, reference: the history rendered before the message is added, retrieval, the agent's
// run (a failing backend becomes a turn without an answer), the exchange and the turn recorded.
#include "g2c/assistant/assistant.h"
#include "g2c/core/errors.h"

namespace g2c::assistant {

AssistantTurn Assistant::chat(std::string_view user_message, std::optional<bool> use_rag) {
  if (user_message.empty()) {
    throw AssistantError(
        "Assistant::chat: user_message must be a non-empty string (what the user typed)");
  }
  const auto history = conversation_.format_for_prompt();  // the earlier turns only
  auto context = maybe_retrieve(user_message, use_rag);
  auto message = build_contextualized_message(user_message, history, context);

  agent::AgentRunResult run;
  try {
    run = run_agent(message);
  } catch (const NotImplementedError&) {
    throw;  // unwritten course code, not a model failure
  } catch (const std::exception& error) {
    run = failed_run(message, error.what());  // the conversation goes on without an answer
  }

  conversation_.add_user(std::string(user_message));
  conversation_.add_assistant(run.final_answer ? *run.final_answer : no_answer_note(run));

  nlohmann::json metadata = {{"turn_index", turns_.size()},
                             {"rag_fired", !context.empty()},
                             {"had_plan", run.plan.has_value()},
                             {"n_agent_steps", run.steps.size()},
                             {"stopped_reason", run.stopped_reason},
                             {"n_tool_calls", run.metadata.value("n_tool_calls", 0)}};
  auto final_answer = run.final_answer;
  turns_.push_back({std::string(user_message), std::move(final_answer), std::move(run),
                    std::move(context), std::move(message), std::move(metadata)});
  return turns_.back();
}

}  // namespace g2c::assistant
