// Module 16 course tests: the backend interface, one for one with the Python edition's
// tests/test_inference.py — so far the data types, benchmark, OllamaBackend and (in
// test_inference_local.cpp, where LibTorch is built) LocalTransformerBackend; artifact selection
// and the ProdLM helpers are still to come. Each test is named "<Class>::<name>" (the Python
// method without "test_"). Tests tagged [clean] pass on the scaffold: the data types,
// chat_with_tools and is_thinking_model are provided. The benchmark tests use a backend that
// returns scripted results and the Ollama tests a transport that stands in for the server (the
// Python tests' fake urlopen), so they need no model and no server. Plain C++, no LibTorch.
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "g2c/core/errors.h"
#include "g2c/inference/backend.h"
#include "g2c/inference/benchmark.h"
#include "g2c/inference/ollama.h"
#include "g2c_test.h"

using Catch::Matchers::Contains;
using g2c::inference::Backend;
using g2c::inference::BackendInfo;
using g2c::inference::benchmark;
using g2c::inference::BenchmarkResult;
using g2c::inference::ChatResult;
using g2c::inference::CompletionOptions;
using g2c::inference::InferenceResult;
using Json = nlohmann::json;
using Count = std::optional<std::int64_t>;

namespace {

/// A backend that returns scripted results (completion, latency_ms, prompt_tokens,
/// completion_tokens) in order and records every call; one call past the script throws.
class FakeBackend : public Backend {
 public:
  using Scripted = std::tuple<std::string, double, Count, Count>;
  explicit FakeBackend(std::vector<Scripted> scripted,
                       BackendInfo info = BackendInfo("fake", "fake-1"))
      : scripted_(std::move(scripted)), info_(std::move(info)) {}

  const BackendInfo& info() const override { return info_; }

  InferenceResult complete(const std::string& prompt, const CompletionOptions& options) override {
    calls.push_back({prompt, options});
    if (next_ >= scripted_.size()) throw std::runtime_error("FakeBackend script exhausted");
    const auto& [completion, latency_ms, prompt_tokens, completion_tokens] = scripted_[next_++];
    return InferenceResult(prompt, completion, prompt_tokens, completion_tokens, latency_ms, info_);
  }

  struct Call {
    std::string prompt;
    CompletionOptions options;
  };
  std::vector<Call> calls;

 private:
  std::vector<Scripted> scripted_;
  std::size_t next_ = 0;
  BackendInfo info_;
};

InferenceResult result_with(Count prompt_tokens, Count completion_tokens, double latency_ms) {
  return InferenceResult("p", "c", prompt_tokens, completion_tokens, latency_ms,
                         BackendInfo("local", "x"));
}

BenchmarkResult benchmark_result(std::int64_t n, Count tokens, std::optional<double> throughput) {
  BenchmarkResult result{BackendInfo("x", "y")};
  result.n = n;
  result.latency_ms_total = 10.0;
  result.latency_ms_mean = result.latency_ms_p50 = result.latency_ms_p90 = 10.0;
  result.completion_tokens_total = tokens;
  result.tokens_per_second_overall = throughput;
  result.per_request_latency_ms = {10.0};
  result.per_request_tokens_per_second = {throughput};
  return result;
}

std::string text_of(const BenchmarkResult& result) {
  std::ostringstream stream;
  stream << result;
  return stream.str();
}

const Json kMessages = Json::array({{{"role", "user"}, {"content", "hi"}}});

}  // namespace

// --- BackendInfo -------------------------------------------------------------------------------

TEST_CASE("TestBackendInfoBoilerplate::construction_minimal", "[clean]") {
  const BackendInfo info("local", "g2c-tiny");
  CHECK(info.name() == "local");
  CHECK(info.model_id() == "g2c-tiny");
  CHECK(info.extra() == Json::object());
}

TEST_CASE("TestBackendInfoBoilerplate::construction_with_extra", "[clean]") {
  const BackendInfo info("ollama", "llama3.2:3b",
                         {{"base_url", "http://localhost:11434"}, {"quant", "Q4_K_M"}});
  CHECK(info.extra()["base_url"] == "http://localhost:11434");
  CHECK(info.extra()["quant"] == "Q4_K_M");
}

TEST_CASE("TestBackendInfoBoilerplate::default_extra_is_independent_dict", "[clean]") {
  // Value semantics: what is done to one info's extra (here, a copy of it) never shows in another.
  const BackendInfo a("a", "x"), b("b", "y");
  auto extra = a.extra();
  extra["key"] = "value";
  CHECK_FALSE(a.extra().contains("key"));
  CHECK_FALSE(b.extra().contains("key"));
}

TEST_CASE("TestBackendInfoBoilerplate::frozen_blocks_field_reassignment", "[clean]") {
  // Frozen: the fields are read through const references, and there is no setter.
  const BackendInfo info("local", "x");
  STATIC_REQUIRE(std::is_const_v<std::remove_reference_t<decltype(info.name())>>);
  STATIC_REQUIRE(std::is_const_v<std::remove_reference_t<decltype(BackendInfo("a", "b").name())>>);
  CHECK(info.name() == "local");
}

TEST_CASE("TestBackendInfoBoilerplate::empty_name_rejected", "[clean]") {
  CHECK_THROWS_AS(BackendInfo("", "x"), g2c::ValueError);
  CHECK_THROWS_WITH(BackendInfo("", "x"), Contains("name"));
}

TEST_CASE("TestBackendInfoBoilerplate::empty_model_id_rejected", "[clean]") {
  CHECK_THROWS_AS(BackendInfo("local", ""), g2c::ValueError);
  CHECK_THROWS_WITH(BackendInfo("local", ""), Contains("model_id"));
}

