// The C++ half of scripts/check_calculator.py: module 18's calculator on expressions given one per
// line, one JSON answer per line back, for a comparison with Python's own arithmetic.
//   calculator_eval < "1 + 2\n7 // -2\nx + 1\n"
//                   > {"value": "3", "integer": true}
//                     {"value": "-4", "integer": true}
//                     {"error": "ToolError", "message": "not allowed ... the name 'x' ..."}
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "g2c/tools/calculator.h"

int main() {
  for (std::string line; std::getline(std::cin, line);) {
    nlohmann::json answer;
    try {
      const auto value = g2c::tools::calculator_evaluate(line);
      answer = {{"value", value.str()}, {"integer", value.is_integer()}};
    } catch (const g2c::tools::ToolError& error) {
      answer = {{"error", "ToolError"}, {"message", error.what()}};
    } catch (const g2c::tools::ZeroDivisionError& error) {
      answer = {{"error", "ZeroDivisionError"}, {"message", error.what()}};
    } catch (const std::exception& error) {
      answer = {{"error", "other"}, {"message", error.what()}};
    }
    std::cout << answer.dump() << "\n";
  }
  return 0;
}
