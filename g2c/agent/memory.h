// Module 19 — the scratchpad: the agent's short-term memory, written back into every prompt.
//
// Each step adds one block; before the next step the blocks are rendered and spliced into the
// prompt, so the model reads what it already tried:
//
//   Thought: use calc
//   Action: calculator
//   Action Input: {"expression": "2+2"}
//   Observation: 4
//
//   Thought: I now know the final answer.
//   Final Answer: 4
//
// The prompt grows by exactly one such block per step; with max_chars set, the oldest blocks are
// dropped first (the latest observation matters most for the next decision), but the last block
// is always kept. append and the rest are provided; render is yours. Plain C++, no LibTorch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "g2c/agent/types.h"

namespace g2c::agent {

class Scratchpad {
 public:
  /// ValueError for a max_chars <= 0 (nullopt: no cap, the backend's context is the limit).
  explicit Scratchpad(std::optional<std::int64_t> max_chars = std::nullopt);

  /// Records one step, in order.
  void append(AgentStep step) { steps_.push_back(std::move(step)); }
  /// A copy of the steps: changing it leaves the scratchpad as it was.
  std::vector<AgentStep> steps() const { return steps_; }
  std::size_t size() const { return steps_.size(); }
  std::optional<std::int64_t> max_chars() const { return max_chars_; }

  /// Your work. The steps as blocks joined by one blank line ("\n\n"), "" for none. A block:
  ///   "Thought: <thought>" when the thought is non-empty, then
  ///   "Final Answer: <answer>"                               for a step that answered,
  ///   "Action: <tool>", "Action Input: <arguments as JSON>", "Observation: <output>" (the output
  ///       after "[error] " when it is an error)              for a step that acted,
  ///   "Observation: [parse error] <why>"                     for a step that could not be read,
  /// its lines joined by "\n". With max_chars, drop the first blocks while the text is longer and
  /// more than one block is left. The arguments are JSON (nlohmann's dump()), as the model wrote
  /// them, never another notation the model might take for a new format.
  std::string render() const;

 private:
  std::vector<AgentStep> steps_;
  std::optional<std::int64_t> max_chars_;
};

/// "Scratchpad(steps=2)".
std::ostream& operator<<(std::ostream& stream, const Scratchpad& scratchpad);

}  // namespace g2c::agent