TEST_CASE("TestBackendInfoBoilerplate::non_str_name_rejected", "[clean]") {
  // A number is no name: it does not even compile. What can reach the constructor at run time is a
  // JSON value that is not an object as `extra`, refused by name.
  STATIC_REQUIRE_FALSE(std::is_constructible_v<BackendInfo, int, std::string>);
  CHECK_THROWS_MATCHES(BackendInfo("local", "x", Json::array()), g2c::ValueError,
                       MessageContains("extra"));
}

TEST_CASE("TestBackendInfoBoilerplate::equality_by_value", "[clean]") {
  CHECK(BackendInfo("local", "x") == BackendInfo("local", "x"));
}

TEST_CASE("TestBackendInfoBoilerplate::equality_includes_extra", "[clean]") {
  CHECK(BackendInfo("local", "x", {{"k", "v"}}) != BackendInfo("local", "x", {{"k", "w"}}));
}

// --- InferenceResult ---------------------------------------------------------------------------

TEST_CASE("TestInferenceResultBoilerplate::construction_full", "[clean]") {
  const InferenceResult r("hi", " world", 2, 6, 42.0, BackendInfo("local", "x"));
  CHECK(r.prompt == "hi");
  CHECK(r.completion == " world");
  CHECK(r.prompt_tokens == 2);
  CHECK(r.completion_tokens == 6);
  CHECK(r.latency_ms == 42.0);
  CHECK(r.metadata == Json::object());
}

TEST_CASE("TestInferenceResultBoilerplate::metadata_default_independent", "[clean]") {
  auto a = result_with(1, 1, 1.0);
  const auto b = result_with(1, 1, 1.0);
  a.metadata["k"] = "v";
  CHECK_FALSE(b.metadata.contains("k"));
}

TEST_CASE("TestInferenceResultBoilerplate::negative_latency_rejected", "[clean]") {
  CHECK_THROWS_AS(result_with(1, 1, -0.001), g2c::ValueError);
  CHECK_THROWS_WITH(result_with(1, 1, -0.001), Contains("latency_ms"));
}

TEST_CASE("TestInferenceResultBoilerplate::negative_prompt_tokens_rejected", "[clean]") {
  CHECK_THROWS_MATCHES(result_with(-1, 1, 1.0), g2c::ValueError, MessageContains("prompt_tokens"));
}

TEST_CASE("TestInferenceResultBoilerplate::negative_completion_tokens_rejected", "[clean]") {
  CHECK_THROWS_MATCHES(result_with(1, -1, 1.0), g2c::ValueError,
                       MessageContains("completion_tokens"));
}

TEST_CASE("TestInferenceResultBoilerplate::none_token_counts_allowed", "[clean]") {
  const auto r = result_with(std::nullopt, std::nullopt, 1.0);
  CHECK_FALSE(r.prompt_tokens.has_value());
  CHECK_FALSE(r.completion_tokens.has_value());
}

TEST_CASE("TestInferenceResultTokensPerSecond::computed_correctly", "[clean]") {
  // 100 tokens in 500 ms: 200 tokens/s.
  CHECK(result_with(10, 100, 500.0).tokens_per_second().value() == py_approx(200.0));
}

TEST_CASE("TestInferenceResultTokensPerSecond::returns_none_when_completion_tokens_none",
          "[clean]") {
  CHECK_FALSE(result_with(10, std::nullopt, 500.0).tokens_per_second().has_value());
}

TEST_CASE("TestInferenceResultTokensPerSecond::returns_none_when_completion_tokens_zero",
          "[clean]") {
  CHECK_FALSE(result_with(10, 0, 500.0).tokens_per_second().has_value());
}

TEST_CASE("TestInferenceResultTokensPerSecond::returns_none_when_latency_zero", "[clean]") {
  CHECK_FALSE(result_with(10, 100, 0.0).tokens_per_second().has_value());
}

// --- Backend -----------------------------------------------------------------------------------

TEST_CASE("TestBackendABC::cannot_instantiate_directly", "[clean]") {
  STATIC_REQUIRE(std::is_abstract_v<Backend>);
}

TEST_CASE("TestBackendABC::concrete_subclass_works", "[clean]") {
  FakeBackend fake({{"hi", 1.0, 1, 1}});
  Backend& backend = fake;
  CHECK(backend.info().name() == "fake");
  CHECK(backend.complete("x").completion == "hi");
}

// --- BenchmarkResult ---------------------------------------------------------------------------

TEST_CASE("TestBenchmarkResultBoilerplate::construction", "[clean]") {
  auto result = benchmark_result(2, 20, 200.0);
  CHECK(result.n == 2);
  CHECK(result.metadata == Json::object());
  CHECK(result.results.empty());
}

TEST_CASE("TestBenchmarkResultBoilerplate::repr_compact", "[clean]") {
  const auto text = text_of(benchmark_result(1, 5, 500.0));
  CHECK_THAT(text, Contains("BenchmarkResult"));
  CHECK_THAT(text, Contains("n=1"));
  CHECK_THAT(text, Contains("500.00"));
}

TEST_CASE("TestBenchmarkResultBoilerplate::repr_handles_none_throughput", "[clean]") {
  CHECK_THAT(text_of(benchmark_result(1, std::nullopt, std::nullopt)), Contains("—"));
}

// --- benchmark (your work) ---------------------------------------------------------------------

