// Module 15 — matchers: did the generated text give an accepted answer?
//
// A matcher is bool(prediction, references): true iff the prediction matches at least one
// reference. Four of them, strictest first:
//   exact_match       byte for byte                        "Madrid" != "madrid" != "Madrid."
//   normalized_match  after lowercasing, dropping ASCII punctuation, trimming and collapsing
//                     whitespace runs to one space         "  MADRID,  " == "madrid"
//   contains_match    a reference occurs in the prediction, ignoring case
//   numeric_match     the FIRST number of the prediction is within tolerance of the first number
//                     of some reference (numbers: -?\d+(\.\d+)?)
// Usual pairings: factual questions with normalized_match, arithmetic with numeric_match, keyword
// instructions with contains_match, closed vocabularies with exact_match. An empty reference list
// is a bug in the task, not a "no": every matcher throws ValueError for it.
#pragma once

#include <string>
#include <vector>

namespace g2c::eval {

/// Example: exact_match("Madrid", {"Lisbon", "Madrid"}) -> true; ("Madrid", {"madrid"}) -> false.
bool exact_match(const std::string& prediction, const std::vector<std::string>& references);

/// Example: normalized_match("Madrid.", {"MADRID"}) -> true; ("MAD RID", {"madrid"}) -> false.
bool normalized_match(const std::string& prediction, const std::vector<std::string>& references);

/// Example: contains_match("MADRID is the capital", {"madrid"}) -> true.
bool contains_match(const std::string& prediction, const std::vector<std::string>& references);

/// |first number of prediction - first number of a reference| <= tolerance for some reference;
/// false when the prediction has no number; references without a number are skipped.
/// Example: numeric_match("50<|end|>", {"50."}) -> true; ("Half of 100 is 50", {"50"}) -> false;
///          numeric_match("3.14", {"3.1416"}, 0.01) -> true.
bool numeric_match(const std::string& prediction, const std::vector<std::string>& references,
                   double tolerance = 0.0);

/// normalized_match's normalisation: lowercase (ASCII), every ASCII punctuation character
/// removed, whitespace runs collapsed to one space, no leading or trailing space.
/// Example: normalize_answer("  Mad   Rid!  ") -> "mad rid".
std::string normalize_answer(const std::string& text);

/// ValueError unless references has at least one entry (`who`: the matcher's name, for the
/// message).
void check_references(const std::vector<std::string>& references, const char* who);

}  // namespace g2c::eval
