// Beyond module harness — your work: retry or not.
#include "g2c/harness/failures.h"
#include "g2c/core/errors.h"

namespace g2c::harness {

RetryDecision classify_failure(const g2c::tools::ToolResult& result) {
  // clang-format off
  // TODO: the marker tables decide, transient first.
  //   !result.is_error(): throw g2c::ValueError (a success has nothing to classify)
  //   text = lower_ascii(result.output())
  //   a marker m of TRANSIENT_MARKERS in text     -> {"transient", true, "matched '<m>'"}
  //   a marker m of DETERMINISTIC_MARKERS in text -> {"deterministic", false, "matched '<m>'"}
  //   otherwise -> {"deterministic", false, "unrecognized failure — surfacing to the model"}
  // clang-format on
  // Hints, one step at a time: scripts/hint.sh harness classify_failure
  throw g2c::todo("classify_failure", "g2c/harness/failures.cpp", "harness");
}

}  // namespace g2c::harness