TEST_CASE("TestBenchmark::returns_benchmark_result") {
  FakeBackend backend({{"x", 10.0, 1, 5}});
  const BenchmarkResult out = benchmark(backend, {"hi"});
  CHECK(out.n == 1);
}

TEST_CASE("TestBenchmark::n_matches_prompt_count") {
  FakeBackend backend({{"a", 1.0, 1, 1}, {"b", 1.0, 1, 1}, {"c", 1.0, 1, 1}});
  const auto out = benchmark(backend, {"x", "y", "z"});
  CHECK(out.n == 3);
  CHECK(out.results.size() == 3);
}

TEST_CASE("TestBenchmark::iterates_in_order") {
  FakeBackend backend({{"a", 1.0, 1, 1}, {"b", 1.0, 1, 1}, {"c", 1.0, 1, 1}});
  benchmark(backend, {"p1", "p2", "p3"});
  REQUIRE(backend.calls.size() == 3);
  CHECK(backend.calls[0].prompt == "p1");
  CHECK(backend.calls[1].prompt == "p2");
  CHECK(backend.calls[2].prompt == "p3");
}

TEST_CASE("TestBenchmark::forwards_sampling_kwargs") {
  FakeBackend backend({{"a", 1.0, 1, 1}});
  benchmark(
      backend, {"hi"},
      CompletionOptions().with_max_new_tokens(64).with_temperature(0.7).with_top_k(40).with_top_p(
          0.95));
  REQUIRE(backend.calls.size() == 1);
  const auto& options = backend.calls[0].options;
  CHECK(options.max_new_tokens == 64);
  CHECK(options.temperature == 0.7);
  CHECK(options.top_k == 40);
  CHECK(options.top_p == 0.95);
}

TEST_CASE("TestBenchmark::latency_total_is_sum") {
  FakeBackend backend({{"a", 10.0, 1, 1}, {"b", 20.0, 1, 1}, {"c", 30.0, 1, 1}});
  CHECK(benchmark(backend, {"x", "y", "z"}).latency_ms_total == py_approx(60.0));
}

TEST_CASE("TestBenchmark::latency_mean") {
  FakeBackend backend({{"a", 10.0, 1, 1}, {"b", 20.0, 1, 1}, {"c", 30.0, 1, 1}});
  CHECK(benchmark(backend, {"x", "y", "z"}).latency_ms_mean == py_approx(20.0));
}

TEST_CASE("TestBenchmark::per_request_latency_in_order") {
  FakeBackend backend({{"a", 1.0, 1, 1}, {"b", 2.0, 1, 1}, {"c", 3.0, 1, 1}});
  CHECK(benchmark(backend, {"x", "y", "z"}).per_request_latency_ms ==
        std::vector<double>{1.0, 2.0, 3.0});
}

TEST_CASE("TestBenchmark::completion_tokens_total") {
  FakeBackend backend({{"a", 10.0, 1, 5}, {"b", 10.0, 1, 7}, {"c", 10.0, 1, 13}});
  CHECK(benchmark(backend, {"x", "y", "z"}).completion_tokens_total == 25);
}

TEST_CASE("TestBenchmark::tokens_per_second_overall") {
  // 30 tokens in 30 ms: 1000 tokens/s.
  FakeBackend backend({{"a", 10.0, 1, 10}, {"b", 10.0, 1, 10}, {"c", 10.0, 1, 10}});
  CHECK(benchmark(backend, {"x", "y", "z"}).tokens_per_second_overall.value() == py_approx(1000.0));
}

// Requests of different speeds, where the two readings of "overall" part: 20 tokens in 100 ms is
// 200 tokens/s, while the mean of the per-request rates (1000 and 111) is 556. The Python tests use
// equal requests, where both formulas agree.
TEST_CASE("TestBenchmark::tokens_per_second_overall_is_a_ratio_of_sums") {
  FakeBackend backend({{"a", 10.0, 1, 10}, {"b", 90.0, 1, 10}});
  const auto out = benchmark(backend, {"x", "y"});
  INFO(
      "benchmark: tokens_per_second_overall = completion_tokens_total / (latency_ms_total / "
      "1000), the whole run's tokens over the whole run's time, not the mean of the per-request "
      "rates (a slow request would count as much as a fast one)");
  REQUIRE(out.tokens_per_second_overall.has_value());
  CHECK(*out.tokens_per_second_overall == py_approx(200.0));
}

TEST_CASE("TestBenchmark::completion_tokens_total_none_when_any_missing") {
  FakeBackend backend({{"a", 10.0, 1, 5}, {"b", 10.0, 1, std::nullopt}, {"c", 10.0, 1, 7}});
  const auto out = benchmark(backend, {"x", "y", "z"});
  INFO(
      "benchmark: one request whose completion_tokens is unknown (nullopt) makes the totals "
      "unknown: leave completion_tokens_total and tokens_per_second_overall unset rather than "
      "count it as 0 tokens");
  CHECK_FALSE(out.completion_tokens_total.has_value());
  CHECK_FALSE(out.tokens_per_second_overall.has_value());
}

TEST_CASE("TestBenchmark::per_request_tokens_per_second") {
  // 5 tokens in 10 ms: 500 tokens/s; 10 tokens in 10 ms: 1000.
  FakeBackend backend({{"a", 10.0, 1, 5}, {"b", 10.0, 1, 10}});
  const auto out = benchmark(backend, {"x", "y"});
  REQUIRE(out.per_request_tokens_per_second.size() == 2);
  CHECK(out.per_request_tokens_per_second[0].value() == py_approx(500.0));
  CHECK(out.per_request_tokens_per_second[1].value() == py_approx(1000.0));
}

