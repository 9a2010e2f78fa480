// Module 15 — reference: the four matchers.
#include "g2c/eval/match.h"

#include <cctype>
#include <cmath>
#include <optional>
#include <regex>

namespace g2c::eval {

namespace {

// The first -?\d+(\.\d+)? of the text, as a number; none when the text has no number.
std::optional<double> first_number(const std::string& text) {
  static const std::regex number(R"(-?\d+(\.\d+)?)");
  std::smatch match;
  if (!std::regex_search(text, match, number)) return std::nullopt;
  return std::stod(match.str());
}

std::string lowercase(std::string text) {
  for (auto& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

}  // namespace

bool exact_match(const std::string& prediction, const std::vector<std::string>& references) {
  check_references(references, "exact_match");
  for (const auto& reference : references) {
    if (prediction == reference) return true;
  }
  return false;
}

std::string normalize_answer(const std::string& text) {
  std::string out;
  bool pending_space = false;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (std::ispunct(u)) continue;
    if (std::isspace(u)) {
      pending_space = !out.empty();  // a run of spaces becomes one, none at the start
      continue;
    }
    if (pending_space) out += ' ';
    pending_space = false;
    out += static_cast<char>(std::tolower(u));
  }
  return out;
}

bool normalized_match(const std::string& prediction, const std::vector<std::string>& references) {
  check_references(references, "normalized_match");
  const auto normalized = normalize_answer(prediction);
  for (const auto& reference : references) {
    if (normalized == normalize_answer(reference)) return true;
  }
  return false;
}

bool contains_match(const std::string& prediction, const std::vector<std::string>& references) {
  check_references(references, "contains_match");
  const auto haystack = lowercase(prediction);
  for (const auto& reference : references) {
    if (haystack.find(lowercase(reference)) != std::string::npos) return true;
  }
  return false;
}

bool numeric_match(const std::string& prediction, const std::vector<std::string>& references,
                   double tolerance) {
  check_references(references, "numeric_match");
  const auto predicted = first_number(prediction);
  if (!predicted) return false;
  for (const auto& reference : references) {
    const auto expected = first_number(reference);
    if (expected && std::abs(*predicted - *expected) <= tolerance) return true;
  }
  return false;
}

}  // namespace g2c::eval
