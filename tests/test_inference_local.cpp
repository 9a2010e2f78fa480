// Module 16 course tests, continued: the backends over models of this process
// (LocalTransformerBackend, ArtifactBackend), the artifact selection and the ProdLM helpers, one
// for one with the Python edition's tests of them (tests/test_inference.py). Joins test_inference
// where LibTorch is built. The backend's generate function is replaced by a fake that records its
// arguments and returns a scripted sequence (the Python tests monkeypatch
// g2c.inference.local.generate), so complete() can be written before modules 09 and 11 are; only
// TestLocalTransformerBackendRealSmoke runs a real TransformerLM, BPE tokenizer and generate(), and
// so needs modules 04, 09 and 11 as well.
#include <filesystem>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <torch/torch.h>

#include "g2c/core/atomic_file.h"
#include "g2c/core/errors.h"
#include "g2c/inference/inference.h"
#include "g2c/tokenizer/bpe.h"
#include "g2c/tokenizer/text_tokenizer.h"
#include "g2c/transformer/transformer_lm.h"
#include "g2c_test.h"
#include "torch_test.h"

using Catch::Matchers::Contains;
using g2c::inference::CompletionOptions;
using g2c::inference::InferenceResult;
using g2c::inference::LocalBackendOptions;
using g2c::inference::LocalTransformerBackend;
using g2c::inference::TextCodec;
using Ids = std::vector<std::int64_t>;

namespace {

/// One id per byte: encode("hi") == {104, 105}; decode turns ids back into bytes.
class CharCodec : public TextCodec {
 public:
  Ids encode(std::string_view text) const override {
    Ids ids;
    for (unsigned char c : text) ids.push_back(c);
    return ids;
  }
  std::string decode(const Ids& ids) const override {
    std::string text;
    for (auto id : ids) text.push_back(static_cast<char>(id));
    return text;
  }
};

/// A module with one parameter (so it has a device) and nothing to compute: generate is faked.
struct TinyModel : g2c::nn::Module {
  TinyModel() { register_parameter("dummy", torch::zeros({1})); }
};

/// What the fake generate was called with.
struct GenerateCall {
  bool called = false;
  torch::Tensor prompt_ids;
  std::int64_t max_new_tokens = 0;
  g2c::sampling::GenerateOptions options;
};

/// A generate function that records its call in `call` and returns `full` (prompt and new ids).
g2c::inference::GenerateFunction scripted_generate(Ids full, std::shared_ptr<GenerateCall> call) {
  return [full, call](g2c::nn::Module&, const torch::Tensor& prompt_ids, std::int64_t max_new,
                      const g2c::sampling::GenerateOptions& options) {
    call->called = true;
    call->prompt_ids = prompt_ids;
    call->max_new_tokens = max_new;
    call->options = options;
    return torch::tensor(full, torch::kLong);
  };
}

LocalTransformerBackend make(Ids full, std::shared_ptr<GenerateCall> call = nullptr,
                             std::optional<std::int64_t> eos_id = std::nullopt,
                             std::string model_id = "t") {
  if (call == nullptr) call = std::make_shared<GenerateCall>();
  return LocalTransformerBackend(std::make_shared<TinyModel>(), std::make_shared<CharCodec>(),
                                 LocalBackendOptions()
                                     .with_model_id(std::move(model_id))
                                     .with_eos_id(eos_id)
                                     .with_generate(scripted_generate(std::move(full), call)));
}

CompletionOptions max_new(std::int64_t n) {
  return CompletionOptions().with_max_new_tokens(n);
}

/// Whether backend.complete(42) compiles.
template <typename B>
concept CompletesANumber = requires(B& backend) {
  backend.complete(42);
};

/// A fresh, empty folder of artifacts (pytest's tmp_path, as artifacts/models).
std::filesystem::path temporary_models_dir(const std::string& name) {
  const auto folder = std::filesystem::temp_directory_path() /
                      ("g2c-test-inference-" + name + "-" + std::to_string(::getpid())) / "models";
  std::filesystem::remove_all(folder.parent_path());
  std::filesystem::create_directories(folder);
  return folder;
}

/// The three files that make a folder count as a saved artifact (their contents are not read).
void write_artifact_marker(const std::filesystem::path& models_dir, const std::string& name) {
  g2c::write_file_atomic(models_dir / name / "model.pt", "placeholder");
  g2c::write_file_atomic(models_dir / name / "config.json", "{}");
  g2c::write_file_atomic(models_dir / name / "manifest.json", "{}");
}

/// CharCodec that knows "<|end|>" (id 4) and records what it was asked to encode for which
/// vocabulary size.
class VocabAwareCodec : public CharCodec {
 public:
  Ids encode_with_vocab_size(std::string_view text, std::int64_t vocab_size) const override {
    calls.emplace_back(std::string(text), vocab_size);
    return encode(text);
  }
  std::optional<std::int64_t> special_id(std::string_view token) const override {
    return token == "<|end|>" ? std::optional<std::int64_t>(4) : std::nullopt;
  }
  mutable std::vector<std::pair<std::string, std::int64_t>> calls;
};

/// A class with decode but no encode: not a TextCodec.
struct DecodeOnly {
  std::string decode(const Ids&) const { return ""; }
};

}  // namespace

