// Module 19, reference: one block per step, blank lines between, the oldest dropped first when a
// cap is set (never the last).
#include <deque>

#include "g2c/agent/memory.h"

namespace g2c::agent {

std::string Scratchpad::render() const {
  std::deque<std::string> blocks;
  for (const auto& step : steps_) {
    std::string block;
    const auto line = [&](const std::string& text) { block += (block.empty() ? "" : "\n") + text; };
    if (!step.thought.empty()) line("Thought: " + step.thought);
    if (step.final_answer) {
      line("Final Answer: " + *step.final_answer);
    } else if (step.action && step.observation) {
      line("Action: " + step.action->tool());
      line("Action Input: " + step.action->arguments().dump());
      line("Observation: " + std::string(step.observation->is_error() ? "[error] " : "") +
           step.observation->output());
    } else if (step.parse_error) {
      line("Observation: [parse error] " + *step.parse_error);
    }
    blocks.push_back(block);
  }
  const auto joined = [&] {
    std::string text;
    for (const auto& block : blocks) text += (text.empty() ? "" : "\n\n") + block;
    return text;
  };
  std::string text = joined();
  while (max_chars_ && blocks.size() > 1 && static_cast<std::int64_t>(text.size()) > *max_chars_) {
    blocks.pop_front();  // the oldest step matters least to the next decision
    text = joined();
  }
  return text;
}

}  // namespace g2c::agent
