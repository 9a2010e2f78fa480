// Module 19 — the provided half of planner.h: reading the lines, and make_plan.
#include <cctype>

#include "g2c/agent/parser.h"
#include "g2c/agent/planner.h"
#include "g2c/agent/prompts.h"
#include "g2c/core/errors.h"

namespace g2c::agent {

namespace {

/// The lines of `text`, without their '\n'.
std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> lines;
  for (std::size_t start = 0; start <= text.size();) {
    const auto end = std::min(text.find('\n', start), text.size());
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

}  // namespace

std::optional<std::string> goal_line(std::string_view text) {
  for (const auto line : lines_of(text)) {
    for (std::size_t at = 0; at + 4 <= line.size(); ++at) {
      const auto word = line.substr(at, 4);
      if (std::tolower(static_cast<unsigned char>(word[0])) != 'g' ||
          std::tolower(static_cast<unsigned char>(word[1])) != 'o' ||
          std::tolower(static_cast<unsigned char>(word[2])) != 'a' ||
          std::tolower(static_cast<unsigned char>(word[3])) != 'l') {
        continue;
      }
      auto colon = at + 4;
      while (colon < line.size() && (line[colon] == ' ' || line[colon] == '\t')) ++colon;
      if (colon < line.size() && line[colon] == ':') return std::string(line.substr(colon + 1));
    }
  }
  return std::nullopt;
}

std::vector<NumberedLine> numbered_lines(std::string_view text) {
  std::vector<NumberedLine> out;
  for (const auto line : lines_of(text)) {
    std::size_t at = 0;
    while (at < line.size() && (line[at] == ' ' || line[at] == '\t')) ++at;
    const auto digits = at;
    while (at < line.size() && std::isdigit(static_cast<unsigned char>(line[at]))) ++at;
    if (at == digits || at - digits > 9) continue;  // no number (or an absurd one)
    const auto number = std::stoll(std::string(line.substr(digits, at - digits)));
    while (at < line.size() && (line[at] == ' ' || line[at] == '\t')) ++at;
    if (at >= line.size() || (line[at] != '.' && line[at] != ')' && line[at] != '-')) continue;
    out.push_back({number, strip_whitespace(line.substr(at + 1))});
  }
  return out;
}

std::optional<Plan> make_plan(inference::Backend& backend, std::string_view user_message,
                              const g2c::tools::ToolRegistry& registry,
                              const PlanOptions& options) {
  if (user_message.empty()) throw ValueError("make_plan: user_message must be a non-empty string");
  const auto prompt = render_planning_prompt(user_message, registry.tools());
  const auto answer = backend.complete(prompt, inference::CompletionOptions()
                                                   .with_max_new_tokens(options.max_new_tokens)
                                                   .with_temperature(options.temperature));
  return extract_plan(answer.completion, user_message);
}

}  // namespace g2c::agent
