// Beyond module harness — which tool failures are worth retrying.
//
// A failure is transient when the same call may well succeed a moment later (a timeout, a busy
// server); it is deterministic when it cannot (a missing file, invalid arguments): retrying that
// burns the budget and teaches the model nothing, so it goes back to the model as an observation.
// What decides is data, not logic buried in a function: two marker tables, lower case, matched
// as substrings of the error's text, transient first. Plain C++, no LibTorch.
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "g2c/tools/tool.h"

namespace g2c::harness {

/// What classify_failure decided about one failed call. `kind` is "transient" (retry, with a
/// backoff), "deterministic" (surface it to the model; the same call cannot succeed) or "budget"
/// (halt, resumably); `reason` names the marker that matched, or says none did.
struct RetryDecision {
  std::string kind;
  bool retry = false;
  std::string reason;

  bool operator==(const RetryDecision& other) const = default;
};

inline constexpr std::array<std::string_view, 6> TRANSIENT_MARKERS = {
    "timeout", "timed out", "busy", "temporarily", "connection reset", "try again"};
inline constexpr std::array<std::string_view, 7> DETERMINISTIC_MARKERS = {
    "not found", "no such",   "does not exist", "permission denied",
    "invalid",   "malformed", "unknown tool"};

/// The text lower-cased (ASCII letters; other bytes as they are), for matching the markers.
std::string lower_ascii(std::string_view text);

/// Your work (g2c/harness/failures.cpp): ValueError for a result that did not fail (there is
/// nothing to classify); otherwise the first transient marker found in the lower-cased output ->
/// {"transient", retry}, else the first deterministic marker -> {"deterministic", no retry}, else
/// {"deterministic", no retry, "unrecognized failure — surfacing to the model"}: an error nobody
/// recognises is not retried blindly.
RetryDecision classify_failure(const g2c::tools::ToolResult& result);

}  // namespace g2c::harness
