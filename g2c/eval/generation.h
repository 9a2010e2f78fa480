// Module 15 — generation tasks: let the model write, then ask a matcher.
//
// The harness does not sample by itself: the caller passes generate(prompt) -> text, the text
// WITHOUT the prompt and with any end marker handled by the caller (typically module 11's
// generate with temperature 0 through module 13's chat_reply). So the same harness scores a
// course model, another library or a fixed table of answers. Generation has no per-example
// confidence (that would need re-scoring the text with continuation_logprob), so the results'
// confidence, the report's mean_confidence and its ece are none.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "g2c/eval/data.h"
#include "g2c/eval/match.h"

namespace g2c::eval {

/// prompt -> the generated continuation (without the prompt).
using GenerateFn = std::function<std::string(const std::string& prompt)>;
/// (prediction, references) -> matched; exact_match, normalized_match, contains_match,
/// numeric_match (through a lambda for a tolerance) or your own.
using MatchFn = std::function<bool(const std::string&, const std::vector<std::string>&)>;

/// prediction = generate(example.prompt()), correct = match(prediction, references), no
/// confidence, metadata {"references": [...], "matcher": matcher_name}. matcher_name: the name
/// written down for the matcher; empty = the name of the course matcher `match` is, else "custom".
EvalResult score_generation_example(const GenerateFn& generate, const GenerationExample& example,
                                    const MatchFn& match = exact_match,
                                    const std::string& matcher_name = "");

/// score_generation_example over every example, in order: n, accuracy; mean_confidence and ece
/// none. ValueError for no examples.
EvalReport run_generation_eval(const GenerateFn& generate,
                               const std::vector<GenerationExample>& examples,
                               const MatchFn& match = exact_match,
                               const std::string& task_name = "generation",
                               const std::string& matcher_name = "");

/// The name of a course matcher held by `match` ("exact_match", ...), "custom" for any other.
std::string matcher_name_of(const MatchFn& match);

}  // namespace g2c::eval
