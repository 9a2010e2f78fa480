// Beyond module harness — your work: one tool call, safely.
#include "g2c/harness/runner.h"
#include "g2c/core/errors.h"
#include "g2c/tools/loop.h"

namespace g2c::harness {

g2c::tools::ToolResult ToolRunner::execute(const g2c::tools::ToolCall& call) {
  // clang-format off
  // TODO: the decision ladder, in order, from events = log_.replay().
  //   issued = the events of type "tool_call" whose call_id == call.call_id()
  //   1. one of them with payload["tool"] != call.name() or payload["arguments"] != call.arguments():
  //        throw g2c::ValueError("call_id '<id>' is already bound to a different tool call")
  //   2. an event of type "tool_result" with this call_id: return
  //        ToolResult(id, call.name(), payload["output"], payload["is_error"]) — nothing runs
  //   3. issued not empty (intent logged, outcome missing): output = "call <id> has an unknown
  //        outcome after a crash; ... check the workspace, retry under a new call id";
  //        log_.append("tool_result", result_payload(output, true, UNKNOWN_OUTCOME_STATUS), id);
  //        return the error result — nothing runs
  //   4. permission_for(call.name()) is Deny, or Ask and !approved(id): refusal text with
  //        "permission denied by harness policy" (Deny) or "approval required" (Ask);
  //        append "tool_call" (call_payload(call)), then "tool_result" (status "refused"), return
  //   5. append "tool_call" FIRST; result = g2c::tools::dispatch_tool_call(registry_, call);
  //        append "tool_result" (status "error" if result.is_error() else "ok"); return result
  // clang-format on
  // Hints, one step at a time: scripts/hint.sh harness ToolRunner::execute
  throw g2c::todo("ToolRunner::execute", "g2c/harness/runner.cpp", "harness");
}

}  // namespace g2c::harness
