#include "exercises/common/numbers.h"

#include <algorithm>
#include <regex>

#include "g2c/eval/match.h"

namespace g2c::exercises {

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
