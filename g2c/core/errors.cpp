#include "g2c/core/errors.h"

#include <cctype>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "g2c/core/reference_switch.h"

// The build's own G2C_SOLUTIONS value (g2c/CMakeLists.txt compiles it in), so that the reference
// switch a TODO suggests keeps what this build already switched on.
#ifndef G2C_SOLUTIONS_SELECTOR
#define G2C_SOLUTIONS_SELECTOR ""
#endif

namespace g2c {

namespace {

/// The selector language's ways of saying "no solutions" (CMake's selector, G2CCourse.cmake).
bool selects_nothing(std::string selector) {
  for (char& c : selector) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return selector.empty() || selector == "0" || selector == "off" || selector == "none" ||
         selector == "false" || selector == "no";
}

}  // namespace

std::string solutions_with(std::string_view configured, std::string_view module) {
  std::vector<std::string> selectors;
  std::string current;
  for (const char c : std::string(configured) + ",") {
    if (c == ',' || c == ' ' || c == ';') {
      if (!selects_nothing(current)) selectors.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  bool present = false;
  std::string joined;
  for (const auto& selector : selectors) {
    present = present || selector == module;
    joined += (joined.empty() ? "" : ",") + selector;
  }
  if (!present) joined += (joined.empty() ? "" : ",") + std::string(module);
  return joined;
}

NotImplementedError todo(std::string_view function, std::string_view file,
                         std::string_view module) {
  // One command per line, each short enough that a test report's 80-column wrapping keeps it whole.
  return NotImplementedError(fmt::format(
      "NotImplementedError: {} is still a TODO. Write it in {} (module {}), then rebuild and "
      "rerun the module's tests from the repository root:\n"
      "  cmake --build --preset student --target module-{}\n"
      "  ctest --preset student -L '^{}$'\n"
      "Hints, one step at a time (--more, then --code):\n"
      "  scripts/hint.sh {} {}\n"
      "or switch on the reference solution of module {} instead:\n"
      "  cmake --preset student -DG2C_SOLUTIONS={}",
      function, file, module, module, module, module, function, module,
      solutions_with(G2C_SOLUTIONS_SELECTOR, module)));
}

}  // namespace g2c
