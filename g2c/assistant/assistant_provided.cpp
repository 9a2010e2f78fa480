// Module 20 — the provided half of assistant.h: construction, retrieval, the message the agent
// is asked, and the pieces chat uses when a run fails.
#include <exception>
#include <type_traits>
#include <utility>
#include <variant>

#include <fmt/format.h>

#include "g2c/assistant/assistant.h"
#include "g2c/core/errors.h"
#include "g2c/tokenizer/utf8.h"

namespace g2c::assistant {

agent::AgentOptions agent_options(const AssistantConfig& config) {
  auto sampling = inference::CompletionOptions()
                      .with_max_new_tokens(config.max_new_tokens)
                      .with_temperature(config.temperature)
                      .with_top_k(config.top_k)
                      .with_top_p(config.top_p);
  sampling.extras.repeat_penalty = config.repeat_penalty;
  sampling.extras.repeat_last_n = config.repeat_last_n;
  return {.max_steps = config.max_steps,
          .plan = config.plan,
          .loop_detection = config.loop_detection,
          .halt_on_stuck = config.halt_on_stuck,
          .scratchpad_max_chars = config.scratchpad_max_chars,
          .sampling = sampling};
}

std::string format_context_block(const std::vector<rag::RetrievedChunk>& retrieved) {
  if (retrieved.empty()) return "";  // no heading over nothing: it confuses small models
  std::string text = "Context from documents:";
  for (std::size_t i = 0; i < retrieved.size(); ++i) {
    const auto& chunk = retrieved[i].chunk;
    text += chunk.source().empty()
                ? fmt::format("\n\n[{}] {}", i + 1, chunk.text())
                : fmt::format("\n\n[{}] (source: {})\n{}", i + 1, chunk.source(), chunk.text());
  }
  return text;
}

namespace {

/// The agent the config asks for, over `backend`.
AnyAgent build_agent(inference::Backend& backend, const g2c::tools::ToolRegistry& registry,
                     const AssistantConfig& config) {
  if (!config.use_native) return agent::Agent(backend, registry, agent_options(config));
  if (dynamic_cast<inference::ChatBackend*>(&backend) == nullptr) {
    throw AssistantError(fmt::format(
        "Assistant: config.use_native is true (the default), but backend '{}' has no "
        "chat_with_tools (it is not an inference::ChatBackend). Set use_native = false to run the "
        "ReAct text agent over complete(), or use a chat backend (Ollama, g2c-serve, the "
        "pretrained backend)",
        backend.info().name()));
  }
  agent::NativeAgentOptions options;
  static_cast<agent::AgentOptions&>(options) = agent_options(config);
  return agent::NativeAgent(backend, registry, std::move(options));
}

/// The config, checked before anything is built from it.
const AssistantConfig& validated(const AssistantConfig& config) {
  config.validate();
  return config;
}

}  // namespace

Assistant::Assistant(inference::Backend& backend, g2c::tools::ToolRegistry registry,
                     AssistantOptions options)
    : backend_(&backend),
      registry_(std::move(registry)),
      config_(validated(options.config)),
      retriever_(options.retriever),
      conversation_(options.conversation ? std::move(*options.conversation)
                                         : Conversation(config_.max_history_messages)),
      agent_(options.agent ? std::move(*options.agent) : build_agent(backend, registry_, config_)) {
}

void Assistant::reset() {
  conversation_.clear();
  turns_.clear();
}

void Assistant::watch(inference::TextSink on_text,
                      std::function<void(const agent::AgentStep&)> on_step) {
  // The agents take their options once, at construction: the same agent again, watched.
  std::visit(
      [&](auto& agent) {
        auto options = agent.options();
        options.sampling.on_text = std::move(on_text);
        options.on_step = std::move(on_step);
        agent =
            std::decay_t<decltype(agent)>(agent.backend(), agent.registry(), std::move(options));
      },
      agent_);
}

std::string Assistant::maybe_retrieve(std::string_view query, std::optional<bool> use_rag) const {
  if (retriever_ == nullptr || !use_rag.value_or(config_.rag_enabled)) return "";
  std::vector<rag::RetrievedChunk> retrieved;
  try {
    retrieved = retriever_->retrieve(std::string(query), config_.rag_k);
  } catch (const NotImplementedError&) {
    throw;  // a retriever built on unwritten course code: say so, unwrapped
  } catch (const std::exception& error) {
    // Not the model's mistake but the setup's (an empty index, a broken embedder): loudly.
    throw AssistantError(fmt::format(
        "Assistant: retriever failed: {} (check the retriever's index and embedder, or pass "
        "use_rag = false to chat without retrieval)",
        error.what()));
  }
  return format_context_block(retrieved);
}

std::string Assistant::build_contextualized_message(std::string_view user_message,
                                                    std::string_view history_block,
                                                    std::string_view context_block) {
  std::string message;
  if (!history_block.empty())
    message += fmt::format("Previous conversation:\n{}\n\n", history_block);
  if (!context_block.empty()) message += fmt::format("{}\n\n", context_block);
  return message + std::string(user_message);
}

agent::AgentRunResult Assistant::run_agent(std::string_view message) const {
  return std::visit([&](const auto& agent) { return agent.run(message); }, agent_);
}

agent::AgentRunResult Assistant::failed_run(std::string message, std::string_view error) {
  return {std::move(message),
          std::nullopt,
          std::nullopt,
          {},
          "error",
          {{"n_steps", 0}, {"n_tool_calls", 0}, {"error", error}}};
}

std::string Assistant::no_answer_note(const agent::AgentRunResult& run) {
  if (run.stopped_reason == "error") {
    return fmt::format("(no answer — error: {})", run.metadata.value("error", std::string("?")));
  }
  return fmt::format("(no answer — stopped: {})", run.stopped_reason);
}

std::ostream& operator<<(std::ostream& stream, const Assistant& assistant) {
  stream << "Assistant(name=" << g2c::tokenizer::python_repr(assistant.config().name)
         << ", backend=" << assistant.backend().info().name() << ", tools=[";
  const auto names = assistant.registry().names();
  for (std::size_t i = 0; i < names.size(); ++i) {
    stream << (i ? ", " : "") << g2c::tokenizer::python_repr(names[i]);
  }
  return stream << "], rag=" << (assistant.retriever() ? "on" : "off")
                << ", turns=" << assistant.turns().size() << ")";
}

}  // namespace g2c::assistant