TEST_CASE("TestBenchmark::backend_field_propagates") {
  FakeBackend backend({{"a", 1.0, 1, 1}}, BackendInfo("my_kind", "my_id"));
  const auto out = benchmark(backend, {"hi"});
  CHECK(out.backend.name() == "my_kind");
  CHECK(out.backend.model_id() == "my_id");
}

TEST_CASE("TestBenchmark::metadata_copied_not_referenced") {
  FakeBackend backend({{"a", 1.0, 1, 1}});
  Json metadata = {{"suite", "tinyqa-v1"}};
  const auto out = benchmark(backend, {"hi"}, CompletionOptions(), metadata);
  metadata["suite"] = "MUTATED";
  CHECK(out.metadata.value("suite", std::string()) == "tinyqa-v1");
}

TEST_CASE("TestBenchmarkEdgeCases::empty_prompts_rejected") {
  FakeBackend backend({});
  CHECK_THROWS_AS(benchmark(backend, {}), g2c::ValueError);
}

TEST_CASE("TestBenchmarkEdgeCases::single_prompt_percentiles_collapse") {
  FakeBackend backend({{"a", 42.0, 1, 5}});
  const auto out = benchmark(backend, {"hi"});
  CHECK(out.latency_ms_mean == py_approx(42.0));
  CHECK(out.latency_ms_p50 == py_approx(42.0));
  CHECK(out.latency_ms_p90 == py_approx(42.0));
}

TEST_CASE("TestBenchmarkEdgeCases::p90_above_p50_for_skewed_latencies") {
  // Nine fast calls and one slow one: the median stays fast, the 90th percentile sees the tail.
  std::vector<FakeBackend::Scripted> scripted(9, {"c", 1.0, 1, 1});
  scripted.emplace_back("c", 100.0, 1, 1);
  FakeBackend backend(scripted);
  const auto out = benchmark(backend, std::vector<std::string>(10, "x"));
  CHECK(out.latency_ms_p50 < out.latency_ms_p90);
}

// --- ChatResult --------------------------------------------------------------------------------

TEST_CASE("TestChatResultBoilerplate::construction", "[clean]") {
  const ChatResult r(kMessages, "hello back", Json::array(), 4, 2, 123.0,
                     BackendInfo("ollama", "x:1"));
  CHECK(r.content == "hello back");
  CHECK(r.tool_calls == Json::array());
  CHECK(r.messages == kMessages);
}

TEST_CASE("TestChatResultBoilerplate::negative_latency_rejected", "[clean]") {
  CHECK_THROWS_MATCHES(ChatResult(kMessages, "", Json::array(), 0, 0, -1.0, BackendInfo("o", "x")),
                       g2c::ValueError, MessageContains("latency_ms"));
}

TEST_CASE("TestChatResultBoilerplate::negative_prompt_tokens_rejected", "[clean]") {
  CHECK_THROWS_MATCHES(ChatResult(kMessages, "", Json::array(), -1, 0, 0.0, BackendInfo("o", "x")),
                       g2c::ValueError, MessageContains("prompt_tokens"));
}

// --- OllamaBackend -----------------------------------------------------------------------------

namespace {

using g2c::inference::ChatOptions;
using g2c::inference::DEFAULT_OLLAMA_URL;
using g2c::inference::HttpRequest;
using g2c::inference::HttpResponse;
using g2c::inference::is_thinking_model;
using g2c::inference::NetworkError;
using g2c::inference::OllamaBackend;
using g2c::inference::OllamaError;
using g2c::inference::OllamaOptions;

/// A transport standing in for the server (the Python tests' fake urlopen): it records each
/// request and its timeout, then refuses the connection, answers `raw` as it is, or answers
/// `answer` as JSON with `status`.
struct FakeServer {
  FakeServer() = default;
  explicit FakeServer(Json answer_) : answer(std::move(answer_)) {}

  Json answer = Json::object();
  std::optional<std::string> raw;
  int status = 200;
  bool refuse = false;
  std::vector<std::pair<HttpRequest, double>> captured;

  g2c::inference::HttpTransport transport() {
    return [this](const HttpRequest& request, double timeout) {
      captured.emplace_back(request, timeout);
      if (refuse) throw NetworkError("Connection refused");
      return HttpResponse{status, raw ? *raw : answer.dump()};
    };
  }
  Json body(std::size_t call = 0) const { return Json::parse(captured.at(call).first.body); }
};

Json ok_response(const std::string& response = "Hello!", std::int64_t prompt_eval_count = 4,
                 std::int64_t eval_count = 7, std::int64_t total_duration = 1'500'000'000,
                 std::int64_t eval_duration = 1'300'000'000) {
  return {{"model", "x:1"},
          {"response", response},
          {"done", true},
          {"prompt_eval_count", prompt_eval_count},
          {"eval_count", eval_count},
          {"total_duration", total_duration},
          {"eval_duration", eval_duration}};
}

Json ok_chat_response(const std::string& content = "hi back",
                      std::optional<Json> tool_calls = std::nullopt,
                      std::int64_t prompt_eval_count = 6, std::int64_t eval_count = 9,
                      std::int64_t total_duration = 1'200'000'000,
                      std::int64_t eval_duration = 1'000'000'000) {
  Json message = {{"role", "assistant"}, {"content", content}};
  if (tool_calls) message["tool_calls"] = *tool_calls;
  return {{"model", "x:1"},
          {"message", message},
          {"done", true},
          {"prompt_eval_count", prompt_eval_count},
          {"eval_count", eval_count},
          {"total_duration", total_duration},
          {"eval_duration", eval_duration}};
}

OllamaBackend backend_for(FakeServer& server, const std::string& model = "x:1",
                          OllamaOptions options = {}) {
  return OllamaBackend(model, options.with_transport(server.transport()));
}

std::string text_of(const OllamaBackend& backend) {
  std::ostringstream stream;
  stream << backend;
  return stream.str();
}

const Json kQuestion = Json::array({{{"role", "user"}, {"content", "What is 12 * 9?"}}});

Json calculator_spec() {
  return {{"type", "function"},
          {"function",
           {{"name", "calculator"},
            {"description", "Evaluate an arithmetic expression."},
            {"parameters",
             {{"type", "object"},
              {"properties", {{"expression", {{"type", "string"}}}}},
              {"required", {"expression"}}}}}}};
}

}  // namespace

