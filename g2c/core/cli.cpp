#include "g2c/core/cli.h"

#include <cstdio>
#include <iostream>

#include "g2c/core/errors.h"

namespace g2c {

namespace {

ErrorDescriber& describer() {
  static ErrorDescriber current = nullptr;
  return current;
}

int fail(const std::string& message, int status) {
  std::cout.flush();
  std::fflush(stdout);
  std::cerr << "\n" << message << "\n";
  return status;
}

}  // namespace

void set_error_describer(ErrorDescriber function) {
  describer() = function;
}

int detail::run_cli(CLI::App& app, int argc, char** argv, const std::function<int()>& body) {
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
    return fail("error: " + (describer() ? describer()(error) : std::string(error.what())),
                kExitFailure);
  }
}

}  // namespace g2c
