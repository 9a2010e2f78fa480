// Beyond midtraining — continued pretraining on code, with and without replay. A base model
// (module 10's ShakespeareLM-1M by default) goes on with the next-token objective on a new domain:
// Python source from the interpreter's own standard library. Two branches fork from the same base
// with fresh AdamW state and the same token budget — code only (100/0), and code with 20 % of its
// rows replayed from the base's own TinyShakespeare (80/20) — each through module 10's Trainer on
// your TokenMixture, rewarmed to a tenth of the base's peak learning rate and cosine-decayed to a
// hundredth. Then every model is scored on three frozen domains with your evaluate_domain_losses,
// on the same seeded windows: code (held out), Shakespeare (the base's held-out split: retention)
// and English technical prose (the numbered course's READMEs: a style neither branch trains on).
// Reported: the 3 × 3 loss table and the deltas from the base, the mixture each branch realised, a
// fixed code and prose continuation from each model; both branches saved as artifacts whose
// manifests name the base and record the mixture, budget, schedule and seed.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/data.h"
#include "exercises/common/figures.h"
#include "exercises/common/generation.h"
#include "g2c/core/atomic_file.h"
#include "g2c/core/errors.h"
#include "g2c/core/progress.h"
#include "g2c/core/sha256.h"
#include "g2c/midtraining/evaluation.h"
#include "g2c/midtraining/mixture.h"
#include "g2c/pretraining/build_info.h"
#include "g2c/pretraining/data.h"
#include "g2c/pretraining/model_artifact.h"
#include "g2c/pretraining/trainer.h"
#include "g2c/sampling/text_generation.h"