TEST_CASE("TestOllamaBackendBoilerplate::construction_defaults", "[clean]") {
  const OllamaBackend backend;
  CHECK(backend.info().name() == "ollama");
  CHECK(backend.info().model_id() == "llama3.2:3b");
  CHECK(backend.base_url() == DEFAULT_OLLAMA_URL);
  CHECK(backend.info().extra()["base_url"] == DEFAULT_OLLAMA_URL);
}

TEST_CASE("TestOllamaBackendBoilerplate::construction_explicit", "[clean]") {
  const OllamaBackend backend(
      "qwen2.5:7b", OllamaOptions().with_base_url("http://example.com:8080/").with_timeout(30.0));
  CHECK(backend.base_url() == "http://example.com:8080");  // the trailing slash dropped
  CHECK(backend.info().model_id() == "qwen2.5:7b");
  CHECK(backend.timeout() == 30.0);
}

TEST_CASE("TestOllamaBackendBoilerplate::extra_merged", "[clean]") {
  const OllamaBackend backend("x:1", OllamaOptions().with_extra({{"quant", "Q4_K_M"}}));
  CHECK(backend.info().extra()["base_url"] == DEFAULT_OLLAMA_URL);
  CHECK(backend.info().extra()["quant"] == "Q4_K_M");
}

TEST_CASE("TestOllamaBackendBoilerplate::empty_model_id_rejected", "[clean]") {
  CHECK_THROWS_AS(OllamaBackend(""), g2c::ValueError);
}

TEST_CASE("TestOllamaBackendBoilerplate::empty_base_url_rejected", "[clean]") {
  CHECK_THROWS_AS(OllamaBackend("x:1", OllamaOptions().with_base_url("")), g2c::ValueError);
}

TEST_CASE("TestOllamaBackendBoilerplate::zero_timeout_rejected", "[clean]") {
  CHECK_THROWS_AS(OllamaBackend("x:1", OllamaOptions().with_timeout(0.0)), g2c::ValueError);
}

TEST_CASE("TestOllamaBackendBoilerplate::negative_timeout_rejected", "[clean]") {
  CHECK_THROWS_AS(OllamaBackend("x:1", OllamaOptions().with_timeout(-1.0)), g2c::ValueError);
}

TEST_CASE("TestOllamaBackendBoilerplate::repr", "[clean]") {
  const auto text = text_of(OllamaBackend("foo:bar"));
  CHECK_THAT(text, Contains("OllamaBackend"));
  CHECK_THAT(text, Contains("foo:bar"));
}

TEST_CASE("TestOllamaBackendBoilerplate::default_constant_value", "[clean]") {
  CHECK(std::string(DEFAULT_OLLAMA_URL) == "http://localhost:11434");
}

// --- OllamaBackend::complete (your work) -------------------------------------------------------

TEST_CASE("TestOllamaBackendComplete::returns_inference_result") {
  FakeServer server{ok_response()};
  auto backend = backend_for(server);
  const InferenceResult result = backend.complete("hello world");
  CHECK(result.prompt == "hello world");
}

TEST_CASE("TestOllamaBackendComplete::completion_text") {
  FakeServer server{ok_response("42")};
  auto backend = backend_for(server);
  const auto result = backend.complete("hi", CompletionOptions().with_max_new_tokens(4));
  CHECK(result.completion == "42");
  CHECK(result.prompt == "hi");
}

TEST_CASE("TestOllamaBackendComplete::token_counts") {
  FakeServer server{ok_response("Hello!", 12, 24)};
  auto backend = backend_for(server);
  const auto result = backend.complete("hi", CompletionOptions().with_max_new_tokens(24));
  CHECK(result.prompt_tokens == 12);
  CHECK(result.completion_tokens == 24);
}

TEST_CASE("TestOllamaBackendComplete::token_counts_missing_yield_none") {
  // A server may leave the counts out (an answer served from its cache): unknown, not zero.
  FakeServer server{{{"response", "ok"}, {"done", true}}};
  auto backend = backend_for(server);
  const auto result = backend.complete("hi");
  CHECK_FALSE(result.prompt_tokens.has_value());
  CHECK_FALSE(result.completion_tokens.has_value());
}

TEST_CASE("TestOllamaBackendComplete::latency_recorded") {
  FakeServer server{ok_response()};
  auto backend = backend_for(server);
  CHECK(backend.complete("hi").latency_ms >= 0.0);
}

TEST_CASE("TestOllamaBackendComplete::backend_field_carries_info") {
  FakeServer server{ok_response()};
  auto backend = backend_for(server, "foo:bar");
  const auto result = backend.complete("hi");
  CHECK(result.backend.name() == "ollama");
  CHECK(result.backend.model_id() == "foo:bar");
}

