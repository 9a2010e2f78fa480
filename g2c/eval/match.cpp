// Module 15 — your work: the four matchers.
#include "g2c/eval/match.h"

#include <cctype>
#include <cmath>
#include <optional>
#include <regex>

#include "g2c/core/errors.h"

namespace g2c::eval {

bool exact_match(const std::string& prediction, const std::vector<std::string>& references) {
  // TODO: true iff the prediction equals some reference byte for byte (no normalisation at all:
  // "Madrid" != "madrid"). Check first: check_references(references, "exact_match") — an empty
  // list is a bug, not a "no". Operations: a loop and ==.
  // Hints, one step at a time: scripts/hint.sh 15 exact_match
  throw g2c::todo("exact_match", "g2c/eval/match.cpp", "15");
}

std::string normalize_answer(const std::string& text) {
  // TODO: normalized_match's normalisation, one pass over the characters: drop every ASCII
  // punctuation character, lowercase the rest, and turn each run of whitespace into ONE space,
  // with none at the start or the end ("  Mad   Rid!  " -> "mad rid"). Operations: std::ispunct,
  // std::isspace, std::tolower (on an unsigned char).
  // Hints, one step at a time: scripts/hint.sh 15 normalize_answer
  throw g2c::todo("normalize_answer", "g2c/eval/match.cpp", "15");
}

bool normalized_match(const std::string& prediction, const std::vector<std::string>& references) {
  // TODO: true iff normalize_answer(prediction) equals normalize_answer(reference) for some
  // reference — normalise BOTH sides. Check first: check_references(references,
  // "normalized_match").
  // Hints, one step at a time: scripts/hint.sh 15 normalized_match
  throw g2c::todo("normalized_match", "g2c/eval/match.cpp", "15");
}

bool contains_match(const std::string& prediction, const std::vector<std::string>& references) {
  // TODO: true iff some reference, lowercased, occurs in the lowercased prediction (a substring,
  // word boundaries ignored). Check first: check_references(references, "contains_match").
  // Operations: std::tolower over each character, std::string::find.
  // Hints, one step at a time: scripts/hint.sh 15 contains_match
  throw g2c::todo("contains_match", "g2c/eval/match.cpp", "15");
}

bool numeric_match(const std::string& prediction, const std::vector<std::string>& references,
                   double tolerance) {
  // TODO: the FIRST number of the prediction (regex -?\d+(\.\d+)?, parsed as a double; none ->
  // false) against the first number of each reference (a reference without one is skipped): true
  // iff |predicted - expected| <= tolerance for some reference. Check first:
  // check_references(references, "numeric_match"). Operations: std::regex_search, std::stod,
  // std::abs.
  // Hints, one step at a time: scripts/hint.sh 15 numeric_match
  throw g2c::todo("numeric_match", "g2c/eval/match.cpp", "15");
}

}  // namespace g2c::eval
