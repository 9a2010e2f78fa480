// The checks that run the real SmolLM2-135M-Instruct: skipped, visibly, on a machine without its
// file (scripts/setup.sh installs it; $G2C_SMOLLM2_GGUF points at a copy).
#pragma once

#include <string>

#include "g2c/core/errors.h"
#include "g2c/pretrained/catalog.h"
#include "g2c_test.h"

namespace g2c::testing {

/// Why SmolLM2-135M-Instruct cannot be loaded here, or "" when its file is there.
inline std::string smollm2_missing() {
  try {
    g2c::pretrained::pretrained_model_file("SmolLM2-135M-Instruct");
    return "";
  } catch (const g2c::ValueError& error) {
    return error.what();
  }
}

}  // namespace g2c::testing

/// Ends the current test as skipped when SmolLM2's file is not on this machine, saying why.
#define G2C_SKIP_WITHOUT_SMOLLM2()                                                                 \
  do {                                                                                             \
    if (const auto missing = g2c::testing::smollm2_missing(); !missing.empty()) G2C_SKIP(missing); \
  } while (false)
