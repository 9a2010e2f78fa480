// Module 19 — the provided half of parser.h: finding the markers, fences and whitespace.
#include <algorithm>
#include <array>
#include <cctype>

#include "g2c/agent/parser.h"
#include "g2c/core/strip.h"

namespace g2c::agent {

namespace {

/// Does `text` hold `word` at `at`, ignoring ASCII case?
bool word_at(std::string_view text, std::size_t at, std::string_view word) {
  if (at + word.size() > text.size()) return false;
  for (std::size_t i = 0; i < word.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[at + i])) !=
        std::tolower(static_cast<unsigned char>(word[i]))) {
      return false;
    }
  }
  return true;
}

/// After `name` at `at`: optional spaces, optional "**", ':', optional "**". The position just
/// after it, or npos when no colon follows.
std::size_t after_colon(std::string_view text, std::size_t at) {
  while (at < text.size() && (text[at] == ' ' || text[at] == '\t' || text[at] == '*')) ++at;
  if (at >= text.size() || text[at] != ':') return std::string_view::npos;
  ++at;
  while (at < text.size() && text[at] == '*') ++at;
  return at;
}

struct MarkerAt {
  std::optional<ReactMarker> marker;  // nullopt: Observation (it only ends fields)
  std::size_t value;                  // where its value starts
};

/// The marker a line starting at `line` begins with, if any.
std::optional<MarkerAt> line_marker(std::string_view text, std::size_t line) {
  std::size_t at = line;
  while (at < text.size() && (text[at] == ' ' || text[at] == '\t' || text[at] == '*')) ++at;
  // "Action Input" before "Action": the longer name first.
  static constexpr std::array<std::pair<std::string_view, std::optional<ReactMarker>>, 5> kNames{
      {{"action input", ReactMarker::ActionInput},
       {"action", ReactMarker::Action},
       {"thought", ReactMarker::Thought},
       {"final answer", ReactMarker::FinalAnswer},
       {"observation", std::nullopt}}};
  for (const auto& [name, marker] : kNames) {
    if (!word_at(text, at, name)) continue;
    const auto value = after_colon(text, at + name.size());
    if (value != std::string_view::npos) return MarkerAt{marker, value};
  }
  return std::nullopt;
}

/// Where the field starting at `value` ends: at the next line that starts with a marker.
std::size_t field_end(std::string_view text, std::size_t value) {
  for (auto newline = text.find('\n', value); newline != std::string_view::npos;
       newline = text.find('\n', newline + 1)) {
    if (line_marker(text, newline + 1)) return newline;
  }
  return text.size();
}

}  // namespace

std::optional<std::string> react_field(std::string_view text, ReactMarker marker) {
  if (marker == ReactMarker::FinalAnswer) {
    for (std::size_t at = 0; at < text.size(); ++at) {
      if (!word_at(text, at, "final answer")) continue;
      const auto value = after_colon(text, at + 12);
      if (value != std::string_view::npos) return std::string(text.substr(value));
    }
    return std::nullopt;
  }
  for (std::size_t line = 0; line <= text.size();) {
    if (const auto found = line_marker(text, line); found && found->marker == marker) {
      if (marker == ReactMarker::Action) {
        const auto end = std::min(text.find('\n', found->value), text.size());
        return std::string(text.substr(found->value, end - found->value));
      }
      return std::string(text.substr(found->value, field_end(text, found->value) - found->value));
    }
    const auto newline = text.find('\n', line);
    if (newline == std::string_view::npos) break;
    line = newline + 1;
  }
  return std::nullopt;
}

std::string strip_whitespace(std::string_view text) {
  return g2c::strip(text);
}

std::string strip_code_fences(std::string_view text) {
  std::string body = strip_whitespace(text);
  if (body.starts_with("```")) {
    const auto newline = body.find('\n');
    body = newline == std::string::npos ? body.substr(3) : body.substr(newline + 1);
  }
  if (body.ends_with("```")) body.resize(body.size() - 3);
  return strip_whitespace(body);
}

}  // namespace g2c::agent