namespace exercise_beyond_midtraining {

namespace {

namespace fs = std::filesystem;
using g2c::exercises::Figure;
using g2c::exercises::Series;
using g2c::midtraining::Named;
using g2c::pretraining::TokenSource;

/// Pure-Python modules of the standard library (no C extension behind them), about 1.5 MB in
/// Python 3.11: the code domain, a stand-in for a corpus of Python files.
const std::vector<std::string> kStdlibFiles = {"argparse.py",     "ast.py",
                                               "calendar.py",     "collections/__init__.py",
                                               "configparser.py", "csv.py",
                                               "dataclasses.py",  "difflib.py",
                                               "enum.py",         "fractions.py",
                                               "functools.py",    "gettext.py",
                                               "heapq.py",        "inspect.py",
                                               "ipaddress.py",    "json/decoder.py",
                                               "json/encoder.py", "logging/__init__.py",
                                               "pathlib.py",      "pprint.py",
                                               "random.py",       "shutil.py",
                                               "statistics.py",   "string.py",
                                               "tarfile.py",      "textwrap.py",
                                               "typing.py",       "zipfile.py"};

/// The standard library of the course's Python and its version, from the environment's
/// pyvenv.cfg ("home" is the interpreter's bin folder, "version" its version): home/../lib/
/// python<major.minor>. `override` wins when given.
std::pair<fs::path, std::string> python_stdlib(const std::string& override) {
  const auto config = g2c::exercises::project_python().parent_path().parent_path() / "pyvenv.cfg";
  std::string home, version;
  if (fs::exists(config)) {
    std::istringstream lines(g2c::read_file(config));
    for (std::string line; std::getline(lines, line);) {
      const auto equals = line.find('=');
      if (equals == std::string::npos) continue;
      auto key = line.substr(0, equals), value = line.substr(equals + 1);
      const auto trim = [](std::string& s) {
        s.erase(0, s.find_first_not_of(" \t"));
        s.erase(s.find_last_not_of(" \t\r") + 1);
      };
      trim(key), trim(value);
      if (key == "home") home = value;
      if (key == "version" || (key == "version_info" && version.empty())) version = value;
    }
  }
  if (!override.empty()) return {fs::path(override), version.empty() ? "unknown" : version};
  const auto dot = version.find('.', version.find('.') + 1);
  const std::string major_minor = version.substr(0, dot);
  const fs::path stdlib = fs::path(home).parent_path() / "lib" / ("python" + major_minor);
  if (home.empty() || version.empty() || !fs::exists(stdlib / "argparse.py")) {
    throw g2c::ValueError(fmt::format(
        "cannot find the Python standard library from {} (home \"{}\", version \"{}\"); run "
        "scripts/setup.sh, or pass --python-lib with the folder that holds argparse.py",
        config.string(), home, version));
  }
  return {stdlib, version};
}

/// A domain's text with what a reader needs to rebuild it exactly: each file with its bytes and
/// sha256.
struct Domain {
  std::string text;
  nlohmann::json files = nlohmann::json::array();
};

Domain read_files(const fs::path& folder, const std::vector<std::string>& names) {
  Domain domain;
  for (const auto& name : names) {
    const auto path = folder / name;
    if (!fs::exists(path)) continue;  // another Python version may lack one: recorded by absence
    const auto text = g2c::read_file(path);
    domain.text += text + "\n\n";
    domain.files.push_back(
        {{"file", name}, {"bytes", text.size()}, {"sha256", g2c::sha256_hex(text)}});
  }
  return domain;
}

/// This repository's READMEs of the numbered course (exercises/00-… to 20-…), in path order: the
/// course's prose at the build's commit. Not the Beyond modules' READMEs — this module's own holds
/// the numbers this program measures, and editing them must not move the measurement.
Domain repository_prose() {
  const auto root = g2c::exercises::project_dir();
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(root / "exercises")) {
    const auto folder = entry.path().filename().string();
    if (!folder.empty() && std::isdigit(static_cast<unsigned char>(folder[0])) &&
        fs::exists(entry.path() / "README.md")) {
      names.push_back(fs::relative(entry.path() / "README.md", root).string());
    }
  }
  std::sort(names.begin(), names.end());
  return read_files(root, names);
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Beyond midtraining: a base model continues on Python source, code only and with 20 %\n"
      "Shakespeare replay, the same tokens each; losses on code, Shakespeare and prose on the\n"
      "same windows. Writes midtraining.json and midtraining_*.png; saves both branches."};
  g2c::exercises::CommonOptions options;
  options.out = "results/beyond-midtraining";
  options.steps = 300;
  g2c::exercises::add_common_options(app, options);
  g2c::exercises::ArtifactOptions artifact;
  g2c::exercises::add_artifact_options(
      app, artifact,
      {.name = "",
       .dir = "Folder of the two saved artifacts, one folder each (default: artifacts/models)",
       .no_save = "Do not save the two branches"});
  std::string base = std::string(g2c::pretraining::kShakespeareLM), python_lib;
  std::int64_t batch = 8, warmup = 20, eval_iters = 20, sample_tokens = 200;
  std::int64_t context = 0;
  double replay = 0.2;
  app.add_option("--base", base, "The base model artifact (name, alias or folder)");
  app.add_option("--batch", batch, "Rows per step").range(1, 4096);
  app.add_option("--context", context, "Tokens per row (default: the base's max_seq_len)")
      .range(0, 100000);
  app.add_option("--warmup", warmup, "Steps of the rewarm").range(0, 100000);
  app.add_option("--replay", replay, "Shakespeare's share of the replay branch's rows")
      .range(0.0, 0.99);
  app.add_option("--eval-iters", eval_iters, "Batches per domain in the loss table")
      .range(1, 10000);
  app.add_option("--sample-tokens", sample_tokens, "Tokens of each continuation").range(0, 10000);
  app.add_option("--python-lib", python_lib,
                 "The Python standard library folder (default: the course environment's)");
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    const std::int64_t steps = options.steps;
    auto base_model = g2c::sampling::load_text_model(base, device);
    const auto base_name = base_model.artifact.summary.name;
    const auto base_options = base_model.artifact.model->options;
    if (context == 0) context = base_options.max_seq_len();
    const double base_lr =
        base_model.artifact.manifest.value("training_config", nlohmann::json::object())
            .value("max_lr", 6e-4);
    fmt::print("base {}: {} parameters, peak learning rate {:g}\n", base_name,
               g2c::transformer::parameter_count(base_options), base_lr);

