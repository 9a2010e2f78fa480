// Module 10 framework tests of the files both editions read: the archive format (every kind of
// value survives a round trip, and the pickle carries no TorchScript type tags, so Python's
// torch.load(weights_only=True) accepts it); model artifacts in the Python edition's layout
// (model.pt = {vocab_size, model_config, params} with the Python constructor's keywords and the
// Python parameters() order, config.json and manifest.json with base_artifact), loaded back by
// name, alias or folder with the same weights, a file in that layout written without this
// edition's saver loads, and what does not fit is refused naming both sides.
// scripts/check_model_interop.py runs the same files through Python itself.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "g2c/core/archive.h"
#include "g2c/core/atomic_file.h"
#include "g2c/core/errors.h"
#include "g2c/pretraining/build_info.h"
#include "g2c/pretraining/model_artifact.h"
#include "g2c/transformer/transformer_lm.h"
#include "one_thread.h"
#include "pretraining_test_support.h"
#include "torch_test.h"

using Catch::Matchers::Contains;
namespace fs = std::filesystem;
using g2c::ArchiveDict;
using g2c::pretraining::TrainingHistory;
using g2c::testing::max_abs_diff;
using g2c::testing::model_with_seed;
using g2c::testing::temporary_folder;
using g2c::transformer::TransformerLM;
using g2c::transformer::TransformerLMOptions;

namespace {

[[maybe_unused]] const bool kOneThread = g2c::testing::use_one_intra_op_thread();

/// model.pt as the Python edition's save_model_artifact writes it, built key by key here rather
/// than by save_model_artifact: {"vocab_size", "model_config", "params"}.
ArchiveDict python_layout(const TransformerLM& model, const nlohmann::json& model_config) {
  auto weights = g2c::archive_dict();
  weights.insert("vocab_size", model->vocab_size);
  weights.insert("model_config", g2c::to_archive_value(model_config));
  weights.insert("params", g2c::archive_tensors(model->parameters()));
  return weights;
}

std::vector<std::string> keys_of(const c10::impl::GenericDict& dict) {
  std::vector<std::string> keys;
  for (const auto& entry : dict) keys.push_back(entry.key().toStringRef());
  return keys;
}

c10::impl::GenericDict load_pickle(const std::filesystem::path& path) {
  const std::string bytes = g2c::read_file(path);
  return torch::pickle_load(std::vector<char>(bytes.begin(), bytes.end())).toGenericDict();
}

}  // namespace

TEST_CASE("archive_kind_tags_checks_and_keeps_backups_by_one_rule", "[artifact]") {
  const auto folder = temporary_folder("archive-kind");
  const g2c::ArchiveKind rolling{.what = "test file",
                                 .format = "g2c-test",
                                 .version = 3,
                                 .remedy = "write it again",
                                 .keeps_backup = true};
  auto single = rolling;
  single.keeps_backup = false;
  auto dict = g2c::archive_dict();
  dict.insert("step", std::int64_t{1});

  // Tagged on writing, the caller's dict untouched; checked on reading.
  const auto path = folder / "rolling.pt";
  g2c::write_archive(path, dict, rolling);
  CHECK_FALSE(dict.contains("format"));
  const auto view = g2c::read_archive(path, rolling);
  CHECK(view.string("format") == "g2c-test");
  CHECK(view.integer("version") == 3);
  auto newer = rolling;
  newer.version = 4;
  CHECK_THROWS_WITH(g2c::read_archive(path, newer),
                    Contains("is a test file of version 3, this build reads version 4") &&
                        Contains("write it again"));
  auto other = rolling;
  other.format = "g2c-other";
  CHECK_THROWS_WITH(g2c::read_archive(path, other),
                    Contains("is not a g2c test file (it has no format 'g2c-other')"));

  // Rolling: the second write keeps the first as .bak, and a damaged file is read from it.
  dict.insert_or_assign("step", std::int64_t{2});
  g2c::write_archive(path, dict, rolling);
  const auto backup = fs::path(path.string() + ".bak");
  REQUIRE(fs::exists(backup));
  g2c::write_file_atomic(path, "not a zip");
  const auto fallen_back = g2c::read_archive(path, rolling);
  CHECK(fallen_back.integer("step") == 1);
  CHECK(fallen_back.path() == backup);
  CHECK_THAT(fallen_back.fallback_note, Contains("cannot be read"));

  // Single: no .bak is written, and one lying there is never read.
  const auto lone = folder / "single.pt";
  g2c::write_archive(lone, dict, single);
  g2c::write_archive(lone, dict, single);
  CHECK_FALSE(fs::exists(lone.string() + ".bak"));
  fs::copy_file(lone, lone.string() + ".bak");
  g2c::write_file_atomic(lone, "not a zip");
  CHECK_THROWS_WITH(g2c::read_archive(lone, single), Contains("cannot read test file"));
  fs::remove(lone);
  CHECK_THROWS_WITH(g2c::read_archive(lone, single), Contains("no test file at"));
}

