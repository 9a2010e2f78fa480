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
//     g2c::CommandLine app{"What the program does"};
//     std::int64_t steps = 100;
//     app.add_option("--steps", steps, "Training steps").positive();
//     return g2c::run_cli(app, argc, argv, [&] { ...the program... });
//   }
//
// CommandLine is CLI11 behind a small compiled interface: the parser's templates compile once, in
// cli.cpp, instead of again in every program (about 7 s of CPU each, most of a program's build).
#pragma once

#include <cstdint>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace g2c {

class CommandLine;
namespace detail {
int run_cli(CommandLine& app, int argc, char** argv, const std::function<int()>& body);
}

/// One declared option; its checks chain: `app.add_option("--lr", lr, "...").positive();`.
/// The help text shows the variable's value at declaration as the default, unless no_default().
class OptionRef {
 public:
  OptionRef& positive();      // > 0
  OptionRef& non_negative();  // >= 0
  /// low <= value <= high, compared as integers when the bounds are integers (as for an integer
  /// option), else as reals.
  template <typename Number>
  OptionRef& range(Number low, Number high) {
    if constexpr (std::is_integral_v<Number>)
      return integer_range(low, high);
    else
      return real_range(low, high);
  }
  OptionRef& one_of(std::vector<std::string> choices);
  OptionRef& existing_file();
  OptionRef& existing_path();  // a file or a folder
  OptionRef& required();
  OptionRef& expected(int count);  // a list option takes exactly `count` values
  OptionRef& no_default();         // the help text says the default itself

 private:
  friend class CommandLine;
  OptionRef& integer_range(std::int64_t low, std::int64_t high);
  OptionRef& real_range(double low, double high);
  explicit OptionRef(CLI::Option* option) : option_(option) {}
  CLI::Option* option_;
};

/// A program's command line (or one of its subcommands): options, flags and subcommands.
/// A name with dashes is an option ("-n,--candidates"), one without is positional ("prompt");
/// a flag named "!--no-x" sets its bool to false.
class CommandLine {
 public:
  explicit CommandLine(const std::string& description, const std::string& name = "");
  ~CommandLine();
  CommandLine(const CommandLine&) = delete;
  CommandLine& operator=(const CommandLine&) = delete;

  OptionRef add_option(const std::string& name, int& value, const std::string& help);
  OptionRef add_option(const std::string& name, std::int64_t& value, const std::string& help);
  OptionRef add_option(const std::string& name, std::uint64_t& value, const std::string& help);
  OptionRef add_option(const std::string& name, double& value, const std::string& help);
  OptionRef add_option(const std::string& name, float& value, const std::string& help);
  OptionRef add_option(const std::string& name, std::string& value, const std::string& help);
  OptionRef add_option(const std::string& name, std::filesystem::path& value,
                       const std::string& help);
  OptionRef add_option(const std::string& name, std::optional<std::filesystem::path>& value,
                       const std::string& help);
  OptionRef add_option(const std::string& name, std::optional<int>& value, const std::string& help);
  OptionRef add_option(const std::string& name, std::optional<double>& value,
                       const std::string& help);
  OptionRef add_option(const std::string& name, std::optional<std::string>& value,
                       const std::string& help);
  OptionRef add_option(const std::string& name, std::optional<std::int64_t>& value,
                       const std::string& help);
  OptionRef add_option(const std::string& name, std::optional<std::uint64_t>& value,
                       const std::string& help);
  OptionRef add_option(const std::string& name, std::vector<int>& value, const std::string& help);
  OptionRef add_option(const std::string& name, std::vector<std::uint32_t>& value,
                       const std::string& help);  // token ids
  OptionRef add_option(const std::string& name, std::vector<std::int64_t>& value,
                       const std::string& help);
  OptionRef add_option(const std::string& name, std::vector<std::uint64_t>& value,
                       const std::string& help);
  OptionRef add_option(const std::string& name, std::vector<double>& value,
                       const std::string& help);
  OptionRef add_option(const std::string& name, std::vector<std::string>& value,
                       const std::string& help);
  OptionRef add_flag(const std::string& name, bool& value, const std::string& help);

  /// A subcommand (`g2c-tokenizer train ...`); it converts to true when the user chose it.
  CommandLine& add_subcommand(const std::string& name, const std::string& description);
  /// The user must choose exactly `count` subcommands.
  void require_subcommand(int count);
  explicit operator bool() const;

  std::string name() const;

 private:
  friend int detail::run_cli(CommandLine& app, int argc, char** argv,
                             const std::function<int()>& body);
  explicit CommandLine(CLI::App* subcommand);
  std::unique_ptr<CLI::App> owned_;  // the top level owns its parser; a subcommand's is inside it
  CLI::App* app_;
  std::vector<std::unique_ptr<CommandLine>> subcommands_;
};

enum ExitStatus : int {
  kExitOk = 0,
  kExitFailure = 1,
  kExitBadInput = 2,
  kExitTodo = 3,
  kExitDiverged = 4,
};

/// Parses the command line into `app`, runs `body`, and returns the exit status of the table above:
/// body's own return value when it returns an int and throws nothing, 0 when it returns nothing.
template <typename Body>
int run_cli(CommandLine& app, int argc, char** argv, Body&& body) {
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

/// An exception's message as run_cli prints it (the registered describer's words, else what()):
/// for anything that shows an error to a person, a server's answer included.
std::string describe_error(const std::exception& error);

}  // namespace g2c
