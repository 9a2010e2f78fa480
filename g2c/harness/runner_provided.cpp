// Beyond module harness — the provided half of runner.h: construction and the permission table.
#include <utility>

#include "g2c/harness/runner.h"

namespace g2c::harness {

ToolRunner::ToolRunner(g2c::tools::ToolRegistry registry, EventLog log,
                       std::map<std::string, Permission> permissions, Permission default_permission)
    : registry_(std::move(registry)),
      log_(std::move(log)),
      permissions_(std::move(permissions)),
      default_permission_(default_permission) {}

Permission ToolRunner::permission_for(const std::string& tool) const {
  const auto found = permissions_.find(tool);
  return found == permissions_.end() ? default_permission_ : found->second;
}

bool ToolRunner::approved(const std::string& call_id) const {
  for (const auto& event : log_.replay()) {
    if (event.type != "approval" || event.call_id != call_id) continue;
    const auto& approved = event.payload.value("approved", Json(false));
    if (approved.is_boolean() && approved.get<bool>()) return true;
  }
  return false;
}

Json result_payload(const std::string& output, bool is_error, const std::string& status) {
  return {{"output", output}, {"is_error", is_error}, {"status", status}};
}

Json call_payload(const g2c::tools::ToolCall& call) {
  return {{"tool", call.name()}, {"arguments", call.arguments()}};
}

}  // namespace g2c::harness