// --- the ProdLM helpers (provided) -------------------------------------------------------------

using g2c::inference::BackendChoice;
using g2c::inference::OllamaBackend;
using g2c::inference::ProdLMManifest;
using g2c::inference::ProdLMOptions;

TEST_CASE("TestProdLMHelpers::constants", "[clean]") {
  CHECK(std::string(g2c::inference::PRODLM_NAME) == "ProdLM");
  CHECK(std::string(g2c::inference::PRODLM_KIND) == "ollama_backend");
  CHECK(std::string(g2c::inference::DEFAULT_PRODLM_MODEL_ID) == "llama3.2:3b");
}

TEST_CASE("TestProdLMHelpers::write_manifest", "[clean]") {
  const auto models = temporary_models_dir("prodlm-write");
  const auto root =
      g2c::inference::write_prodlm_manifest(ProdLMManifest()
                                                .with_model_id("qwen2.5:7b-instruct")
                                                .with_base_url("http://localhost:11434")
                                                .with_timeout(45.0)
                                                .with_models_dir(models)
                                                .with_notes("test manifest"));
  const auto config = nlohmann::json::parse(g2c::read_file(root / "config.json"));
  const auto manifest = nlohmann::json::parse(g2c::read_file(root / "manifest.json"));
  CHECK(config["kind"] == g2c::inference::PRODLM_KIND);
  CHECK(config["backend"] == "ollama");
  CHECK(config["model_id"] == "qwen2.5:7b-instruct");
  CHECK(config["timeout"].get<double>() == py_approx(45.0));
  CHECK(manifest["name"] == g2c::inference::PRODLM_NAME);
  CHECK(manifest["role"] == "ProdLM");
  CHECK(g2c::inference::prodlm_manifest_exists(models));
}

TEST_CASE("TestProdLMHelpers::load_prodlm_backend_reads_manifest", "[clean]") {
  const auto models = temporary_models_dir("prodlm-read");
  g2c::inference::write_prodlm_manifest(ProdLMManifest()
                                            .with_model_id("mistral:7b-instruct")
                                            .with_base_url("http://test-host:11434")
                                            .with_timeout(60.0)
                                            .with_models_dir(models));
  const auto backend = g2c::inference::load_prodlm_backend(ProdLMOptions().with_models_dir(models));
  REQUIRE(backend != nullptr);
  CHECK(backend->info().name() == "prodlm");
  CHECK(backend->info().model_id() == "mistral:7b-instruct");
  CHECK(backend->base_url() == "http://test-host:11434");
  CHECK(backend->info().extra()["configured_name"] == g2c::inference::PRODLM_NAME);
}

TEST_CASE("TestProdLMHelpers::load_default_backend_prefers_prodlm_manifest", "[clean]") {
  const auto models = temporary_models_dir("prodlm-default");
  g2c::inference::write_prodlm_manifest(
      ProdLMManifest().with_model_id("llama3.2:1b").with_models_dir(models));
  const auto backend =
      g2c::inference::load_default_backend("auto", BackendChoice().with_models_dir(models));
  REQUIRE(dynamic_cast<const OllamaBackend*>(backend.get()) != nullptr);
  CHECK(backend->info().name() == "prodlm");
  CHECK(backend->info().model_id() == "llama3.2:1b");
}

TEST_CASE("TestProdLMHelpers::load_prodlm_backend_required_without_manifest", "[clean]") {
  const auto models = temporary_models_dir("prodlm-required");
  CHECK_THROWS_AS(g2c::inference::load_prodlm_backend(
                      ProdLMOptions().with_models_dir(models).with_required(true)),
                  g2c::FileNotFoundError);
}

