// Reference solution for g2c/harness/runner.cpp: the runner's decision ladder.
#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/harness/runner.h"
#include "g2c/tools/loop.h"

namespace g2c::harness {

using g2c::tools::ToolResult;

ToolResult ToolRunner::execute(const g2c::tools::ToolCall& call) {
  const auto& id = call.call_id();
  const auto events = log_.replay();

  // 1. An id names one operation; the same id for another one is a bug upstream.
  bool issued = false;
  for (const auto& event : events) {
    if (event.type != "tool_call" || event.call_id != id) continue;
    issued = true;
    if (event.payload.value("tool", Json()) != Json(call.name()) ||
        event.payload.value("arguments", Json()) != call.arguments()) {
      throw g2c::ValueError(fmt::format(
          "call_id '{}' is already bound to a different tool call ({} {}); give a new operation "
          "a new id",
          id, event.payload.value("tool", Json()).dump(),
          event.payload.value("arguments", Json()).dump()));
    }
  }
  // 2. A recorded result is the result.
  for (const auto& event : events) {
    if (event.type == "tool_result" && event.call_id == id) {
      return ToolResult(id, call.name(), event.payload.value("output", std::string()),
                        event.payload.value("is_error", false));
    }
  }
  // 3. Intent without outcome: it may or may not have run. Never run it blindly again.
  if (issued) {
    const auto output = fmt::format(
        "call {} has an unknown outcome after a crash: it may or may not have run. Check the "
        "workspace before deciding, and retry under a new call id if it must run",
        id);
    log_.append("tool_result", result_payload(output, true, UNKNOWN_OUTCOME_STATUS), id);
    return ToolResult(id, call.name(), output, true);
  }
  // 4. The permission table.
  std::string refusal;
  const auto permission = permission_for(call.name());
  if (permission == Permission::Deny) {
    refusal = fmt::format("permission denied by harness policy for tool '{}'", call.name());
  } else if (permission == Permission::Ask && !approved(id)) {
    refusal = fmt::format(
        "approval required for tool '{}' and none is on the log: permission denied", call.name());
  }
  if (!refusal.empty()) {
    log_.append("tool_call", call_payload(call), id);
    log_.append("tool_result", result_payload(refusal, true, "refused"), id);
    return ToolResult(id, call.name(), refusal, true);
  }
  // 5. Intent before action, outcome after.
  log_.append("tool_call", call_payload(call), id);
  auto result = g2c::tools::dispatch_tool_call(registry_, call);
  log_.append(
      "tool_result",
      result_payload(result.output(), result.is_error(), result.is_error() ? "error" : "ok"), id);
  return result;
}

}  // namespace g2c::harness
