// Beyond module harness — your work: take over a dead run.
#include "g2c/harness/agent.h"
#include "g2c/core/errors.h"

namespace g2c::harness {

HarnessRunResult HarnessAgent::resume() {
  // clang-format off
  // TODO: validate the log, settle what the crash left half done, and re-enter the same loop.
  //   events = log().replay()
  //   no event of type "task":          throw g2c::ValueError (nothing to resume)
  //   an event of type "final_answer":  throw g2c::ValueError (the run already finished)
  //   for each "tool_call" event e with no "tool_result" event of the same call_id:
  //     runner_.execute(g2c::tools::ToolCall(e.payload["tool"], e.payload["arguments"], *e.call_id))
  //     — the runner's ladder records the unknown outcome; do not decide it here
  //   return loop()   (its step and repeat counts come from the log: nothing is reset)
  // clang-format on
  // Hints, one step at a time: scripts/hint.sh harness HarnessAgent::resume
  throw g2c::todo("HarnessAgent::resume", "g2c/harness/agent.cpp", "harness");
}

}  // namespace g2c::harness
