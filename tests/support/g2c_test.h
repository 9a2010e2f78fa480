// Helpers shared by the test executables.
#pragma once

#include <iostream>

#include <catch2/catch.hpp>

/// Ends the current test as skipped: CTest reports it under "not run (skipped)" because its
/// output matches the registered SKIP_REGULAR_EXPRESSION.
#define G2C_SKIP(reason)                                 \
  do {                                                   \
    std::cout << "G2C_SKIPPED: " << reason << std::endl; \
    return;                                              \
  } while (false)
