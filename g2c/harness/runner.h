// Beyond module harness — every tool call through one door: permissions, deduplication, and what
// a crash leaves behind.
//
// The runner writes the call's intent to the log *before* the tool runs and its outcome after. A
// process that dies between the two leaves a tool_call with no tool_result: the side effect may
// or may not have happened, and nothing in the log can say which. So the runner never re-runs
// such a call; it records an "unknown outcome" the model reads, and the model checks the workspace
// and, if it must, tries again under a new call id. A call id names one operation: a result
// already logged for it is *the* result (returned, not re-run), and the same id for another
// operation is a caller's bug. Plain C++, no LibTorch.
#pragma once

#include <map>
#include <string>

#include "g2c/harness/events.h"
#include "g2c/tools/registry.h"
#include "g2c/tools/tool.h"

namespace g2c::harness {

/// The tool_result status of a call whose intent was logged and whose outcome was not.
inline constexpr const char* UNKNOWN_OUTCOME_STATUS = "unknown_outcome_after_crash";

class ToolRunner {
 public:
  /// `permissions` per tool name; a tool not named gets `default_permission`.
  ToolRunner(g2c::tools::ToolRegistry registry, EventLog log,
             std::map<std::string, Permission> permissions = {},
             Permission default_permission = Permission::Allow);

  const g2c::tools::ToolRegistry& registry() const { return registry_; }
  const EventLog& log() const { return log_; }
  EventLog& log() { return log_; }

  Permission permission_for(const std::string& tool) const;
  /// Whether the log holds an "approval" event with this call id and payload approved == true.
  bool approved(const std::string& call_id) const;

  /// Your work (g2c/harness/runner.cpp): one call, decided in this order from the replayed log —
  ///   1. a tool_call logged under this id for another tool or other arguments: ValueError
  ///      "... already bound ..." (an id names one operation);
  ///   2. a tool_result logged under this id: that result again, nothing run;
  ///   3. a tool_call logged under this id without a result (a crash in between): log and return
  ///      an error result with status UNKNOWN_OUTCOME_STATUS saying "unknown outcome" (check the
  ///      workspace, retry under a new id), nothing run;
  ///   4. Deny, or Ask without approved(id): log the call, then an error result with status
  ///      "refused" ("permission denied by harness policy" / "approval required"), nothing run;
  ///   5. log the tool_call, run module 18's dispatch_tool_call, log the tool_result (status "ok"
  ///      or "error") and return it.
  /// Of the cases only 1 throws: the others are results the model reads. (A log that cannot be
  /// read or written still throws EventLog's errors.)
  g2c::tools::ToolResult execute(const g2c::tools::ToolCall& call);

 private:
  g2c::tools::ToolRegistry registry_;
  EventLog log_;
  std::map<std::string, Permission> permissions_;
  Permission default_permission_;
};

/// The tool_result payload the runner logs: {"output", "is_error", "status"}.
Json result_payload(const std::string& output, bool is_error, const std::string& status);

/// The tool_call payload the runner logs: {"tool", "arguments"}.
Json call_payload(const g2c::tools::ToolCall& call);

}  // namespace g2c::harness