TEST_CASE("TestProdLMHelpers::load_selected_backend_prodlm_optional_without_manifest", "[clean]") {
  const auto models = temporary_models_dir("prodlm-optional");
  CHECK(g2c::inference::load_selected_backend(
            "ProdLM", BackendChoice().with_models_dir(models).with_required(false)) == nullptr);
}

TEST_CASE("TestProdLMHelpers::load_selected_backend_prodlm_model_id_override", "[clean]") {
  const auto models = temporary_models_dir("prodlm-override");
  const auto backend =
      g2c::inference::load_selected_backend("ProdLM", BackendChoice()
                                                          .with_models_dir(models)
                                                          .with_prodlm_model_id("llama3.2:1b")
                                                          .with_required(false));
  REQUIRE(dynamic_cast<const OllamaBackend*>(backend.get()) != nullptr);
  CHECK(backend->info().model_id() == "llama3.2:1b");
}

// --- which saved artifact a selection means (provided) -----------------------------------------

using g2c::inference::resolve_preferred_artifact_name;

TEST_CASE("TestArtifactSelection::resolve_preferred_artifact_name_prefers_dpo_then_sft_then_base",
          "[clean]") {
  const auto models = temporary_models_dir("select-dpo");
  write_artifact_marker(models, "StoryLM-5M");
  write_artifact_marker(models, "StoryLM-5M-SFT");
  write_artifact_marker(models, "StoryLM-5M-DPO");
  CHECK(resolve_preferred_artifact_name("StoryLM-5M", models) == "StoryLM-5M-DPO");
}

TEST_CASE("TestArtifactSelection::resolve_preferred_artifact_name_falls_back_to_sft", "[clean]") {
  const auto models = temporary_models_dir("select-sft");
  write_artifact_marker(models, "StoryLM-5M");
  write_artifact_marker(models, "StoryLM-5M-SFT");
  CHECK(resolve_preferred_artifact_name("StoryLM-5M", models) == "StoryLM-5M-SFT");
}

TEST_CASE("TestArtifactSelection::resolve_preferred_name_course_means_strongest_course_dpo",
          "[clean]") {
  const auto models = temporary_models_dir("select-course-dpo");
  write_artifact_marker(models, "StoryLM-5M-DPO");
  write_artifact_marker(models, "TinyLLM-30M-DPO");
  write_artifact_marker(models, "BaseLM-DPO");
  CHECK(resolve_preferred_artifact_name("course", models) == "TinyLLM-30M-DPO");
}

TEST_CASE("TestArtifactSelection::resolve_preferred_artifact_name_course_falls_back_to_sft",
          "[clean]") {
  const auto models = temporary_models_dir("select-course-sft");
  write_artifact_marker(models, "StoryLM-5M-SFT");
  write_artifact_marker(models, "TinyLLM-30M-SFT");
  CHECK(resolve_preferred_artifact_name("course", models) == "TinyLLM-30M-SFT");
}

TEST_CASE("TestArtifactSelection::resolve_preferred_artifact_name_course_falls_back_to_base",
          "[clean]") {
  const auto models = temporary_models_dir("select-course-base");
  write_artifact_marker(models, "StoryLM-5M-base");
  write_artifact_marker(models, "TinyLLM-30M-base");
  CHECK(resolve_preferred_artifact_name("course", models) == "TinyLLM-30M-base");
}

TEST_CASE("TestArtifactSelection::resolve_preferred_artifact_name_course_ignores_baselm",
          "[clean]") {
  const auto models = temporary_models_dir("select-course-baselm");
  write_artifact_marker(models, "BaseLM-DPO");
  CHECK_THROWS_AS(resolve_preferred_artifact_name("course", models), g2c::FileNotFoundError);
}

// --- ArtifactBackend (provided; its complete() is yours) ----------------------------------------

