// Framework tests of the command line every course program runs through (g2c/core/cli.h): values
// parsed into the program's variables, the checks refusing bad input before the program starts,
// and the exit-status table.
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "g2c/core/cli.h"
#include "g2c/core/errors.h"

namespace {

// Runs `app` on the words of a command line; stdout and stderr are captured, not printed.
struct Run {
  int status = -1;
  bool body_ran = false;
  std::string out;
};

template <typename Body>
Run run(g2c::CommandLine& app, std::vector<std::string> words, Body&& body) {
  words.insert(words.begin(), "program");
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  std::ostringstream captured;
  std::streambuf* out = std::cout.rdbuf(captured.rdbuf());
  std::streambuf* err = std::cerr.rdbuf(captured.rdbuf());
  Run result;
  result.status = g2c::run_cli(app, static_cast<int>(argv.size()), argv.data(), [&] {
    result.body_ran = true;
    return body();
  });
  std::cout.rdbuf(out);
  std::cerr.rdbuf(err);
  result.out = captured.str();
  return result;
}

Run run(g2c::CommandLine& app, std::vector<std::string> words) {
  return run(app, std::move(words), [] { return 0; });
}

}  // namespace

TEST_CASE("command_line_parses_every_kind_of_value_into_its_variable", "[core][cli]") {
  g2c::CommandLine app{"test"};
  std::int64_t steps = 10;
  double lr = 0.1;
  std::string name = "a";
  std::vector<std::int64_t> sizes{1};
  std::optional<std::filesystem::path> dir;
  std::optional<double> top_p;
  bool quiet = false;
  bool plot = true;
  app.add_option("--steps", steps, "steps");
  app.add_option("--lr", lr, "lr");
  app.add_option("--name", name, "name");
  app.add_option("--sizes", sizes, "sizes");
  app.add_option("--dir", dir, "dir");
  app.add_option("--top-p", top_p, "top p");
  app.add_flag("--quiet", quiet, "quiet");
  app.add_flag("!--no-plot", plot, "no plot");
  const Run result = run(app, {"--steps", "250", "--lr", "3e-3", "--name", "b", "--sizes", "4", "8",
                               "--dir", "out", "--quiet", "--no-plot"});
  CHECK(result.status == 0);
  CHECK(result.body_ran);
  CHECK(steps == 250);
  CHECK(lr == 3e-3);
  CHECK(name == "b");
  CHECK(sizes == std::vector<std::int64_t>{4, 8});
  REQUIRE(dir.has_value());
  CHECK(*dir == std::filesystem::path("out"));
  CHECK_FALSE(top_p.has_value());
  CHECK(quiet);
  CHECK_FALSE(plot);
}

TEST_CASE("command_line_checks_refuse_bad_values_before_the_program_runs", "[core][cli]") {
  const auto refused = [](const std::vector<std::string>& words) {
    g2c::CommandLine app{"test"};
    std::int64_t steps = 10;
    int vocab = 512;
    double p = 0.5;
    std::string data = "text";
    std::string must;
    app.add_option("--steps", steps, "steps").positive();
    app.add_option("--vocab", vocab, "vocab").range(257, 4096);
    app.add_option("--p", p, "p").range(0.0, 1.0);
    app.add_option("--data", data, "data").one_of({"text", "random"});
    app.add_option("--must", must, "must").required();
    const Run result = run(app, words);
    return !result.body_ran && result.status == g2c::kExitBadInput;
  };
  CHECK_FALSE(refused({"--must", "x"}));
  CHECK(refused({}));  // --must missing
  CHECK(refused({"--must", "x", "--steps", "0"}));
  CHECK(refused({"--must", "x", "--steps", "many"}));
  CHECK(refused({"--must", "x", "--vocab", "4097"}));
  CHECK_FALSE(refused({"--must", "x", "--vocab", "4096"}));
  CHECK(refused({"--must", "x", "--p", "1.5"}));
  CHECK_FALSE(refused({"--must", "x", "--p", "0.25"}));
  CHECK(refused({"--must", "x", "--data", "pictures"}));
  CHECK(refused({"--must", "x", "--unknown"}));
}

TEST_CASE("command_line_refusals_say_what_was_expected", "[core][cli]") {
  g2c::CommandLine app{"test"};
  int threads = 0;
  double p = 0.5;
  app.add_option("--threads", threads, "threads").non_negative();
  const Run negative = run(app, {"--threads", "-1"});
  CHECK(negative.status == g2c::kExitBadInput);
  CHECK_THAT(negative.out, Catch::Matchers::Contains("--threads: expected a number >= 0, got -1"));
  g2c::CommandLine again{"test"};
  again.add_option("--p", p, "p").range(0.0, 1.0);
  const Run outside = run(again, {"--p", "1.5"});
  CHECK_THAT(outside.out, Catch::Matchers::Contains("--p: expected a number in [0, 1], got 1.5"));
}

TEST_CASE("command_line_help_shows_defaults_unless_told_not_to_and_exits_zero", "[core][cli]") {
  g2c::CommandLine app{"What the program does"};
  std::int64_t steps = 1234;
  std::int64_t max_chars = 0;
  app.add_option("--steps", steps, "Training steps");
  app.add_option("--max-chars", max_chars, "Characters to read (default: all)").no_default();
  const Run result = run(app, {"--help"});
  CHECK(result.status == 0);
  CHECK_FALSE(result.body_ran);
  CHECK(result.out.find("What the program does") != std::string::npos);
  CHECK(result.out.find("INT=1234") != std::string::npos);
  CHECK(result.out.find("INT=0") == std::string::npos);
}

TEST_CASE("command_line_subcommand_converts_to_true_when_chosen", "[core][cli]") {
  g2c::CommandLine app{"test"};
  app.require_subcommand(1);
  std::string input;
  g2c::CommandLine& train = app.add_subcommand("train", "train");
  g2c::CommandLine& info = app.add_subcommand("info", "info");
  train.add_option("--input", input, "input").required();
  const Run result = run(app, {"train", "--input", "corpus.txt"});
  CHECK(result.status == 0);
  CHECK(static_cast<bool>(train));
  CHECK_FALSE(static_cast<bool>(info));
  CHECK(input == "corpus.txt");
  g2c::CommandLine none{"test"};
  none.require_subcommand(1);
  none.add_subcommand("train", "train");
  CHECK(run(none, {}).status == g2c::kExitBadInput);
}

TEST_CASE("run_cli_maps_what_went_wrong_to_the_exit_status_table", "[core][cli]") {
  const auto status_of = [](auto body) {
    g2c::CommandLine app{"test", "program"};
    return run(app, {}, body);
  };
  CHECK(status_of([] { return 0; }).status == g2c::kExitOk);
  CHECK(status_of([] { return 7; }).status == 7);
  const Run todo = status_of([]() -> int { throw g2c::NotImplementedError("write f"); });
  CHECK(todo.status == g2c::kExitTodo);
  CHECK(todo.out.find("program needs a function you have not written yet") != std::string::npos);
  CHECK(todo.out.find("write f") != std::string::npos);
  const Run bad = status_of([]() -> int { throw g2c::ValueError("expected a folder"); });
  CHECK(bad.status == g2c::kExitBadInput);
  CHECK(bad.out.find("error: expected a folder") != std::string::npos);
  CHECK(status_of([]() -> int { throw g2c::TrainingDiverged("loss is nan"); }).status ==
        g2c::kExitDiverged);
  CHECK(status_of([]() -> int { throw std::runtime_error("disk"); }).status == g2c::kExitFailure);
}