    // The three domains, tokenized by the base's tokenizer.
    const auto [stdlib, python_version] = python_stdlib(python_lib);
    const auto code = read_files(stdlib, kStdlibFiles);
    if (code.text.size() < 100'000) {
      throw g2c::ValueError(fmt::format(
          "only {} bytes of Python source under {}: pass --python-lib with the standard library",
          code.text.size(), stdlib.string()));
    }
    const auto prose = repository_prose();
    const std::string shakespeare_text =
        g2c::exercises::load_tinyshakespeare().substr(0, 1'000'000);  // module 10's text
    const auto code_split = g2c::pretraining::split_token_stream(base_model.encode(code.text), 0.9);
    const auto shakespeare_split =
        g2c::pretraining::split_token_stream(base_model.encode(shakespeare_text), 0.9);
    const auto prose_ids = base_model.encode(prose.text);
    fmt::print(
        "domains: code {} bytes ({} files of Python {}) -> {} + {} tokens; Shakespeare {} + {} "
        "tokens; prose {} bytes ({} READMEs at {}) -> {} tokens\n",
        code.text.size(), code.files.size(), python_version, code_split.train.numel(),
        code_split.val.numel(), shakespeare_split.train.numel(), shakespeare_split.val.numel(),
        prose.text.size(), prose.files.size(), g2c::pretraining::source_commit().substr(0, 12),
        prose_ids.numel());
    const Named<TokenSource> domains = {
        {"code", code_split.val}, {"shakespeare", shakespeare_split.val}, {"prose", prose_ids}};
    const auto eval_options = g2c::midtraining::DomainEvalOptions(batch, context)
                                  .eval_iters(eval_iters)
                                  .device(device.str())
                                  .seed(options.seed);
    const auto code_prompt = std::vector<std::int64_t>(
        code_split.val.data_ptr<std::int64_t>(), code_split.val.data_ptr<std::int64_t>() + context);
    const auto prose_prompt = std::vector<std::int64_t>(
        prose_ids.data_ptr<std::int64_t>(), prose_ids.data_ptr<std::int64_t>() + context);
    const auto continuations = [&](const std::shared_ptr<g2c::nn::Module>& model) {
      model->eval();
      nlohmann::json out;
      for (const auto& [name, prompt] :
           {std::pair{"code", code_prompt}, std::pair{"prose", prose_prompt}}) {
        const auto ids = g2c::exercises::continue_text(
            model, base_options.vocab_size(), context, prompt, sample_tokens,
            at::make_generator<at::CPUGeneratorImpl>(options.seed));
        out[name] = base_model.tokenizer.decode(ids);
      }
      model->train();
      return out;
    };

    struct Row {
      std::string name;
      Named<double> losses;
      nlohmann::json extra;
    };
    std::vector<Row> rows;
    const auto base_module =
        std::static_pointer_cast<g2c::nn::Module>(base_model.artifact.model.ptr());
    rows.push_back({base_name,
                    g2c::midtraining::evaluate_domain_losses(*base_module, domains, eval_options),
                    {{"continuations", continuations(base_module)}}});

    const std::vector<std::pair<std::string, double>> branches = {{"code", 0.0},
                                                                  {"code-replay", replay}};
    for (const auto& [suffix, replay_share] : branches) {
      // A fork of the base: its weights, fresh AdamW state.
      auto fork = g2c::sampling::load_text_model(base, device);
      auto model = fork.artifact.model;
      model->train();
      g2c::midtraining::TokenMixture mixture(
          {{"code", code_split.train}, {"shakespeare", shakespeare_split.train}},
          {{"code", 1.0 - replay_share}, {"shakespeare", replay_share}});
      const auto trainer_options =
          g2c::pretraining::TrainerOptions(batch, context, steps, base_lr / 10)
              .min_lr(base_lr / 100)
              .warmup_steps(std::min(warmup, steps / 2))
              .weight_decay(0.01)
              .grad_clip(1.0)
              .eval_every(std::max<std::int64_t>(1, steps / 6))
              .eval_iters(8)
              .log_every(std::max<std::int64_t>(1, steps / 30))
              .generator(at::make_generator<at::CPUGeneratorImpl>(options.seed))
              .device(device.str())
              .optimizer("adamw");
      g2c::pretraining::Trainer trainer(model, trainer_options);
      const std::string name = base_name + "-mid-" + suffix;
      g2c::Progress progress(fmt::format("{} ({})", name, mixture.to_string()), steps,
                             !options.quiet);
      const auto start = std::chrono::steady_clock::now();
      const auto history = trainer.train(
          mixture, g2c::pretraining::RunOptions()
                       .val_ids(code_split.val)
                       .on_log([&](const g2c::pretraining::LogEvent& event) {
                         progress.update(event.step + 1,
                                         event.val_loss
                                             ? fmt::format("loss {:.3f} code val {:.3f}",
                                                           event.train_loss, *event.val_loss)
                                             : fmt::format("loss {:.3f}", event.train_loss));
                       }));
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      progress.finish(fmt::format("{:.0f} s", seconds));
      const auto module = std::static_pointer_cast<g2c::nn::Module>(model.ptr());
      const auto fractions = mixture.observed_fractions();
      nlohmann::json realised = {{"code", fractions[0]}, {"shakespeare", fractions[1]}};
      nlohmann::json training_config = g2c::pretraining::trainer_options_json(trainer_options);
      training_config.update(
          {{"mixture", {{"code", 1.0 - replay_share}, {"shakespeare", replay_share}}},
           {"realised_mixture", realised},
           {"budget_tokens", steps * batch * context},
           {"schedule",
            fmt::format("{} steps rewarm to {:g} (base peak / 10), cosine to {:g} (/ 100)",
                        trainer_options.warmup_steps(), base_lr / 10, base_lr / 100)},
           {"code_domain", {{"python_version", python_version}, {"files", code.files.size()}}}});
      nlohmann::json saved = nullptr;
      if (artifact.save) {
        const auto dir = g2c::pretraining::save_model_artifact(
            {.name = name,
             .module = "beyond-midtraining",
             .source = fmt::format("python {} standard library ({} files) + tinyshakespeare.txt",
                                   python_version, code.files.size()),
             .tokenizer_artifact = base_model.artifact.summary.tokenizer_artifact,
             .training_config = training_config,
             .seed = options.seed,
             .history = history,
             .notes = fmt::format("exercise beyond_midtraining, {}", mixture.to_string()),
             .base_artifact = base_name},
            model, artifact.folder_for(name, /*several=*/true));
        saved = dir.string();
        fmt::print("saved {} (base_artifact {})\n", dir.string(), base_name);
      }
      rows.push_back({name,
                      g2c::midtraining::evaluate_domain_losses(*module, domains, eval_options),
                      {{"mixture", training_config["mixture"]},
                       {"realised_mixture", realised},
                       {"seconds", seconds},
                       {"history", history.to_json()},
                       {"artifact", saved},
                       {"continuations", continuations(module)}}});
    }