TEST_CASE("archive_round_trip_keeps_every_kind_of_value", "[artifact]") {
  const auto path = temporary_folder("archive") / "values.pt";
  auto dict = g2c::archive_dict();
  dict.insert("int", std::int64_t{-7});
  dict.insert("float", 0.25);
  dict.insert("str", std::string("ShakespeareLM-1M"));
  dict.insert("none", c10::IValue());
  dict.insert("json", g2c::to_archive_value(
                          {{"flag", true}, {"list", {1, 2.5, "three"}}, {"nested", {{"a", 1}}}}));
  torch::manual_seed(0);
  const std::vector<torch::Tensor> tensors = {
      torch::randn({3, 4}), torch::randn({5}, torch::kDouble), torch::arange(6).reshape({2, 3}),
      torch::randn({4, 4}).t()};  // not contiguous
  dict.insert("tensors", g2c::archive_tensors(tensors));
  dict.insert("nan", torch::tensor({1.0, std::nan("")}, torch::kDouble));
  g2c::write_archive(path, dict);

  const auto view = g2c::read_archive(path, g2c::ArchiveKind::plain("test file"));
  CHECK(view.integer("int") == -7);
  CHECK(view.json("float") == 0.25);
  CHECK(view.string("str") == "ShakespeareLM-1M");
  CHECK(view.json("none").is_null());
  CHECK(view.json("json") ==
        nlohmann::json({{"flag", true}, {"list", {1, 2.5, "three"}}, {"nested", {{"a", 1}}}}));
  const auto back = view.tensors("tensors");
  REQUIRE(back.size() == tensors.size());
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    CHECK(back[i].scalar_type() == tensors[i].scalar_type());
    CHECK(torch::equal(back[i], tensors[i]));
  }
  CHECK(std::isnan(view.tensor("nan")[1].item<double>()));
  CHECK(view.fallback_note.empty());
  CHECK_THROWS_WITH(view.integer("str"), Contains("'str' should be an int") &&
                                             Contains("found the str 'ShakespeareLM-1M'"));
  CHECK_THROWS_WITH(view.tensors("missing"), Contains("has no 'missing'"));
  CHECK_THROWS_WITH(view.dict("json").dict("nested").string("a"),
                    Contains("'json/nested/a' should be a str"));

  // No TorchScript type tags in the pickle (torch::pickle_save writes restore_type_tag and
  // build_tensorlist), which is what lets Python's weights_only loader accept the file.
  const auto bytes = g2c::read_file(path);
  CHECK(bytes.find("restore_type_tag") == std::string::npos);
  CHECK(bytes.find("build_tensorlist") == std::string::npos);
  CHECK(bytes.find("_rebuild_tensor_v2") != std::string::npos);
  std::filesystem::remove_all(path.parent_path());
}

TEST_CASE("python_ordered_parameters_are_the_registration_order", "[artifact]") {
  // The Python TransformerLM.parameters() order, looked up by name, is the order this edition
  // registers its parameters in: checkpoints (parameters()) and model files agree.
  torch::manual_seed(0);
  TransformerLM model(TransformerLMOptions(/*vocab_size=*/11, /*embedding_dim=*/6,
                                           /*num_layers=*/2, /*num_heads=*/3, /*max_seq_len=*/5)
                          .hidden_dim(10));
  const auto ordered = g2c::pretraining::python_ordered_parameters(*model);
  const auto registered = model->parameters();
  REQUIRE(ordered.size() == 37);
  REQUIRE(ordered.size() == registered.size());
  for (std::size_t i = 0; i < ordered.size(); ++i) {
    INFO("parameter " << i);
    CHECK(ordered[i].is_same(registered[i]));
  }
  CHECK(ordered.front().is_same(model->token_embed->weight));
  CHECK(ordered[2].is_same(model->blocks[0]->ln1->gamma));
  CHECK(ordered[4].sizes() == torch::IntArrayRef({6, 6}));    // q_proj.W (in, out)
  CHECK(ordered[14].sizes() == torch::IntArrayRef({6, 10}));  // fc1.W (D, hidden)
  CHECK(ordered.back().is_same(model->head_bias));
}

