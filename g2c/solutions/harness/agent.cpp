// Reference solution for g2c/harness/agent.cpp: resuming a run from its log.
#include <algorithm>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/harness/agent.h"

namespace g2c::harness {

HarnessRunResult HarnessAgent::resume() {
  const auto events = log().replay();
  const auto has = [&](const char* type) {
    return std::any_of(events.begin(), events.end(),
                       [&](const Event& e) { return e.type == type; });
  };
  if (!has("task")) {
    throw g2c::ValueError(
        fmt::format("nothing to resume: the log {} holds no task event (start with run())",
                    log().path().string()));
  }
  if (has("final_answer")) {
    throw g2c::ValueError(
        fmt::format("nothing to resume: the run in {} already finished with a final answer",
                    log().path().string()));
  }
  // The crash window: intent logged, outcome not. The runner decides what that means.
  for (const auto& call : events) {
    if (call.type != "tool_call") continue;
    const bool settled = std::any_of(events.begin(), events.end(), [&](const Event& e) {
      return e.type == "tool_result" && e.call_id == call.call_id;
    });
    if (settled) continue;
    runner_.execute(g2c::tools::ToolCall(call.payload.value("tool", std::string()),
                                         call.payload.value("arguments", Json::object()),
                                         call.call_id.value_or("")));
  }
  return loop();
}

}  // namespace g2c::harness