TEST_CASE("TestOllamaBackendComplete::request_url_is_api_generate") {
  FakeServer server{ok_response()};
  auto backend = backend_for(server, "x:1", OllamaOptions().with_base_url("http://test:99"));
  backend.complete("hi");
  REQUIRE(server.captured.size() == 1);
  CHECK(server.captured[0].first.url == "http://test:99/api/generate");
}

TEST_CASE("TestOllamaBackendComplete::request_method_is_post") {
  FakeServer server{ok_response()};
  auto backend = backend_for(server);
  backend.complete("hi");
  REQUIRE(server.captured.size() == 1);
  CHECK(server.captured[0].first.method == "POST");
}

TEST_CASE("TestOllamaBackendComplete::request_body_includes_required_fields") {
  FakeServer server{ok_response()};
  auto backend = backend_for(server, "foo:1");
  backend.complete("the prompt", CompletionOptions().with_max_new_tokens(42).with_temperature(0.5));
  REQUIRE(server.captured.size() == 1);
  const auto body = server.body();
  CHECK(body["model"] == "foo:1");
  CHECK(body["prompt"] == "the prompt");
  CHECK(body["stream"] == false);
  CHECK(body["options"]["num_predict"] == 42);
  CHECK(body["options"]["temperature"] == 0.5);
}

TEST_CASE("TestOllamaBackendComplete::request_content_type_header") {
  FakeServer server{ok_response()};
  auto backend = backend_for(server);
  backend.complete("hi");
  REQUIRE(server.captured.size() == 1);
  const auto& headers = server.captured[0].first.headers;
  REQUIRE(headers.count("Content-Type") == 1);
  CHECK(headers.at("Content-Type") == "application/json");
}

TEST_CASE("TestOllamaBackendComplete::metadata_includes_server_durations") {
  FakeServer server{ok_response("Hello!", 4, 7, 2'000'000'000, 1'500'000'000)};
  auto backend = backend_for(server);
  const auto result = backend.complete("hi");
  CHECK(result.metadata.value("server_total_duration_ms", -1.0) == py_approx(2000.0));
  CHECK(result.metadata.value("server_eval_duration_ms", -1.0) == py_approx(1500.0));
}

TEST_CASE("TestOllamaBackendComplete::metadata_includes_sampling") {
  FakeServer server{ok_response()};
  auto backend = backend_for(server);
  const auto result = backend.complete(
      "hi",
      CompletionOptions().with_max_new_tokens(20).with_temperature(0.3).with_top_k(10).with_top_p(
          0.95));
  const auto sampling = result.metadata.value("sampling", Json::object());
  CHECK(sampling.value("max_new_tokens", 0) == 20);
  CHECK(sampling.value("temperature", 0.0) == 0.3);
  CHECK(sampling.value("top_k", 0) == 10);
  CHECK(sampling.value("top_p", 0.0) == 0.95);
}

TEST_CASE("TestOllamaBackendComplete::timeout_is_passed_through") {
  FakeServer server{ok_response()};
  auto backend = backend_for(server, "x:1", OllamaOptions().with_timeout(37.5));
  backend.complete("hi");
  REQUIRE(server.captured.size() == 1);
  CHECK(server.captured[0].second == 37.5);
}

TEST_CASE("TestOllamaBackendOptionsHandling::top_k_omitted_when_none") {
  FakeServer server{ok_response()};
  auto backend = backend_for(server);
  backend.complete("hi");
  REQUIRE(server.captured.size() == 1);
  const auto options = server.body()["options"];
  CHECK_FALSE(options.contains("top_k"));
  CHECK_FALSE(options.contains("top_p"));
}

TEST_CASE("TestOllamaBackendOptionsHandling::top_k_included_when_set") {
  FakeServer server{ok_response()};
  auto backend = backend_for(server);
  backend.complete("hi", CompletionOptions().with_top_k(20).with_top_p(0.9));
  REQUIRE(server.captured.size() == 1);
  const auto options = server.body()["options"];
  CHECK(options.value("top_k", 0) == 20);
  CHECK(options.value("top_p", 0.0) == py_approx(0.9));
}

TEST_CASE("TestOllamaBackendValidation::empty_prompt_rejected") {
  FakeServer server{ok_response()};
  auto backend = backend_for(server);
  CHECK_THROWS_AS(backend.complete(""), g2c::ValueError);
  CHECK(server.captured.empty());
}

TEST_CASE("TestOllamaBackendValidation::zero_max_new_tokens_rejected") {
  FakeServer server{ok_response()};
  auto backend = backend_for(server);
  CHECK_THROWS_AS(backend.complete("hi", CompletionOptions().with_max_new_tokens(0)),
                  g2c::ValueError);
}

TEST_CASE("TestOllamaBackendErrorPaths::url_error_wrapped") {
  FakeServer server;
  server.refuse = true;
  auto backend = backend_for(server);
  bool nested_network_error = false;
  try {
    backend.complete("hi");
    FAIL("expected an OllamaError");
  } catch (const OllamaError& error) {
    CHECK_THAT(error.what(), Contains("Could not reach Ollama"));
    try {
      std::rethrow_if_nested(error);
    } catch (const NetworkError&) {
      nested_network_error = true;  // the cause travels with it
    }
  }
  CHECK(nested_network_error);
}

TEST_CASE("TestOllamaBackendErrorPaths::http_error_wrapped") {
  FakeServer server;
  server.status = 500;
  server.raw = "Internal Server Error";
  auto backend = backend_for(server);
  CHECK_THROWS_AS(backend.complete("hi"), OllamaError);
  CHECK_THROWS_WITH(backend.complete("hi"), Contains("500"));
}

