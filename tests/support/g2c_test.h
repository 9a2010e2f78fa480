// Helpers shared by the test executables.
#pragma once

#include <iostream>
#include <string>
#include <utility>

#include <catch2/catch.hpp>

/// Ends the current test as skipped: CTest reports it under "not run (skipped)" because its
/// output matches the registered SKIP_REGULAR_EXPRESSION.
#define G2C_SKIP(reason)                                 \
  do {                                                   \
    std::cout << "G2C_SKIPPED: " << reason << std::endl; \
    return;                                              \
  } while (false)

// Tolerances as the Python tests spell them. Catch's Approx(x) alone is relative 1.2e-5 (100 float
// epsilons), and .margin(m) adds an absolute tolerance beside that relative one instead of
// replacing it: Approx(0.5).margin(1e-9) accepts 0.500006. These two say what they mean.

/// pytest.approx(expected): relative 1e-6, absolute 1e-12.
inline Approx py_approx(double expected) {
  return Approx(expected).epsilon(1e-6).margin(1e-12);
}

/// abs(actual - expected) <= tolerance, nothing relative: pytest.approx(expected, abs=tolerance).
inline Approx within(double expected, double tolerance) {
  return Approx(expected).epsilon(0).margin(tolerance);
}

/// An exception whose message contains `part`, for checking the type and the words at once:
///   CHECK_THROWS_MATCHES(inject_lora(net, {"qproj"}, 4), g2c::ValueError,
///                        MessageContains("matched no"));
class MessageContains : public Catch::MatcherBase<std::exception> {
 public:
  explicit MessageContains(std::string part) : part_(std::move(part)) {}
  bool match(const std::exception& error) const override {
    return std::string(error.what()).find(part_) != std::string::npos;
  }
  std::string describe() const override { return "has a message containing \"" + part_ + "\""; }

 private:
  std::string part_;
};