TEST_CASE("TestArtifactBackend::wraps_artifact_metadata_and_eos") {
  auto tokenizer = std::make_shared<VocabAwareCodec>();
  g2c::inference::LoadedModelArtifact artifact;
  artifact.name = "TinyLLM-DPO";
  artifact.canonical_name = "TinyLLM-30M";
  artifact.display_name = "TinyLLM 30M DPO";
  artifact.rank = 40;
  artifact.dir = temporary_models_dir("artifact-backend");
  artifact.model = std::make_shared<TinyModel>();
  artifact.vocab_size = 256;
  artifact.tokenizer = tokenizer;
  artifact.manifest = {{"source", "test artifact"}, {"kind", "course_transformer"}};
  const auto model = artifact.model;

  auto call = std::make_shared<GenerateCall>();
  g2c::inference::ArtifactBackend backend(artifact,
                                          g2c::inference::ArtifactBackendOptions().with_generate(
                                              scripted_generate({'h', 'i', '!'}, call)));
  const auto result = backend.complete("hi", max_new(1));

  REQUIRE(call->called);
  CHECK(call->options.eos_id() == 4);
  CHECK(result.completion == "!");
  CHECK(result.backend.name() == "artifact");
  CHECK(result.backend.model_id() == "TinyLLM-DPO");
  CHECK(result.backend.extra()["canonical_name"] == "TinyLLM-30M");
  CHECK(result.backend.extra()["source"] == "test artifact");
  CHECK(result.metadata["eos_id"] == 4);
  CHECK(tokenizer->calls == std::vector<std::pair<std::string, std::int64_t>>{{"hi", 256}});
  CHECK(backend.artifact().model.get() == model.get());
  CHECK(backend.raw_tokenizer().get() == tokenizer.get());
}

// --- the constructor and info (provided) -------------------------------------------------------

TEST_CASE("TestLocalTransformerBackendBoilerplate::construction_defaults", "[clean]") {
  const auto model = std::make_shared<TinyModel>();
  const auto codec = std::make_shared<CharCodec>();
  const LocalTransformerBackend backend(model, codec);
  CHECK(backend.info().name() == "local");
  CHECK(backend.info().model_id() == "g2c-local");
  CHECK(backend.info().extra() == nlohmann::json::object());
  CHECK(backend.model().get() == model.get());
  CHECK(backend.tokenizer().get() == codec.get());
}

TEST_CASE("TestLocalTransformerBackendBoilerplate::construction_with_overrides", "[clean]") {
  const LocalTransformerBackend backend(std::make_shared<TinyModel>(),
                                        std::make_shared<CharCodec>(),
                                        LocalBackendOptions()
                                            .with_model_id("my-checkpoint-20m")
                                            .with_eos_id(255)
                                            .with_extra({{"dtype", "fp32"}, {"device", "mps"}}));
  CHECK(backend.info().model_id() == "my-checkpoint-20m");
  CHECK(backend.info().extra()["dtype"] == "fp32");
  CHECK(backend.info().extra()["device"] == "mps");
  CHECK(backend.eos_id() == 255);
}

TEST_CASE("TestLocalTransformerBackendBoilerplate::none_model_rejected", "[clean]") {
  CHECK_THROWS_AS(LocalTransformerBackend(nullptr, std::make_shared<CharCodec>()), g2c::ValueError);
  CHECK_THROWS_WITH(LocalTransformerBackend(nullptr, std::make_shared<CharCodec>()),
                    Contains("model"));
}

TEST_CASE("TestLocalTransformerBackendBoilerplate::none_tokenizer_rejected", "[clean]") {
  CHECK_THROWS_MATCHES(LocalTransformerBackend(std::make_shared<TinyModel>(), nullptr),
                       g2c::ValueError, MessageContains("tokenizer"));
}

TEST_CASE("TestLocalTransformerBackendBoilerplate::tokenizer_without_encode_rejected", "[clean]") {
  // Only a TextCodec (encode and decode) is a tokenizer here: a class with decode alone does not
  // compile as one.
  STATIC_REQUIRE_FALSE(std::is_constructible_v<LocalTransformerBackend, std::shared_ptr<TinyModel>,
                                               std::shared_ptr<DecodeOnly>>);
  STATIC_REQUIRE(std::is_abstract_v<TextCodec>);
}

TEST_CASE("TestLocalTransformerBackendBoilerplate::non_int_eos_id_rejected", "[clean]") {
  // The end id is an integer or nothing; a word does not compile as one.
  STATIC_REQUIRE_FALSE(std::is_assignable_v<decltype(LocalBackendOptions::eos_id)&, const char*>);
  STATIC_REQUIRE(
      std::is_same_v<decltype(LocalBackendOptions::eos_id), std::optional<std::int64_t>>);
}

TEST_CASE("TestLocalTransformerBackendBoilerplate::repr", "[clean]") {
  const LocalTransformerBackend backend(std::make_shared<TinyModel>(),
                                        std::make_shared<CharCodec>(),
                                        LocalBackendOptions().with_model_id("abc"));
  std::ostringstream text;
  text << backend;
  CHECK_THAT(text.str(), Contains("LocalTransformerBackend"));
  CHECK_THAT(text.str(), Contains("abc"));
}

