// Beyond module rl, implemented for you: the task builders and the verifiers.
#include "g2c/rl/verifiers.h"

#include <array>
#include <cctype>
#include <charconv>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "g2c/core/errors.h"

namespace g2c::rl {

namespace {

std::int64_t uniform(std::mt19937_64& rng, std::int64_t low, std::int64_t high) {
  return std::uniform_int_distribution<std::int64_t>(low, high)(rng);
}

bool is_digit(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) != 0;
}

}  // namespace

Task arithmetic_task(std::mt19937_64& rng, int digits) {
  if (digits < 1 || digits > 18) {
    throw ValueError(fmt::format(
        "arithmetic_task: digits must be in [1, 18] (the sum must fit an int64); got {}", digits));
  }
  std::int64_t low = 1;
  for (int i = 1; i < digits; ++i) low *= 10;
  const std::int64_t high = low * 10 - 1;
  const std::int64_t a = uniform(rng, low, high), b = uniform(rng, low, high);
  return {fmt::format("{}+{}=", a, b), a + b, {}, ""};
}

Task arithmetic_choice_task(std::mt19937_64& rng, int digits) {
  auto task = arithmetic_task(rng, digits);
  // The wrong option is near the answer and never equal to it (an odd offset also changes its last
  // digit, so the two options always read differently at the end).
  static constexpr std::array<std::int64_t, 8> kOffsets = {-9, -7, -3, -1, 1, 3, 7, 9};
  const auto offset = kOffsets[static_cast<std::size_t>(uniform(rng, 0, kOffsets.size() - 1))];
  task.choices = {task.answer, task.answer + offset};
  if (uniform(rng, 0, 1) == 1) std::swap(task.choices[0], task.choices[1]);
  task.prompt = fmt::format("{}? Options: {}, {}. Reply with the number only: ", task.prompt,
                            task.choices[0], task.choices[1]);
  return task;
}

Task format_task(std::mt19937_64& rng) {
  auto task = arithmetic_task(rng);
  // The prompt opens the object itself: a model that has never been asked for JSON still closes
  // `{"answer":` often enough for a group to hold both outcomes.
  task.completion_prefix = R"({"answer":)";
  task.prompt = fmt::format("A JSON object with the integer result of {} {}", task.prompt,
                            task.completion_prefix);
  return task;
}

std::vector<std::optional<std::int64_t>> integers_in(std::string_view text) {
  std::vector<std::optional<std::int64_t>> found;
  std::size_t i = 0;
  while (i < text.size()) {
    const bool negative = text[i] == '-' && i + 1 < text.size() && is_digit(text[i + 1]);
    if (!negative && !is_digit(text[i])) {
      ++i;
      continue;
    }
    std::size_t end = i + (negative ? 1 : 0);
    while (end < text.size() && is_digit(text[end])) ++end;
    std::int64_t value = 0;
    const auto [last, error] = std::from_chars(text.data() + i, text.data() + end, value);
    found.push_back(error == std::errc() && last == text.data() + end
                        ? std::optional<std::int64_t>(value)
                        : std::nullopt);  // too large for an int64
    i = end;
  }
  return found;
}

double verify_arithmetic(const Task& task, std::string_view completion) {
  const auto integers = integers_in(completion);
  return !integers.empty() && integers.back() == task.answer ? 1.0 : 0.0;
}

double verify_arithmetic_sloppy(const Task& task, std::string_view completion) {
  for (const auto& value : integers_in(completion)) {
    if (value == task.answer) return 1.0;
  }
  return 0.0;
}

double verify_format(const Task& task, std::string_view completion) {
  const std::string candidate = task.completion_prefix + std::string(completion);
  const auto start = candidate.find('{');
  if (start == std::string::npos) return 0.0;
  const auto end = candidate.find('}', start + 1);
  if (end == std::string::npos) return 0.0;
  const auto object = nlohmann::json::parse(candidate.substr(start, end - start + 1),
                                            /*cb=*/nullptr, /*allow_exceptions=*/false);
  return !object.is_discarded() && object.is_object() && object.contains("answer") ? 1.0 : 0.0;
}

}  // namespace g2c::rl