TEST_CASE("TestOllamaBackendErrorPaths::bad_json_wrapped") {
  FakeServer server;
  server.raw = "not valid json {{{";
  auto backend = backend_for(server);
  CHECK_THROWS_AS(backend.complete("hi"), OllamaError);
}

TEST_CASE("TestOllamaBackendErrorPaths::missing_response_field_wrapped") {
  FakeServer server{{{"done", true}}};
  auto backend = backend_for(server);
  CHECK_THROWS_AS(backend.complete("hi"), OllamaError);
  CHECK_THROWS_WITH(backend.complete("hi"), Contains("response"));
}

// --- OllamaBackend::chat_with_tools (provided) -------------------------------------------------

TEST_CASE("TestOllamaBackendChatWithTools::returns_chat_result", "[clean]") {
  FakeServer server{ok_chat_response()};
  const ChatResult result =
      backend_for(server).chat_with_tools(kQuestion, Json::array({calculator_spec()}));
  CHECK(result.content == "hi back");
  CHECK(result.tool_calls == Json::array());
}

TEST_CASE("TestOllamaBackendChatWithTools::request_url_is_api_chat", "[clean]") {
  FakeServer server{ok_chat_response()};
  backend_for(server, "x:1", OllamaOptions().with_base_url("http://test:99"))
      .chat_with_tools(kQuestion, Json::array({calculator_spec()}));
  REQUIRE(server.captured.size() == 1);
  CHECK(server.captured[0].first.url == "http://test:99/api/chat");
  CHECK(server.captured[0].first.method == "POST");
}

TEST_CASE("TestOllamaBackendChatWithTools::request_body_includes_messages_and_tools", "[clean]") {
  FakeServer server{ok_chat_response()};
  backend_for(server).chat_with_tools(kQuestion, Json::array({calculator_spec()}),
                                      ChatOptions().with_max_new_tokens(20).with_temperature(0.1));
  const auto body = server.body();
  CHECK(body["model"] == "x:1");
  CHECK(body["messages"] == kQuestion);
  CHECK(body["stream"] == false);
  CHECK(body["options"]["num_predict"] == 20);
  CHECK(body["options"]["temperature"] == 0.1);
  CHECK(body["tools"] == Json::array({calculator_spec()}));
}

TEST_CASE("TestOllamaBackendChatWithTools::omits_tools_key_when_none_or_empty", "[clean]") {
  FakeServer server{ok_chat_response()};
  auto backend = backend_for(server);
  backend.chat_with_tools(kQuestion, nullptr);
  CHECK_FALSE(server.body(0).contains("tools"));
  backend.chat_with_tools(kQuestion, Json::array());
  CHECK_FALSE(server.body(1).contains("tools"));
}

TEST_CASE("TestOllamaBackendChatWithTools::think_false_in_body_when_set", "[clean]") {
  FakeServer server{ok_chat_response()};
  backend_for(server).chat_with_tools(kQuestion, nullptr, ChatOptions().with_think(false));
  CHECK(server.body()["think"] == false);
}

TEST_CASE("TestOllamaBackendChatWithTools::think_true_in_body_when_set", "[clean]") {
  FakeServer server{ok_chat_response()};
  backend_for(server).chat_with_tools(kQuestion, nullptr, ChatOptions().with_think(true));
  CHECK(server.body()["think"] == true);
}

TEST_CASE("TestOllamaBackendChatWithTools::think_omitted_from_body_when_none", "[clean]") {
  FakeServer server{ok_chat_response()};
  backend_for(server).chat_with_tools(kQuestion, nullptr);
  CHECK_FALSE(server.body().contains("think"));  // the server decides
}

TEST_CASE("TestOllamaBackendChatWithTools::parses_structured_tool_calls", "[clean]") {
  const Json calls = Json::array(
      {{{"function", {{"name", "calculator"}, {"arguments", {{"expression", "12 * 9"}}}}}}});
  FakeServer server{ok_chat_response("", calls)};
  const auto result =
      backend_for(server).chat_with_tools(kQuestion, Json::array({calculator_spec()}));
  CHECK(result.content.empty());
  REQUIRE(result.tool_calls.size() == 1);
  const auto& call = result.tool_calls[0];
  CHECK(call["name"] == "calculator");
  CHECK(call["arguments"] == Json({{"expression", "12 * 9"}}));
  CHECK(call["call_id"].is_string());
  CHECK_FALSE(call["call_id"].get<std::string>().empty());
}

TEST_CASE("TestOllamaBackendChatWithTools::accepts_json_encoded_arguments_string", "[clean]") {
  // Some servers and proxies send the arguments as a JSON string.
  const Json calls = Json::array(
      {{{"function", {{"name", "calculator"}, {"arguments", R"({"expression": "1 + 1"})"}}}}});
  FakeServer server{ok_chat_response("", calls)};
  const auto result =
      backend_for(server).chat_with_tools(kQuestion, Json::array({calculator_spec()}));
  REQUIRE(result.tool_calls.size() == 1);
  CHECK(result.tool_calls[0]["arguments"] == Json({{"expression", "1 + 1"}}));
}

TEST_CASE("TestOllamaBackendChatWithTools::uses_id_field_when_present", "[clean]") {
  const Json calls =
      Json::array({{{"id", "call_abc123"},
                    {"function", {{"name", "calculator"}, {"arguments", {{"expression", "1"}}}}}}});
  FakeServer server{ok_chat_response("", calls)};
  const auto result =
      backend_for(server).chat_with_tools(kQuestion, Json::array({calculator_spec()}));
  REQUIRE(result.tool_calls.size() == 1);
  CHECK(result.tool_calls[0]["call_id"] == "call_abc123");
}