    // The table: losses, and deltas from the base.
    fmt::print("\n{:<34} {:<13} {:<13} {:<13}\n", "model", " code", " shakespeare", " prose");
    for (const auto& row : rows) {
      fmt::print("{:<34}", row.name);
      for (std::size_t d = 0; d < domains.size(); ++d) {
        const double loss = row.losses[d].second;
        const double delta = loss - rows.front().losses[d].second;
        fmt::print(" {:>6.3f}{}", loss,
                   &row == &rows.front() ? std::string(6, ' ') : fmt::format(" {:+.2f}", delta));
      }
      fmt::print("\n");
    }
    for (std::size_t r = 1; r < rows.size(); ++r) {
      fmt::print("{} realised {}\n", rows[r].name, rows[r].extra["realised_mixture"].dump());
    }

    auto result = g2c::exercises::run_metadata("beyond_midtraining", options, device);
    result["config"] = {{"base", base_name},
                        {"steps", steps},
                        {"batch_size", batch},
                        {"context_length", context},
                        {"warmup_steps", warmup},
                        {"base_max_lr", base_lr},
                        {"replay", replay},
                        {"eval_iters", eval_iters},
                        {"budget_tokens", steps * batch * context}};
    result["domains"] = {{"code",
                          {{"python_version", python_version},
                           {"stdlib", stdlib.string()},
                           {"files", code.files},
                           {"train_tokens", code_split.train.numel()},
                           {"val_tokens", code_split.val.numel()}}},
                         {"shakespeare",
                          {{"characters", shakespeare_text.size()},
                           {"train_tokens", shakespeare_split.train.numel()},
                           {"val_tokens", shakespeare_split.val.numel()}}},
                         {"prose",
                          {{"commit", std::string(g2c::pretraining::source_commit())},
                           {"files", prose.files},
                           {"tokens", prose_ids.numel()}}}};
    nlohmann::json models = nlohmann::json::array();
    std::vector<std::string> domain_names;
    for (const auto& [name, source] : domains) domain_names.push_back(name);
    for (const auto& row : rows) {
      nlohmann::json losses = nlohmann::json::object(), deltas = nlohmann::json::array(),
                     values = nlohmann::json::array();
      for (std::size_t d = 0; d < row.losses.size(); ++d) {
        losses[row.losses[d].first] = row.losses[d].second;
        values.push_back(row.losses[d].second);
        deltas.push_back(row.losses[d].second - rows.front().losses[d].second);
      }
      auto entry = row.extra;
      entry["name"] = row.name;
      entry["losses"] = losses;
      entry["loss_values"] = values;
      entry["deltas"] = deltas;
      models.push_back(entry);
    }
    result["domain_names"] = domain_names;
    result["models"] = models;
    auto loss_figure = Figure::bar("midtraining_losses.png",
                                   "Loss on each domain, the same windows for every model",
                                   "domain", "loss (nats per token)");
    auto delta_figure = Figure::bar("midtraining_deltas.png",
                                    "Change from the base: below 0 gained, above 0 forgotten",
                                    "domain", "loss − base loss");
    for (std::size_t r = 0; r < models.size(); ++r) {
      loss_figure.add(Series(models[r]["name"].get<std::string>(), "/domain_names",
                             fmt::format("/models/{}/loss_values", r)));
      if (r > 0) {
        delta_figure.add(Series(models[r]["name"].get<std::string>(), "/domain_names",
                                fmt::format("/models/{}/deltas", r)));
      }
    }
    delta_figure.hline(0.0, "the base");
    result["figures"] = g2c::exercises::figures({loss_figure, delta_figure});
    const auto path = g2c::exercises::save_result(options, "midtraining.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_beyond_midtraining