TEST_CASE("model_artifact_writes_the_python_layout", "[artifact]") {
  const auto folder = temporary_folder("layout") / "StoryLM-5M-SFT";
  torch::manual_seed(1);
  TransformerLM model(TransformerLMOptions(/*vocab_size=*/11, /*embedding_dim=*/6,
                                           /*num_layers=*/2, /*num_heads=*/3, /*max_seq_len=*/5));
  g2c::pretraining::ModelArtifactInfo info;
  info.name = "StoryLM-5M-SFT";
  info.module = "module-13";
  info.base_artifact = "StoryLM-5M";
  g2c::pretraining::save_model_artifact(info, model, folder);

  const nlohmann::json keywords = {{"embedding_dim", 6},
                                   {"num_layers", 2},
                                   {"num_heads", 3},
                                   {"max_seq_len", 5},
                                   {"hidden_dim", 24}};  // the real width, 4·D, never 0
  const auto weights = load_pickle(folder / "model.pt");
  CHECK(keys_of(weights) == std::vector<std::string>{"vocab_size", "model_config", "params"});
  CHECK(weights.at("vocab_size").toInt() == 11);
  const auto view = g2c::read_archive(folder / "model.pt", g2c::ArchiveKind::plain("model file"));
  CHECK(view.json("model_config") == keywords);
  const auto params = view.tensors("params");
  const auto expected = g2c::pretraining::python_ordered_parameters(*model);
  REQUIRE(params.size() == expected.size());
  for (std::size_t i = 0; i < params.size(); ++i) CHECK(torch::equal(params[i], expected[i]));

  const auto config = nlohmann::json::parse(g2c::read_file(folder / "config.json"));
  CHECK(config["model_config"] == keywords);
  const auto manifest = nlohmann::json::parse(g2c::read_file(folder / "manifest.json"));
  CHECK(manifest["model_config"] == keywords);
  CHECK(manifest["vocab_size"] == 11);
  CHECK(manifest["base_artifact"] == "StoryLM-5M");
  CHECK(manifest["module"] == "module-13");
  for (const char* key :
       {"name", "module", "source", "tokenizer_artifact", "vocab_size", "model_config",
        "training_config", "seed", "git_commit", "created_at", "steps_completed",
        "final_train_loss", "final_val_loss", "notes", "base_artifact"}) {
    INFO("manifest key " << key);
    CHECK(manifest.contains(key));
  }
  std::filesystem::remove_all(folder.parent_path());
}

TEST_CASE("model_artifact_loads_a_file_in_the_python_layout", "[artifact]") {
  // What the Python edition writes: its own keys, model_config as the user passed it to the
  // constructor (hidden_dim left out or None: 4·D), and a config.json beside it.
  const auto model_config = GENERATE(
      nlohmann::json{
          {"embedding_dim", 8}, {"num_layers", 1}, {"num_heads", 2}, {"max_seq_len", 16}},
      nlohmann::json{{"embedding_dim", 8},
                     {"num_layers", 1},
                     {"num_heads", 2},
                     {"max_seq_len", 16},
                     {"hidden_dim", nullptr}});
  INFO("model_config " << model_config.dump());
  const auto folder = temporary_folder("python-layout") / "ShakespeareLM-1M";
  auto model = model_with_seed(5);
  g2c::write_archive(folder / "model.pt", python_layout(model, model_config));
  g2c::write_json_atomic(folder / "config.json",
                         {{"model_config", model_config}, {"training_config", {{"lr", 3e-4}}}});
  g2c::write_json_atomic(folder / "manifest.json", {{"name", "ShakespeareLM-1M"},
                                                    {"tokenizer_artifact", "ShakespeareTokenizer"},
                                                    {"vocab_size", 12},
                                                    {"model_config", model_config}});
  auto artifact = g2c::pretraining::load_model_artifact(folder.string());
  CHECK(artifact.model->hidden_dim == 32);
  const auto ids = torch::randint(0, 12, {2, 7}, torch::kLong);
  torch::NoGradGuard no_grad;
  model->eval();
  const auto difference = max_abs_diff(model->forward(ids), artifact.model->forward(ids));
  std::cout << "largest |logit difference| written vs loaded (" << model_config.dump()
            << ") = " << difference << "\n";
  CHECK(difference == 0.0);
  // model.pt has no backup: a model.pt.bak alone is not a model (it belongs to no manifest).
  fs::rename(folder / "model.pt", folder / "model.pt.bak");
  CHECK_THROWS_WITH(g2c::pretraining::load_model_artifact(folder.string()),
                    Contains("manifest.json and model.pt are needed"));
  std::filesystem::remove_all(folder.parent_path());
}