TEST_CASE("TestOllamaBackendChatWithTools::skips_malformed_tool_calls", "[clean]") {
  const Json calls =
      Json::array({{{"function", {{"arguments", Json::object()}}}},                // no name
                   {{"function", {{"name", ""}, {"arguments", Json::object()}}}},  // an empty name
                   {{"function", {{"name", "calculator"}, {"arguments", {{"expression", "1"}}}}}}});
  FakeServer server{ok_chat_response("", calls)};
  const auto result =
      backend_for(server).chat_with_tools(kQuestion, Json::array({calculator_spec()}));
  REQUIRE(result.tool_calls.size() == 1);
  CHECK(result.tool_calls[0]["name"] == "calculator");
}

TEST_CASE("TestOllamaBackendChatWithTools::token_counts_and_latency", "[clean]") {
  FakeServer server{ok_chat_response("hi back", std::nullopt, 11, 22)};
  const auto result = backend_for(server).chat_with_tools(kQuestion, nullptr);
  CHECK(result.prompt_tokens == 11);
  CHECK(result.completion_tokens == 22);
  CHECK(result.latency_ms >= 0.0);
}

TEST_CASE("TestOllamaBackendChatWithTools::metadata_includes_server_durations_and_n_tools",
          "[clean]") {
  FakeServer server{ok_chat_response("hi back", std::nullopt, 6, 9, 2'000'000'000, 1'500'000'000)};
  const auto result =
      backend_for(server).chat_with_tools(kQuestion, Json::array({calculator_spec()}));
  CHECK(result.metadata["server_total_duration_ms"].get<double>() == py_approx(2000.0));
  CHECK(result.metadata["server_eval_duration_ms"].get<double>() == py_approx(1500.0));
  CHECK(result.metadata["n_tools_offered"] == 1);
}

TEST_CASE("TestOllamaBackendChatWithTools::empty_messages_rejected", "[clean]") {
  FakeServer server{ok_chat_response()};
  CHECK_THROWS_MATCHES(backend_for(server).chat_with_tools(Json::array(), nullptr), g2c::ValueError,
                       MessageContains("messages"));
}

TEST_CASE("TestOllamaBackendChatWithTools::non_list_messages_rejected", "[clean]") {
  FakeServer server{ok_chat_response()};
  CHECK_THROWS_MATCHES(backend_for(server).chat_with_tools("hi", nullptr), g2c::ValueError,
                       MessageContains("messages"));
}

TEST_CASE("TestOllamaBackendChatWithTools::nonpositive_max_new_tokens_rejected", "[clean]") {
  FakeServer server{ok_chat_response()};
  CHECK_THROWS_MATCHES(
      backend_for(server).chat_with_tools(kQuestion, nullptr, ChatOptions().with_max_new_tokens(0)),
      g2c::ValueError, MessageContains("max_new_tokens"));
}

TEST_CASE("TestOllamaBackendChatWithTools::missing_message_field_raises", "[clean]") {
  // /api/generate's shape is the wrong answer for /api/chat.
  FakeServer server{{{"done", true}, {"response", "hi"}}};
  CHECK_THROWS_AS(backend_for(server).chat_with_tools(kQuestion, nullptr), OllamaError);
  CHECK_THROWS_WITH(backend_for(server).chat_with_tools(kQuestion, nullptr), Contains("message"));
}

TEST_CASE("TestOllamaBackendChatWithTools::http_error_wrapped", "[clean]") {
  FakeServer server;
  server.status = 500;
  server.raw = "Server";
  CHECK_THROWS_MATCHES(backend_for(server).chat_with_tools(kQuestion, nullptr), OllamaError,
                       MessageContains("500"));
}

// --- is_thinking_model (provided) --------------------------------------------------------------

TEST_CASE("TestIsThinkingModel::qwen3_variants_are_thinking_models", "[clean]") {
  CHECK(is_thinking_model("qwen3:4b"));
  CHECK(is_thinking_model("qwen3:1.7b"));
  CHECK(is_thinking_model("qwen3:8b-instruct-q4_K_M"));
}

TEST_CASE("TestIsThinkingModel::deepseek_r1_is_thinking_model", "[clean]") {
  CHECK(is_thinking_model("deepseek-r1:7b"));
  CHECK(is_thinking_model("deepseek-r1:14b-q4_K_M"));
}

TEST_CASE("TestIsThinkingModel::non_thinking_models", "[clean]") {
  CHECK_FALSE(is_thinking_model("llama3.2:3b"));
  CHECK_FALSE(is_thinking_model("qwen2.5:7b-instruct"));
  CHECK_FALSE(is_thinking_model("mistral:7b"));
  CHECK_FALSE(is_thinking_model(""));
}

TEST_CASE("TestIsThinkingModel::case_insensitive", "[clean]") {
  CHECK(is_thinking_model("QWEN3:4B"));
  CHECK(is_thinking_model("DeepSeek-R1:7b"));
}

TEST_CASE("TestIsThinkingModel::non_string_input", "[clean]") {
  // Only a name can be asked about: a number does not compile, and the pretrained model's name is
  // an answer like any other.
  STATIC_REQUIRE_FALSE(std::is_invocable_v<decltype(&is_thinking_model), int>);
  CHECK_FALSE(is_thinking_model("SmolLM2-135M-Instruct"));
}
