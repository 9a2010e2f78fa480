// LibTorch's errors in the course programs' messages: g2c::run_cli prints a c10::Error's message
// without the C++ stack trace that its what() appends (a student needs the sentence, not the
// frames). Registered when the course library loads.
#include <string>

#include <c10/util/Exception.h>

#include "g2c/core/cli.h"

namespace g2c {

namespace {

std::string describe_torch_error(const std::exception& error) {
  if (const auto* torch_error = dynamic_cast<const c10::Error*>(&error)) {
    return "from LibTorch: " + std::string(torch_error->what_without_backtrace());
  }
  return error.what();
}

const bool kRegistered = [] {
  set_error_describer(&describe_torch_error);
  return true;
}();

}  // namespace

}  // namespace g2c
