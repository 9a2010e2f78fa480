// The one way every course program (the exercises, g2c-generate, g2c-tokenizer) runs its command
// line: parse, run, and turn what went wrong into a message and one exit status from one table.
//
// clang-format off
//   exit status   meaning                                          raised as
//   0             done
//   1             an unexpected failure (a LibTorch error, …)      anything else
//   2             bad input: an option, a file, a device           CLI11 parse errors, g2c::ValueError
//   3             a course function is still a TODO                g2c::NotImplementedError
//   4             training stopped: the loss is no longer finite   g2c::TrainingDiverged
// clang-format on
//
// Messages go to stderr after stdout is flushed, so text a program was streaming ends first.
//
//   int main(int argc, char** argv) {
//     CLI::App app{"What the program does"};
//     ...options...
//     return g2c::run_cli(app, argc, argv, [&] { ...the program... });
//   }
#pragma once

#include <exception>
#include <functional>
#include <string>
#include <type_traits>

#include <CLI/CLI.hpp>

namespace g2c {

enum ExitStatus : int {
  kExitOk = 0,
  kExitFailure = 1,
  kExitBadInput = 2,
  kExitTodo = 3,
  kExitDiverged = 4,
};

namespace detail {
int run_cli(CLI::App& app, int argc, char** argv, const std::function<int()>& body);
}

/// Parses the command line into `app`, runs `body`, and returns the exit status of the table above:
/// body's own return value when it returns an int and throws nothing, 0 when it returns nothing.
template <typename Body>
int run_cli(CLI::App& app, int argc, char** argv, Body&& body) {
  return detail::run_cli(app, argc, argv, [&]() -> int {
    if constexpr (std::is_void_v<std::invoke_result_t<Body&>>) {
      body();
      return kExitOk;
    } else {
      return body();
    }
  });
}

/// How run_cli words an exception that is none of the course's own, e.g. LibTorch's c10::Error
/// without the stack trace its what() appends. The course library registers one for LibTorch's
/// errors; without one, what() is printed.
using ErrorDescriber = std::string (*)(const std::exception& error);
void set_error_describer(ErrorDescriber describer);

}  // namespace g2c
