// Module 19 — your work: the scratchpad as the next prompt shows it.
#include "g2c/agent/memory.h"
#include "g2c/core/errors.h"

namespace g2c::agent {

std::string Scratchpad::render() const {
  // TODO: "" when steps_ is empty. Otherwise one block per step, in order: its lines (see
  // memory.h) joined by "\n" — "Thought: ..." only when the thought is non-empty, then the Final
  // Answer line, or the three Action / Action Input / Observation lines (arguments().dump() for
  // the input, "[error] " before an error's output), or "Observation: [parse error] ...". Join the
  // blocks with "\n\n". With max_chars_ set, drop blocks from the front while the joined text is
  // longer than *max_chars_ and more than one block is left.
  // Hints, one step at a time: scripts/hint.sh 19 Scratchpad::render
  throw g2c::todo("Scratchpad::render", "g2c/agent/memory.cpp", "19");
}

}  // namespace g2c::agent