// --- complete (your work) ----------------------------------------------------------------------

TEST_CASE("TestLocalTransformerBackendComplete::returns_inference_result") {
  // "hi" encodes to {104, 105}; the fake generate appends 33 ("!").
  auto backend = make({104, 105, 33});
  const InferenceResult result = backend.complete("hi", max_new(1));
  CHECK(result.completion == "!");
}

TEST_CASE("TestLocalTransformerBackendComplete::completion_excludes_prompt") {
  auto backend = make({97, 98, 99, 100, 101});  // "ab" then "cde"
  const auto result = backend.complete("ab", max_new(3));
  CHECK(result.completion == "cde");
  CHECK(result.prompt == "ab");
}

TEST_CASE("TestLocalTransformerBackendComplete::token_counts") {
  auto backend = make({'h', 'e', 'l', 'l', 'o', 33, 34, 35});
  const auto result = backend.complete("hello", max_new(3));
  CHECK(result.prompt_tokens == 5);
  CHECK(result.completion_tokens == 3);
}

TEST_CASE("TestLocalTransformerBackendComplete::latency_is_positive") {
  auto backend = make({104, 105, 33});
  CHECK(backend.complete("hi", max_new(1)).latency_ms >= 0.0);
}

TEST_CASE("TestLocalTransformerBackendComplete::backend_field_carries_info") {
  auto backend = make({104, 105, 33}, nullptr, std::nullopt, "my-tag");
  const auto result = backend.complete("hi", max_new(1));
  CHECK(result.backend.model_id() == "my-tag");
  CHECK(result.backend.name() == "local");
}

TEST_CASE("TestLocalTransformerBackendComplete::metadata_contains_sampling") {
  auto backend = make({104, 105, 33});
  const auto result =
      backend.complete("hi", max_new(4).with_temperature(0.7).with_top_k(40).with_top_p(0.95));
  const auto sampling = result.metadata.value("sampling", nlohmann::json::object());
  CHECK(sampling.value("max_new_tokens", 0) == 4);
  CHECK(sampling.value("temperature", 0.0) == 0.7);
  CHECK(sampling.value("top_k", 0) == 40);
  CHECK(sampling.value("top_p", 0.0) == 0.95);
}

TEST_CASE("TestLocalTransformerBackendComplete::metadata_records_eos_id") {
  auto backend = make({104, 105, 33}, nullptr, 255);
  const auto result = backend.complete("hi", max_new(4));
  CHECK(result.metadata.value("eos_id", -1) == 255);
}

TEST_CASE("TestLocalTransformerBackendComplete::generate_receives_sampling_args") {
  auto call = std::make_shared<GenerateCall>();
  auto backend = make({104, 105, 33}, call, 42);
  backend.complete("hi", max_new(8).with_temperature(0.5).with_top_k(20).with_top_p(0.9));
  REQUIRE(call->called);
  CHECK(call->max_new_tokens == 8);
  CHECK(call->options.temperature() == 0.5);
  CHECK(call->options.top_k() == 20);
  CHECK(call->options.top_p() == 0.9);
  CHECK(call->options.eos_id() == 42);
}

TEST_CASE("TestLocalTransformerBackendComplete::prompt_tensor_is_one_dim") {
  auto call = std::make_shared<GenerateCall>();
  auto backend = make({104, 105, 33}, call);
  backend.complete("hi", max_new(1));
  REQUIRE(call->called);
  CHECK(call->prompt_ids.dim() == 1);
  CHECK(call->prompt_ids.scalar_type() == torch::kLong);
  CHECK(call->prompt_ids.size(0) == 2);
}

TEST_CASE("TestLocalTransformerBackendValidation::empty_prompt_rejected") {
  auto call = std::make_shared<GenerateCall>();
  auto backend = make({1}, call);
  CHECK_THROWS_AS(backend.complete("", max_new(1)), g2c::ValueError);
  CHECK_FALSE(call->called);  // refused before generating
}

TEST_CASE("TestLocalTransformerBackendValidation::zero_max_new_tokens_rejected") {
  auto backend = make({104, 105});
  CHECK_THROWS_AS(backend.complete("hi", max_new(0)), g2c::ValueError);
}