TEST_CASE("model_artifact_round_trip_by_name_and_by_folder", "[artifact]") {
  const auto root = temporary_folder("artifacts");
  ::setenv("G2C_ARTIFACTS_DIR", root.c_str(), /*overwrite=*/1);
  auto model = model_with_seed(3);
  TrainingHistory history;
  history.step = {0, 9};
  history.train_loss = {2.5, 2.0};
  history.lr = {1e-3, 5e-4};
  history.grad_norm = {0.0, 0.0};
  history.val_step = {9};
  history.val_loss = {2.1};
  g2c::pretraining::ModelArtifactInfo info;
  info.name = "ShakespeareLM-1M";
  info.source = "tinyshakespeare.txt";
  info.tokenizer_artifact = "ShakespeareTokenizer";
  info.training_config = {{"max_steps", 10}};
  info.seed = 0;
  info.history = history;
  const auto folder = g2c::pretraining::save_model_artifact(info, model);
  CHECK(folder == root / "models" / "ShakespeareLM-1M");

  // By alias, by name and by folder: the same weights, the manifest's fields.
  for (const std::string& key :
       std::vector<std::string>{"ShakespeareLM", "ShakespeareLM-1M", folder.string()}) {
    INFO("loaded as " << key);
    const auto artifact = g2c::pretraining::load_model_artifact(key);
    const auto a = model->parameters();
    const auto b = artifact.model->parameters();
    REQUIRE(a.size() == b.size());
    double difference = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i)
      difference = std::max(difference, max_abs_diff(a[i], b[i]));
    CHECK(difference == 0.0);
    CHECK(artifact.manifest["tokenizer_artifact"] == "ShakespeareTokenizer");
    CHECK(artifact.manifest["steps_completed"] == 10);
    CHECK(artifact.manifest["final_train_loss"] == 2.0);
    CHECK(artifact.manifest["final_val_loss"] == 2.1);
    CHECK(artifact.manifest["vocab_size"] == 12);
    CHECK(artifact.manifest["module"] == "module-10");
    CHECK(artifact.manifest["git_commit"] == std::string(g2c::pretraining::source_commit()));
    CHECK(artifact.manifest.contains("created_at"));
    CHECK(artifact.manifest["base_artifact"].is_null());
    CHECK(artifact.config["model_config"]["embedding_dim"] == 8);
    CHECK_FALSE(std::filesystem::exists(folder / "model.pt.bak"));
  }
  // The rebuilt model computes what the saved one did.
  const auto ids = torch::randint(0, 12, {2, 5}, torch::kLong);
  auto loaded = g2c::pretraining::load_model_artifact("ShakespeareLM-1M");
  ::unsetenv("G2C_ARTIFACTS_DIR");
  std::filesystem::remove_all(root);
  torch::NoGradGuard no_grad;
  model->eval();
  const auto difference = max_abs_diff(model->forward(ids), loaded.model->forward(ids));
  std::cout << "largest |logit difference| saved vs loaded model = " << difference << "\n";
  CHECK(difference == 0.0);
}

