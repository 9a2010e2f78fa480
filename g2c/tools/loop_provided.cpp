// Module 18 — the provided half of loop.h: running one call, the run's metadata, the native
// channel, and run_with_tools.
#include <cxxabi.h>

#include <chrono>
#include <memory>
#include <typeinfo>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/tools/loop.h"
#include "g2c/tools/parser.h"

namespace g2c::tools {

namespace {

/// An exception's type as a model can read it: the class name without its namespaces
/// ("runtime_error", "ZeroDivisionError").
std::string exception_type_name(const std::exception& error) {
  const char* mangled = typeid(error).name();
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> demangled(
      abi::__cxa_demangle(mangled, nullptr, nullptr, &status), std::free);
  std::string name = status == 0 && demangled ? demangled.get() : mangled;
  if (const auto colons = name.rfind("::"); colons != std::string::npos) {
    name = name.substr(colons + 2);
  }
  return name;
}

void check_run_inputs(std::string_view user_message, const ToolLoopOptions& options) {
  if (user_message.empty()) {
    throw ValueError("run_with_tools: user_message must be a non-empty string");
  }
  if (options.max_steps <= 0) {
    throw ValueError(
        fmt::format("run_with_tools: max_steps must be > 0, got {}", options.max_steps));
  }
}

/// The native channel: the tools as function specs, the calls structured (or rescued from the
/// text), the results as "tool" messages.
ToolRunResult run_native_loop(inference::ChatBackend& backend, const ToolRegistry& registry,
                              std::string_view user_message, const RunWithToolsOptions& options) {
  auto messages = nlohmann::json::array(
      {{{"role", "system"},
        {"content", options.system.value_or(std::string(DEFAULT_NATIVE_SYSTEM))}},
       {{"role", "user"}, {"content", std::string(user_message)}}});
  const auto specs = render_tools_for_ollama(registry.tools());
  const auto chat = inference::ChatOptions::from_sampling(options.sampling, options.think);

  ToolRunResult run{std::string(user_message), std::nullopt, {}, "max_steps"};
  std::int64_t rescued = 0;
  for (std::int64_t step = 0; step < options.max_steps; ++step) {
    const auto reply = backend.chat_with_tools(messages, specs, chat);
    std::vector<ToolCall> calls;
    for (const auto& call : reply.tool_calls) {
      calls.emplace_back(call.at("name").get<std::string>(),
                         call.value("arguments", nlohmann::json::object()),
                         call.value("call_id", new_call_id(calls.size())));
    }
    if (calls.empty()) {
      if (auto call = rescue_tool_call(reply.content)) {
        calls.push_back(std::move(*call));
        ++rescued;
      }
    }
    // The step's backend answer as an InferenceResult: the messages sent stand for the prompt.
    inference::InferenceResult inference(messages.dump(), reply.content, reply.prompt_tokens,
                                         reply.completion_tokens, reply.latency_ms, reply.backend,
                                         {{"channel", "native"}, {"tool_calls", reply.tool_calls}});
    if (calls.empty()) {
      run.final_answer = reply.content;
      run.steps.push_back({reply.content, {}, {}, std::move(inference)});
      run.stopped_reason = "no_more_calls";
      break;
    }
    std::vector<ToolResult> results;
    auto requested = nlohmann::json::array();
    for (const auto& call : calls) {
      results.push_back(dispatch_tool_call(registry, call));
      requested.push_back({{"function", {{"name", call.name()}, {"arguments", call.arguments()}}}});
    }
    messages.push_back(
        {{"role", "assistant"}, {"content", reply.content}, {"tool_calls", requested}});
    for (const auto& result : results) {
      messages.push_back(
          {{"role", "tool"}, {"tool_name", result.name()}, {"content", result.output()}});
    }
    run.steps.push_back(
        {reply.content, std::move(calls), std::move(results), std::move(inference)});
  }
  run.metadata = run_metadata(run.steps, registry, backend.info());
  run.metadata["channel"] = "native";
  run.metadata["n_rescued_calls"] = rescued;
  return run;
}

}  // namespace

ToolResult dispatch_tool_call(const ToolRegistry& registry, const ToolCall& call) {
  const auto error = [&](std::string message) {
    return ToolResult(call.call_id(), call.name(), std::move(message), true);
  };
  const Tool* tool = nullptr;
  try {
    tool = &registry.get(call.name());
  } catch (const UnknownToolError& unknown) {
    return error(unknown.what());  // its message lists the tools there are
  }
  nlohmann::json arguments;
  try {
    arguments = validate_arguments(*tool, call.arguments());
  } catch (const ToolError& invalid) {
    return error(invalid.what());
  }
  nlohmann::json output;
  try {
    output = tool->func()(arguments);
  } catch (const ToolError& refused) {
    return error(refused.what());
  } catch (const std::exception& failed) {
    return error(fmt::format("{}: {}", exception_type_name(failed), failed.what()));
  } catch (...) {
    return error("the tool failed with an exception that is not a std::exception");
  }
  return ToolResult(call.call_id(), call.name(),
                    output.is_string() ? output.get<std::string>() : output.dump());
}

nlohmann::json run_metadata(const std::vector<ToolStep>& steps, const ToolRegistry& registry,
                            const inference::BackendInfo& backend) {
  std::size_t calls = 0;
  for (const auto& step : steps) calls += step.tool_calls.size();
  return {{"n_steps", steps.size()},
          {"n_tool_calls", calls},
          {"tools_available", registry.names()},
          {"backend_name", backend.name()},
          {"backend_model_id", backend.model_id()}};
}

ToolRunResult run_with_tools(inference::Backend& backend, const ToolRegistry& registry,
                             std::string_view user_message, const RunWithToolsOptions& options) {
  check_run_inputs(user_message, options);
  auto* chat_backend = dynamic_cast<inference::ChatBackend*>(&backend);
  const bool native = options.use_native_tools.value_or(chat_backend != nullptr);
  if (native) {
    if (chat_backend == nullptr) {
      throw ValueError(fmt::format(
          "run_with_tools: use_native_tools is set but the backend {} has no chat_with_tools "
          "(it is not a ChatBackend); leave use_native_tools unset to use the text format",
          backend.info().name()));
    }
    return run_native_loop(*chat_backend, registry, user_message, options);
  }
  auto run = run_text_loop(backend, registry, user_message, options);
  run.metadata["channel"] = "text-format";
  return run;
}

}  // namespace g2c::tools