TEST_CASE("TestLocalTransformerBackendValidation::negative_max_new_tokens_rejected") {
  auto call = std::make_shared<GenerateCall>();
  auto backend = make({104, 105}, call);
  CHECK_THROWS_AS(backend.complete("hi", max_new(-5)), g2c::ValueError);
  CHECK_FALSE(call->called);
}

TEST_CASE("TestLocalTransformerBackendValidation::non_str_prompt_rejected") {
  // A number is no prompt: the call does not compile. What complete() must refuse at run time
  // are prompts that reach it as text but say nothing.
  STATIC_REQUIRE_FALSE(CompletesANumber<LocalTransformerBackend>);
  auto call = std::make_shared<GenerateCall>();
  auto backend = make({1}, call);
  CHECK_THROWS_AS(backend.complete(std::string(), max_new(1)), g2c::ValueError);
  CHECK_FALSE(call->called);
}

// --- end to end: modules 04, 09 and 11 as well -------------------------------------------------

TEST_CASE("TestLocalTransformerBackendRealSmoke::real_pipeline_smoke") {
  torch::manual_seed(0);
  auto bpe = std::make_shared<g2c::tokenizer::BPETokenizer>();
  std::string corpus;
  for (int i = 0; i < 50; ++i) corpus += "aabbccdd ";
  bpe->train(corpus, 300);
  auto codec = std::make_shared<g2c::inference::TextTokenizerCodec>(
      g2c::tokenizer::TextTokenizer::from_bpe(bpe, std::nullopt));
  auto model = std::make_shared<g2c::transformer::TransformerLMImpl>(300, 8, 1, 2, 32);
  model->eval();
  LocalTransformerBackend backend(model, codec, LocalBackendOptions().with_model_id("smoke-test"));
  const auto result = backend.complete("ab", max_new(4).with_temperature(0.0));
  CHECK(result.prompt == "ab");
  REQUIRE(result.prompt_tokens.has_value());
  CHECK(*result.prompt_tokens >= 1);
  REQUIRE(result.completion_tokens.has_value());
  CHECK(*result.completion_tokens >= 0);
  CHECK(*result.completion_tokens <= 4);
  CHECK(result.latency_ms >= 0.0);
}

// --- the module's interface --------------------------------------------------------------------

TEST_CASE("TestModuleExports::public_api_imports", "[clean]") {
  // One include (g2c/inference/inference.h) gives every name later modules use; a name missing
  // from it is a compile error here.
  namespace inf = g2c::inference;
  STATIC_REQUIRE(std::is_abstract_v<inf::Backend>);
  STATIC_REQUIRE(std::is_base_of_v<inf::LocalTransformerBackend, inf::ArtifactBackend>);
  STATIC_REQUIRE(std::is_base_of_v<inf::Backend, inf::LocalTransformerBackend>);
  STATIC_REQUIRE(std::is_base_of_v<inf::Backend, inf::OllamaBackend>);
  STATIC_REQUIRE(std::is_base_of_v<std::exception, inf::OllamaError>);
  STATIC_REQUIRE(std::is_invocable_v<decltype(&inf::load_artifact_backend),
                                     std::optional<std::string>, inf::ArtifactLoadOptions>);
  STATIC_REQUIRE(
      std::is_invocable_v<decltype(&inf::load_default_backend), std::string, inf::BackendChoice>);
  STATIC_REQUIRE(std::is_invocable_v<decltype(&inf::load_prodlm_backend), inf::ProdLMOptions>);
  STATIC_REQUIRE(
      std::is_invocable_v<decltype(&inf::load_selected_backend), std::string, inf::BackendChoice>);
  STATIC_REQUIRE(std::is_invocable_v<decltype(&inf::resolve_preferred_artifact_name), std::string,
                                     std::filesystem::path>);
  STATIC_REQUIRE(std::is_invocable_v<decltype(&inf::write_prodlm_manifest), inf::ProdLMManifest>);
  CHECK(std::string(inf::DEFAULT_OLLAMA_URL).starts_with("http://"));
  CHECK_FALSE(std::string(inf::DEFAULT_PRODLM_MODEL_ID).empty());
  CHECK(std::string(inf::PRODLM_NAME) == "ProdLM");
  const inf::BackendInfo info("local", "x");
  CHECK(info.name() == "local");
  const inf::ChatResult chat(nlohmann::json::array(), "hi", nlohmann::json::array(), 1, 1, 1.0,
                             info);
  CHECK(chat.content == "hi");
  CHECK(chat.tool_calls.empty());
  CHECK(inf::BenchmarkResult(info).n == 0);
}
