// Module 16B — synthetic instruction data, Self-Instruct in miniature: a teacher model (any
// Backend of module 16; in this course SmolLM2-135M-Instruct, in this process or through
// g2c-serve) writes instruction-response pairs for a smaller student, starting from a few seeds.
// Provided: the two prompts, the permissive list parser, and the loop whose funnel counts what
// each gate of g2c/synth/filter.h removed:
//
//   propose (one call: a numbered list of new instructions, few-shot from the pool)
//     -> shape gate on each instruction -> dedupe against seeds and everything accepted
//     -> answer (one call per survivor) -> shape gate on the finished pair -> accepted
//
//   auto result = synthesize_dataset(teacher, seeds, SynthesisOptions().with_target(50));
//   result.pairs, result.funnel.duplicate, ...
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "g2c/inference/backend.h"
#include "g2c/synth/filter.h"

namespace g2c::synth {

/// The proposal prompt: the examples as a numbered list, then a request for `count` NEW
/// instructions as a numbered list only. Example: ({"Alpha?", "Beta?"}, 5) contains "1. Alpha?",
/// "2. Beta?" and "5 NEW instructions".
std::string build_instruction_prompt(const std::vector<std::string>& examples, int count = 8);

/// The answer prompt: "... Instruction: <instruction>\n\nAnswer:".
std::string build_response_prompt(std::string_view instruction);

/// The items of the lines that look like "1. item" or "2) item" (surrounding spaces and double
/// quotes taken off); every other line — a preamble, commentary, a blank item — is dropped.
std::vector<std::string> parse_numbered_list(std::string_view text);

/// One proposal round: k examples drawn from `pool` without replacement (fewer when the pool is
/// smaller), `count` new instructions asked for, the list parsed.
std::vector<std::string> propose_instructions(g2c::inference::Backend& teacher,
                                              const std::vector<std::string>& pool, int count,
                                              int k, std::mt19937_64& rng, double temperature = 0.9,
                                              std::int64_t max_new_tokens = 400);

/// The teacher's answer to one instruction, trimmed. Cooler than the proposals: diverse
/// instructions, reliable answers.
std::string generate_response(g2c::inference::Backend& teacher, std::string_view instruction,
                              double temperature = 0.3, std::int64_t max_new_tokens = 120);

/// How many candidates each stage saw leave.
struct SynthesisFunnel {
  std::int64_t proposed = 0;         // instructions parsed from the teacher's lists
  std::int64_t bad_instruction = 0;  // failed the shape gate as an instruction
  std::int64_t duplicate = 0;        // too close to a seed, an accepted pair or its own batch
  std::int64_t bad_pair = 0;         // the finished pair failed the shape gate
  std::int64_t accepted = 0;
  std::int64_t rounds = 0;
  nlohmann::json to_json() const;
};

struct SynthesisOptions {
  std::int64_t target = 150;                         // accepted pairs wanted
  int batch_count = 8;                               // instructions asked for per round
  int k = 6;                                         // examples shown per round
  double threshold = 0.7;                            // dedupe_pairs' threshold
  std::optional<std::int64_t> max_rounds;            // unset: max(8, 4·target / batch_count)
  std::uint64_t seed = 0;                            // which examples each round shows
  std::function<void(const std::string&)> progress;  // one line per round

  SynthesisOptions& with_target(std::int64_t value) {
    target = value;
    return *this;
  }
  SynthesisOptions& with_batch_count(int value) {
    batch_count = value;
    return *this;
  }
  SynthesisOptions& with_k(int value) {
    k = value;
    return *this;
  }
  SynthesisOptions& with_threshold(double value) {
    threshold = value;
    return *this;
  }
  SynthesisOptions& with_max_rounds(std::optional<std::int64_t> value) {
    max_rounds = value;
    return *this;
  }
  SynthesisOptions& with_seed(std::uint64_t value) {
    seed = value;
    return *this;
  }
  SynthesisOptions& with_progress(std::function<void(const std::string&)> value) {
    progress = std::move(value);
    return *this;
  }
};

struct SynthesisResult {
  std::vector<InstructionPair> pairs;  // accepted, in the order they were accepted
  SynthesisFunnel funnel;
};

/// Grows a dataset from `seeds` until options.target pairs are accepted or the round budget is
/// spent (a teacher stuck rephrasing itself ends the loop instead of spinning forever). Each
/// round: propose from seeds + accepted, shape-gate the instructions, dedupe them against seeds +
/// accepted (and each other), answer the survivors, shape-gate the pairs. ValueError for no seeds,
/// a target < 1, batch_count < 1 or k < 1.
SynthesisResult synthesize_dataset(g2c::inference::Backend& teacher,
                                   const std::vector<InstructionPair>& seeds,
                                   const SynthesisOptions& options = {});

}  // namespace g2c::synth
