// Part II's arithmetic questions: drawn with a seed, and scored by the last number of a reply.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace g2c::exercises {

/// One arithmetic question. Example: {"sum2", "What is 347 + 589?", "347 + 589", 936}.
struct ArithmeticQuestion {
  std::string kind;  // "sum2", "difference", "product", "sum3"
  std::string text;
  std::string expression;
  std::int64_t answer;
};

/// `count` questions, the four kinds in turn (sums of two numbers up to 999, differences,
/// products of two-digit numbers, sums of three), the numbers drawn from `seed`.
std::vector<ArithmeticQuestion> draw_arithmetic(std::int64_t count, std::uint64_t seed);

/// The last number written in `reply` ("13 + 28 = 41." -> "41"), commas between digit groups
/// removed ("2,420,736" -> "2420736"); "" when there is none.
std::string last_number(const std::string& reply);

/// Whether the last number of `reply` is `answer` (module 15's numeric_match on that number).
bool last_number_is(const std::string& reply, std::int64_t answer);

}  // namespace g2c::exercises