TEST_CASE("model_artifact_load_rejects_missing_or_mismatched", "[artifact]") {
  const auto root = temporary_folder("artifacts-bad");
  ::setenv("G2C_ARTIFACTS_DIR", root.c_str(), /*overwrite=*/1);
  CHECK_THROWS_WITH(g2c::pretraining::load_model_artifact("ShakespeareLM"),
                    Contains("10_pretrain") && Contains("ShakespeareLM"));
  g2c::pretraining::ModelArtifactInfo info;
  info.name = "Tiny";
  const auto folder = g2c::pretraining::save_model_artifact(info, model_with_seed(0));

  // A config.json that no longer matches model.pt: D 16 instead of 8.
  const auto saved_config = g2c::read_file(folder / "config.json");
  auto config = nlohmann::json::parse(saved_config);
  config["model_config"]["embedding_dim"] = 16;
  g2c::write_json_atomic(folder / "config.json", config);
  CHECK_THROWS_AS(g2c::pretraining::load_model_artifact("Tiny"), g2c::ValueError);
  CHECK_THROWS_WITH(g2c::pretraining::load_model_artifact("Tiny"),
                    Contains("config.json") && Contains("\"embedding_dim\":16") &&
                        Contains("\"embedding_dim\":8") && Contains("do not belong together"));
  g2c::write_file_atomic(folder / "config.json", saved_config);

  // The manifest's copy is held to model.pt too: another vocab_size, then another width.
  const auto saved_manifest = g2c::read_file(folder / "manifest.json");
  auto manifest = nlohmann::json::parse(saved_manifest);
  manifest["vocab_size"] = 13;
  g2c::write_json_atomic(folder / "manifest.json", manifest);
  CHECK_THROWS_WITH(g2c::pretraining::load_model_artifact("Tiny"),
                    Contains("manifest.json") && Contains("(vocab_size 13)") &&
                        Contains("(vocab_size 12)") && Contains("do not belong together"));
  manifest = nlohmann::json::parse(saved_manifest);
  manifest["model_config"]["num_heads"] = 1;
  g2c::write_json_atomic(folder / "manifest.json", manifest);
  CHECK_THROWS_WITH(g2c::pretraining::load_model_artifact("Tiny"),
                    Contains("manifest.json") && Contains("\"num_heads\":1"));
  g2c::write_file_atomic(folder / "manifest.json", saved_manifest);
  CHECK_NOTHROW(g2c::pretraining::load_model_artifact("Tiny"));

  // A model.pt whose model_config no longer matches its parameters: shapes, naming both (with
  // no other description beside it: no config.json, a manifest without its copy).
  auto weights = python_layout(
      model_with_seed(0),
      {{"embedding_dim", 16}, {"num_layers", 1}, {"num_heads", 2}, {"max_seq_len", 16}});
  g2c::write_archive(folder / "model.pt", weights);
  std::filesystem::remove(folder / "config.json");
  manifest = nlohmann::json::parse(saved_manifest);
  manifest.erase("model_config");
  g2c::write_json_atomic(folder / "manifest.json", manifest);
  CHECK_THROWS_WITH(g2c::pretraining::load_model_artifact("Tiny"),
                    Contains("(12, 8)") && Contains("(12, 16)") && Contains("parameter 0"));

  // The keys of an older g2c build (vocab_size inside model_config; a LibTorch archive).
  weights = python_layout(model_with_seed(0), {{"vocab_size", 12},
                                               {"embedding_dim", 8},
                                               {"num_layers", 1},
                                               {"num_heads", 2},
                                               {"max_seq_len", 16}});
  g2c::write_archive(folder / "model.pt", weights);
  CHECK_THROWS_WITH(g2c::pretraining::load_model_artifact("Tiny"),
                    Contains("unknown key 'vocab_size'") && Contains("beside model_config"));
  torch::serialize::OutputArchive old_format;
  old_format.write("param_0", torch::zeros({2}));
  old_format.save_to((folder / "model.pt").string());
  CHECK_THROWS_WITH(g2c::pretraining::load_model_artifact("Tiny"),
                    Contains("cannot read model file") && Contains("older g2c build"));
  ::unsetenv("G2C_ARTIFACTS_DIR");
  std::filesystem::remove_all(root);
}

