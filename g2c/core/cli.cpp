#include "g2c/core/cli.h"

#include <cstdio>
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>

#include "g2c/core/errors.h"

namespace g2c {

namespace {

ErrorDescriber& describer() {
  static ErrorDescriber current = nullptr;
  return current;
}

// CLI11's add_option, instantiated here once for every value type CommandLine takes.
template <typename T>
CLI::Option* declare_option(CLI::App& app, const std::string& name, T& value,
                            const std::string& help) {
  return app.add_option(name, value, help)->capture_default_str();
}

// A check of a number that says what it expected: "--threads: expected a number >= 0, got -1".
// (CLI11's own ranges print their bounds as full doubles: 0.000000 to 1797693134862315...)
template <typename Number>
CLI::Validator number_check(const std::string& description, const std::string& expected,
                            std::function<bool(Number)> accepts) {
  const char* kind = std::is_integral_v<Number> ? "an integer" : "a number";
  return CLI::Validator(
      [expected, accepts, kind](std::string& input) -> std::string {
        Number value{};
        if (!CLI::detail::lexical_cast(input, value))
          return std::string("expected ") + kind + ", got " + input;
        return accepts(value) ? ""
                              : std::string("expected ") + kind + " " + expected + ", got " + input;
      },
      description);
}

int fail(const std::string& message, int status) {
  std::cout.flush();
  std::fflush(stdout);
  std::cerr << "\n" << message << "\n";
  return status;
}

}  // namespace

OptionRef& OptionRef::positive() {
  option_->check(number_check<double>("POSITIVE", "> 0", [](double value) { return value > 0; }));
  return *this;
}

OptionRef& OptionRef::non_negative() {
  option_->check(
      number_check<double>("NONNEGATIVE", ">= 0", [](double value) { return value >= 0; }));
  return *this;
}

OptionRef& OptionRef::integer_range(std::int64_t low, std::int64_t high) {
  const std::string bounds = "in [" + std::to_string(low) + ", " + std::to_string(high) + "]";
  option_->check(number_check<std::int64_t>(
      bounds, bounds, [low, high](std::int64_t value) { return low <= value && value <= high; }));
  return *this;
}

OptionRef& OptionRef::real_range(double low, double high) {
  std::ostringstream bounds;
  bounds << "in [" << low << ", " << high << "]";
  option_->check(number_check<double>(bounds.str(), bounds.str(), [low, high](double value) {
    return low <= value && value <= high;
  }));
  return *this;
}

OptionRef& OptionRef::one_of(std::vector<std::string> choices) {
  option_->check(CLI::IsMember(std::move(choices)));
  return *this;
}

OptionRef& OptionRef::existing_file() {
  option_->check(CLI::ExistingFile);
  return *this;
}

OptionRef& OptionRef::existing_path() {
  option_->check(CLI::ExistingPath);
  return *this;
}

OptionRef& OptionRef::required() {
  option_->required();
  return *this;
}

OptionRef& OptionRef::expected(int count) {
  option_->expected(count);
  return *this;
}

OptionRef& OptionRef::no_default() {
  option_->default_str("");
  return *this;
}

CommandLine::CommandLine(const std::string& description, const std::string& name)
    : owned_(std::make_unique<CLI::App>(description, name)), app_(owned_.get()) {}

CommandLine::CommandLine(CLI::App* subcommand) : app_(subcommand) {}

CommandLine::~CommandLine() = default;

OptionRef CommandLine::add_option(const std::string& name, int& value, const std::string& help) {
  return OptionRef(declare_option(*app_, name, value, help));
}

OptionRef CommandLine::add_option(const std::string& name, std::int64_t& value,
                                  const std::string& help) {
  return OptionRef(declare_option(*app_, name, value, help));
}

OptionRef CommandLine::add_option(const std::string& name, std::uint64_t& value,
                                  const std::string& help) {
  return OptionRef(declare_option(*app_, name, value, help));
}

OptionRef CommandLine::add_option(const std::string& name, double& value, const std::string& help) {
  return OptionRef(declare_option(*app_, name, value, help));
}

OptionRef CommandLine::add_option(const std::string& name, float& value, const std::string& help) {
  return OptionRef(declare_option(*app_, name, value, help));
}

OptionRef CommandLine::add_option(const std::string& name, std::string& value,
                                  const std::string& help) {
  return OptionRef(declare_option(*app_, name, value, help));
}

OptionRef CommandLine::add_option(const std::string& name, std::filesystem::path& value,
                                  const std::string& help) {
  return OptionRef(declare_option(*app_, name, value, help));
}

OptionRef CommandLine::add_option(const std::string& name,
                                  std::optional<std::filesystem::path>& value,
                                  const std::string& help) {
  return OptionRef(declare_option(*app_, name, value, help));
}

OptionRef CommandLine::add_option(const std::string& name, std::optional<int>& value,
                                  const std::string& help) {
  return OptionRef(declare_option(*app_, name, value, help));
}

OptionRef CommandLine::add_option(const std::string& name, std::optional<double>& value,
                                  const std::string& help) {
  return OptionRef(declare_option(*app_, name, value, help));
}

OptionRef CommandLine::add_option(const std::string& name, std::optional<std::string>& value,
                                  const std::string& help) {
  return OptionRef(declare_option(*app_, name, value, help));
}

OptionRef CommandLine::add_option(const std::string& name, std::optional<std::int64_t>& value,
                                  const std::string& help) {
  return OptionRef(declare_option(*app_, name, value, help));
}

OptionRef CommandLine::add_option(const std::string& name, std::optional<std::uint64_t>& value,
                                  const std::string& help) {
  return OptionRef(declare_option(*app_, name, value, help));
}

OptionRef CommandLine::add_option(const std::string& name, std::vector<int>& value,
                                  const std::string& help) {
  return OptionRef(declare_option(*app_, name, value, help));
}

OptionRef CommandLine::add_option(const std::string& name, std::vector<std::uint32_t>& value,
                                  const std::string& help) {
  return OptionRef(declare_option(*app_, name, value, help));
}

OptionRef CommandLine::add_option(const std::string& name, std::vector<std::int64_t>& value,
                                  const std::string& help) {
  return OptionRef(declare_option(*app_, name, value, help));
}

OptionRef CommandLine::add_option(const std::string& name, std::vector<std::uint64_t>& value,
                                  const std::string& help) {
  return OptionRef(declare_option(*app_, name, value, help));
}

OptionRef CommandLine::add_option(const std::string& name, std::vector<double>& value,
                                  const std::string& help) {
  return OptionRef(declare_option(*app_, name, value, help));
}

OptionRef CommandLine::add_option(const std::string& name, std::vector<std::string>& value,
                                  const std::string& help) {
  return OptionRef(declare_option(*app_, name, value, help));
}

OptionRef CommandLine::add_flag(const std::string& name, bool& value, const std::string& help) {
  return OptionRef(app_->add_flag(name, value, help));
}

CommandLine& CommandLine::add_subcommand(const std::string& name, const std::string& description) {
  subcommands_.push_back(
      std::unique_ptr<CommandLine>(new CommandLine(app_->add_subcommand(name, description))));
  return *subcommands_.back();
}

void CommandLine::require_subcommand(int count) {
  app_->require_subcommand(count);
}

CommandLine::operator bool() const {
  return app_->parsed();
}

std::string CommandLine::name() const {
  return app_->get_name();
}

void set_error_describer(ErrorDescriber function) {
  describer() = function;
}

std::string describe_error(const std::exception& error) {
  return describer() ? describer()(error) : std::string(error.what());
}

int detail::run_cli(CommandLine& command_line, int argc, char** argv,
                    const std::function<int()>& body) {
  CLI::App& app = *command_line.app_;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    // --help and --version are "errors" that exit 0; real parse errors exit kExitBadInput.
    const int status = app.exit(error);
    return status == 0 ? kExitOk : kExitBadInput;
  }
  try {
    return body();
  } catch (const NotImplementedError& error) {
    return fail(app.get_name() + " needs a function you have not written yet.\n" + error.what(),
                kExitTodo);
  } catch (const ValueError& error) {
    return fail("error: " + std::string(error.what()), kExitBadInput);
  } catch (const TrainingDiverged& error) {
    return fail(error.what(), kExitDiverged);
  } catch (const std::exception& error) {
    return fail("error: " + describe_error(error), kExitFailure);
  }
}

}  // namespace g2c
