#include "g2c/synth/generate.h"

#include <algorithm>
#include <cctype>
#include <numeric>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/core/strip.h"

namespace g2c::synth {

namespace {

/// Spaces within a line (a line has no newline left).
constexpr std::string_view kSpaces = " \t\r\f\v";

}  // namespace

std::string build_instruction_prompt(const std::vector<std::string>& examples, int count) {
  std::string listed;
  for (std::size_t i = 0; i < examples.size(); ++i) {
    listed += fmt::format("{}. {}\n", i + 1, examples[i]);
  }
  return fmt::format(
      "We are collecting instructions, each paired with a short answer, to train a small "
      "assistant.\n\n"
      "These {} instructions are already in the collection:\n\n"
      "{}\n"
      "Write {} NEW instructions like them: each short, complete on its own, and answerable in "
      "a sentence or two with no other context. Mix the subjects and the kinds of task "
      "(questions, rewrites, small pieces of writing), and do not repeat or merely reword the "
      "ones above.\n\n"
      "Answer with a numbered list only: one instruction per line, and no answers.\n",
      examples.size(), listed, count);
}

std::string build_response_prompt(std::string_view instruction) {
  return fmt::format(
      "Answer the instruction below for a training set: directly, in one or two sentences, "
      "without an introduction and without asking anything back.\n\n"
      "Instruction: {}\n\n"
      "Answer:",
      instruction);
}

std::vector<std::string> parse_numbered_list(std::string_view text) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto end = std::min(text.find('\n', start), text.size());
    const auto line = strip(text.substr(start, end - start), kSpaces);
    start = end + 1;
    // digits, optional spaces, '.' or ')', then the item
    std::size_t i = 0;
    while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i]))) ++i;
    if (i == 0) continue;
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (i >= line.size() || (line[i] != '.' && line[i] != ')')) continue;
    auto item = strip(strip(std::string_view(line).substr(i + 1), kSpaces), "\"");
    item = strip(item, kSpaces);
    if (!item.empty()) items.push_back(std::move(item));
  }
  return items;
}

std::vector<std::string> propose_instructions(g2c::inference::Backend& teacher,
                                              const std::vector<std::string>& pool, int count,
                                              int k, std::mt19937_64& rng, double temperature,
                                              std::int64_t max_new_tokens) {
  // k examples drawn without replacement, in a random order: a new neighbourhood every round.
  std::vector<std::size_t> order(pool.size());
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  order.resize(std::min(order.size(), static_cast<std::size_t>(std::max(k, 0))));
  std::vector<std::string> shown;
  for (const auto index : order) shown.push_back(pool[index]);
  const auto result = teacher.complete(build_instruction_prompt(shown, count),
                                       g2c::inference::CompletionOptions()
                                           .with_max_new_tokens(max_new_tokens)
                                           .with_temperature(temperature));
  return parse_numbered_list(result.completion);
}

std::string generate_response(g2c::inference::Backend& teacher, std::string_view instruction,
                              double temperature, std::int64_t max_new_tokens) {
  const auto result =
      teacher.complete(build_response_prompt(instruction), g2c::inference::CompletionOptions()
                                                               .with_max_new_tokens(max_new_tokens)
                                                               .with_temperature(temperature));
  return strip(result.completion);
}

nlohmann::json SynthesisFunnel::to_json() const {
  return {{"proposed", proposed},   {"bad_instruction", bad_instruction},
          {"duplicate", duplicate}, {"bad_pair", bad_pair},
          {"accepted", accepted},   {"rounds", rounds}};
}

SynthesisResult synthesize_dataset(g2c::inference::Backend& teacher,
                                   const std::vector<InstructionPair>& seeds,
                                   const SynthesisOptions& options) {
  if (seeds.empty()) throw ValueError("synthesize_dataset needs at least one seed pair");
  if (options.target < 1 || options.batch_count < 1 || options.k < 1) {
    throw ValueError(
        fmt::format("synthesize_dataset needs target, batch_count and k >= 1, got {}, {} and {}",
                    options.target, options.batch_count, options.k));
  }
  const auto max_rounds = options.max_rounds.value_or(
      std::max<std::int64_t>(8, 4 * options.target / options.batch_count));
  std::mt19937_64 rng(options.seed);
  std::vector<std::string> seed_instructions;
  for (const auto& pair : seeds) seed_instructions.push_back(pair.user);

  SynthesisResult result;
  auto& funnel = result.funnel;
  while (static_cast<std::int64_t>(result.pairs.size()) < options.target &&
         funnel.rounds < max_rounds) {
    ++funnel.rounds;
    auto pool = seed_instructions;
    for (const auto& pair : result.pairs) pool.push_back(pair.user);
    const auto candidates =
        propose_instructions(teacher, pool, options.batch_count, options.k, rng);
    funnel.proposed += static_cast<std::int64_t>(candidates.size());

    // The instruction's shape gate: validate_pair with a stand-in answer, one definition for both.
    std::vector<InstructionPair> shaped;
    for (const auto& instruction : candidates) {
      if (validate_pair(InstructionPair{instruction, "ok"}).empty()) {
        shaped.push_back({instruction, ""});
      } else {
        ++funnel.bad_instruction;
      }
    }
    const auto novel = dedupe_pairs(shaped, options.threshold, pool);
    funnel.duplicate += static_cast<std::int64_t>(shaped.size() - novel.size());

    for (auto candidate : novel) {
      if (static_cast<std::int64_t>(result.pairs.size()) >= options.target) break;
      candidate.assistant = generate_response(teacher, candidate.user);
      if (!validate_pair(candidate).empty()) {
        ++funnel.bad_pair;
        continue;
      }
      result.pairs.push_back(std::move(candidate));
      ++funnel.accepted;
    }
    if (options.progress) {
      options.progress(fmt::format("round {}: {}/{} accepted", funnel.rounds, result.pairs.size(),
                                   options.target));
    }
  }
  return result;
}

}  // namespace g2c::synth
