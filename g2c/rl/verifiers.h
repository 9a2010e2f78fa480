// Beyond module rl — verifiable rewards: the tasks and the programs that grade them.
//
// RL from verifiable rewards replaces the label with a grader: a plain function
// (task, completion) -> 0.0 | 1.0 that anyone can read in a minute. No learned reward model and no
// human judge, so when training goes strange the first suspect is twenty lines of code.
//   arithmetic_task         "23+58=", answer 81
//   arithmetic_choice_task  the same with two numeric options in the prompt (the answer and the
//                           answer + an offset from {±1, ±3, ±7, ±9}): a small model picks the
//                           right one often enough, and wrong often enough, for groups to differ
//   format_task             complete a JSON object whose opening {"answer": ends the prompt
//   verify_arithmetic         the LAST integer of the completion equals the answer (a model that
//                             reasons first is graded on its conclusion)
//   verify_arithmetic_sloppy  ANY integer equals it: broken on purpose — list enough numbers and
//                             one of them is right (the reward-hacking exercise)
//   verify_format             prefix + completion holds, from its first '{' to the first '}'
//                             after it, a JSON object with the key "answer"; its value unchecked
// Every random draw comes from a std::mt19937_64 the caller seeds, so a seed fixes the tasks (they
// differ from the Python edition's for the same seed; no test depends on the values).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace g2c::rl {

/// One task: what the model is asked and what the verifier checks against.
struct Task {
  std::string prompt;                 // the text the model continues, e.g. "23+58="
  std::int64_t answer = 0;            // the true sum
  std::vector<std::int64_t> choices;  // the two options of a choice task; empty otherwise
  std::string completion_prefix;      // text the prompt already opened and the verifier puts
                                      // before the completion (format_task's {"answer":); or ""
};

/// A reward function: (task, completion text) -> the reward, 0.0 or 1.0 for the course's.
using Verifier = std::function<double(const Task&, std::string_view)>;

/// One addition of two `digits`-digit numbers, each uniform in [10^(digits−1), 10^digits − 1].
/// ValueError unless 1 <= digits <= 18 (the sum must fit an int64).
/// Example: {prompt "23+58=", answer 81}.
Task arithmetic_task(std::mt19937_64& rng, int digits = 2);

/// arithmetic_task's sum offered as one of two options, the other the answer + an offset drawn
/// from {−9, −7, −3, −1, 1, 3, 7, 9}, in a random order; the prompt lists both and asks for only
/// the number. choices holds the two options in the order the prompt lists them.
/// Example: {prompt "23+58=? Options: 84, 81. Reply with the number only: ", answer 81,
/// choices {84, 81}}.
Task arithmetic_choice_task(std::mt19937_64& rng, int digits = 2);

/// A JSON completion for arithmetic_task's sum: the prompt ends with {"answer":, which is also the
/// task's completion_prefix, so a completion such as `81}` closes a valid object.
Task format_task(std::mt19937_64& rng);

/// The integers of `text` in order, as Python's re.findall(r"-?\d+") finds them ("5-3" -> 5, −3);
/// nullopt for one too large for an int64 (it equals no answer).
std::vector<std::optional<std::int64_t>> integers_in(std::string_view text);

/// 1.0 when the last integer of the completion equals task.answer, else 0.0 (no integer: 0.0).
/// Example ({"23+58=", 81}): "70 plus 11, so 81" -> 1.0; "81 no wait, 91" -> 0.0.
double verify_arithmetic(const Task& task, std::string_view completion);

/// 1.0 when any integer of the completion equals task.answer: exploitable on purpose.
/// Example: "10 20 30 40 50 60 70 80 81 90" -> 1.0 (verify_arithmetic gives it 0.0).
double verify_arithmetic_sloppy(const Task& task, std::string_view completion);

/// 1.0 when task.completion_prefix + completion, from its first '{' to the first '}' after it,
/// parses as a JSON object with the key "answer" (any value); else 0.0. Text after that object is
/// not checked. Example (no prefix): `Sure: {"answer": 999}` -> 1.0; "{broken json" -> 0.0.
double verify_format(const Task& task, std::string_view completion);

}  // namespace g2c::rl