// A run that never evaluated (13_sft --steps 30, say) saves final_val_loss as null; every reader
// of the manifest takes it, and a manifest field of the wrong type is refused by name.
TEST_CASE("model_artifact_without_evaluation_loads_and_describes_itself", "[artifact]") {
  const auto root = temporary_folder("artifacts-unevaluated");
  ::setenv("G2C_ARTIFACTS_DIR", root.c_str(), /*overwrite=*/1);
  TrainingHistory history;
  history.step = {0, 1, 2};
  history.train_loss = {2.5, 2.4, 2.3};
  history.lr = {1e-3, 1e-3, 1e-3};
  history.grad_norm = {0.0, 0.0, 0.0};
  g2c::pretraining::ModelArtifactInfo info;
  info.name = "Tiny-SFT";
  info.history = history;  // no val_step, no val_loss
  info.base_artifact = "Tiny";
  const auto folder = g2c::pretraining::save_model_artifact(info, model_with_seed(0));
  const auto manifest = nlohmann::json::parse(g2c::read_file(folder / "manifest.json"));
  REQUIRE(manifest["final_val_loss"].is_null());
  REQUIRE(manifest["seed"].is_null());

  auto artifact = g2c::pretraining::load_model_artifact("Tiny-SFT");
  CHECK(artifact.summary.name == "Tiny-SFT");
  CHECK(artifact.summary.steps_completed == 3);
  CHECK(artifact.summary.final_train_loss == 2.3);
  CHECK_FALSE(artifact.summary.final_val_loss.has_value());
  CHECK(artifact.summary.base_artifact == "Tiny");
  CHECK(artifact.summary.tokenizer_artifact.empty());
  const auto line = g2c::pretraining::describe_model_artifact(artifact);
  CHECK_THAT(line,
             Contains("Tiny-SFT") && Contains("trained 3 steps") && Contains("not evaluated"));

  // The model generates: a greedy continuation of three tokens through the loaded weights.
  torch::NoGradGuard no_grad;
  auto ids = torch::tensor({{1, 2, 3}}, torch::kLong);
  for (int t = 0; t < 3; ++t) {
    const auto next = artifact.model->forward(ids).select(1, -1).argmax(-1, /*keepdim=*/true);
    ids = torch::cat({ids, next}, 1);
  }
  CHECK(ids.size(1) == 6);
  CHECK(ids.max().item<std::int64_t>() < 12);

  // Evaluated: the loss is in the line.
  auto evaluated = manifest;
  evaluated["final_val_loss"] = 2.25;
  g2c::pretraining::ModelArtifact with_loss;
  with_loss.model = artifact.model;
  with_loss.summary = g2c::pretraining::read_manifest_summary(evaluated, "manifest.json");
  CHECK_THAT(g2c::pretraining::describe_model_artifact(with_loss),
             Contains("validation loss 2.250"));
  // A field of the wrong type is refused, naming the file, the key and the value.
  auto damaged = manifest;
  damaged["steps_completed"] = "three";
  CHECK_THROWS_AS(g2c::pretraining::read_manifest_summary(damaged, folder / "manifest.json"),
                  g2c::ValueError);
  CHECK_THROWS_WITH(
      g2c::pretraining::read_manifest_summary(damaged, folder / "manifest.json"),
      Contains("manifest.json") && Contains("'steps_completed'") && Contains("\"three\""));
  ::unsetenv("G2C_ARTIFACTS_DIR");
  std::filesystem::remove_all(root);
}

// --- artifacts by name (artifact_names.h) -----------------------------------------------------

namespace {

void mark_saved(const fs::path& models_dir, const std::string& name) {
  for (const auto* file : {"model.pt", "config.json", "manifest.json"}) {
    g2c::write_file_atomic(models_dir / name / file, "{}");
  }
}

}  // namespace

TEST_CASE("artifact_names_resolve_tiers_aliases_and_families", "[artifacts]") {
  using g2c::pretraining::resolve_artifact_name;
  const auto models = temporary_folder("artifact-names") / "models";
  mark_saved(models, "StoryLM-5M");
  mark_saved(models, "StoryLM-30M-base");
  mark_saved(models, "StoryLM-30M");
  mark_saved(models, "StoryLM-5M-SFT");
  mark_saved(models, "StoryLM-30M-SFT");
  g2c::write_file_atomic(models / "StoryLM-100M" / "model.pt", "{}");  // incomplete: not saved

  CHECK(resolve_artifact_name("StoryLM-Small", models) == "StoryLM-5M");      // alias -> bare name
  CHECK(resolve_artifact_name("StoryLM-30M", models) == "StoryLM-30M-base");  // -base first
  CHECK(resolve_artifact_name("StoryLM-5M-SFT", models) == "StoryLM-5M-SFT");
  // A family without a size: the largest of that stage; among base models, -base preferred.
  CHECK(resolve_artifact_name("StoryLM-SFT", models) == "StoryLM-30M-SFT");
  CHECK(resolve_artifact_name("StoryLM", models) == "StoryLM-30M-base");
  CHECK_THROWS_AS(resolve_artifact_name("StoryLM-DPO", models), g2c::FileNotFoundError);
  CHECK_THROWS_WITH(resolve_artifact_name("TinyLLM-30M", models), Contains("TinyLLM-30M"));
  CHECK_THROWS_AS(resolve_artifact_name("", models), g2c::ValueError);

  CHECK(g2c::pretraining::canonical_model_name("TinyLLM") == "TinyLLM-30M");
  CHECK(g2c::pretraining::canonical_model_name("StoryLM-5M-base") == "StoryLM-5M-base");
  const auto ranked = g2c::pretraining::available_model_artifacts(models);
  REQUIRE(ranked.size() == 2);
  CHECK(ranked.front().name == "StoryLM-5M");
  CHECK(ranked.back().name == "StoryLM-30M-base");
  CHECK(ranked.back().canonical_name == "StoryLM-30M");
}
