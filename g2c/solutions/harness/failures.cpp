// Reference solution for g2c/harness/failures.cpp: the retry decision.
#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/harness/failures.h"

namespace g2c::harness {

RetryDecision classify_failure(const g2c::tools::ToolResult& result) {
  if (!result.is_error()) {
    throw g2c::ValueError(fmt::format(
        "classify_failure expects a failed ToolResult; the call to '{}' succeeded", result.name()));
  }
  const auto text = lower_ascii(result.output());
  for (const auto marker : TRANSIENT_MARKERS) {
    if (text.find(marker) != std::string::npos) {
      return {"transient", true, fmt::format("matched '{}'", marker)};
    }
  }
  for (const auto marker : DETERMINISTIC_MARKERS) {
    if (text.find(marker) != std::string::npos) {
      return {"deterministic", false, fmt::format("matched '{}'", marker)};
    }
  }
  return {"deterministic", false, "unrecognized failure — surfacing to the model"};
}

}  // namespace g2c::harness
