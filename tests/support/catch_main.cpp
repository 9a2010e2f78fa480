#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <exception>
#include <string>

// LibTorch's errors carry a C++ stack trace of twenty-odd frames after their one-line message
// ("Exception raised from topk_out_cpu at ...: frame #0 ..."). In a failing test it pushes the
// message and the test's own hints off the screen; the frames point into LibTorch, never at the
// student's line. Every test executable reports such an error by its message alone.
CATCH_TRANSLATE_EXCEPTION(const std::exception& error) {
  const std::string message = error.what();
  const auto trace = message.find("\nException raised from ");
  if (trace == std::string::npos) return message;
  return message.substr(0, trace) + "\n(LibTorch's stack trace left out)";
}
