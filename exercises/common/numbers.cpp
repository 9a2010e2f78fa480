#include "exercises/common/numbers.h"

#include <algorithm>
#include <random>
#include <regex>

#include <fmt/format.h>

#include "g2c/eval/match.h"

namespace g2c::exercises {

std::vector<ArithmeticQuestion> draw_arithmetic(std::int64_t count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const auto uniform = [&](std::int64_t low, std::int64_t high) {
    return std::uniform_int_distribution<std::int64_t>(low, high)(rng);
  };
  std::vector<ArithmeticQuestion> questions;
  for (std::int64_t i = 0; i < count; ++i) {
    ArithmeticQuestion q;
    switch (i % 4) {
      case 0: {
        const auto a = uniform(10, 999), b = uniform(10, 999);
        q = {"sum2", "", fmt::format("{} + {}", a, b), a + b};
        break;
      }
      case 1: {
        const auto a = uniform(100, 999), b = uniform(10, a);
        q = {"difference", "", fmt::format("{} - {}", a, b), a - b};
        break;
      }
      case 2: {
        const auto a = uniform(11, 99), b = uniform(11, 99);
        q = {"product", "", fmt::format("{} * {}", a, b), a * b};
        break;
      }
      default: {
        const auto a = uniform(10, 999), b = uniform(10, 999), c = uniform(10, 999);
        q = {"sum3", "", fmt::format("{} + {} + {}", a, b, c), a + b + c};
        break;
      }
    }
    q.text = "What is " + q.expression + "?";
    questions.push_back(q);
  }
  return questions;
}

std::string last_number(const std::string& reply) {
  static const std::regex number(R"(-?\d[\d,]*(\.\d+)?)");
  std::string last;
  for (auto it = std::sregex_iterator(reply.begin(), reply.end(), number);
       it != std::sregex_iterator(); ++it) {
    last = it->str();
  }
  last.erase(std::remove(last.begin(), last.end(), ','), last.end());
  return last;
}

bool last_number_is(const std::string& reply, std::int64_t answer) {
  const auto number = last_number(reply);
  return !number.empty() && g2c::eval::numeric_match(number, {std::to_string(answer)});
}

}  // namespace g2c::exercises
