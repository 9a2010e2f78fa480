// Module 16 course tests: the backend interface and its benchmark, one for one with the Python
// edition's tests/test_inference.py (so far its backend-independent part: the data types and
// benchmark; the in-process and HTTP backends come with them). Each test is named
// "<Class>::<name>" (the Python method without "test_"). Tests tagged [clean] pass on the scaffold:
// the data types are provided. The benchmark tests use a backend that returns scripted results, so
// they need nothing but this module. Plain C++, no LibTorch.
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
  CHECK_THROWS_WITH(BackendInfo("local", "x", Json::array()), Contains("extra"));
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
  CHECK_THROWS_WITH(result_with(-1, 1, 1.0), Contains("prompt_tokens"));
}

TEST_CASE("TestInferenceResultBoilerplate::negative_completion_tokens_rejected", "[clean]") {
  CHECK_THROWS_WITH(result_with(1, -1, 1.0), Contains("completion_tokens"));
}

TEST_CASE("TestInferenceResultBoilerplate::none_token_counts_allowed", "[clean]") {
  const auto r = result_with(std::nullopt, std::nullopt, 1.0);
  CHECK_FALSE(r.prompt_tokens.has_value());
  CHECK_FALSE(r.completion_tokens.has_value());
}

TEST_CASE("TestInferenceResultTokensPerSecond::computed_correctly", "[clean]") {
  // 100 tokens in 500 ms: 200 tokens/s.
  CHECK(result_with(10, 100, 500.0).tokens_per_second().value() == Approx(200.0));
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
  CHECK(benchmark(backend, {"x", "y", "z"}).latency_ms_total == Approx(60.0));
}

TEST_CASE("TestBenchmark::latency_mean") {
  FakeBackend backend({{"a", 10.0, 1, 1}, {"b", 20.0, 1, 1}, {"c", 30.0, 1, 1}});
  CHECK(benchmark(backend, {"x", "y", "z"}).latency_ms_mean == Approx(20.0));
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
  CHECK(benchmark(backend, {"x", "y", "z"}).tokens_per_second_overall.value() == Approx(1000.0));
}

TEST_CASE("TestBenchmark::completion_tokens_total_none_when_any_missing") {
  FakeBackend backend({{"a", 10.0, 1, 5}, {"b", 10.0, 1, std::nullopt}, {"c", 10.0, 1, 7}});
  const auto out = benchmark(backend, {"x", "y", "z"});
  CHECK_FALSE(out.completion_tokens_total.has_value());
  CHECK_FALSE(out.tokens_per_second_overall.has_value());
}

TEST_CASE("TestBenchmark::per_request_tokens_per_second") {
  // 5 tokens in 10 ms: 500 tokens/s; 10 tokens in 10 ms: 1000.
  FakeBackend backend({{"a", 10.0, 1, 5}, {"b", 10.0, 1, 10}});
  const auto out = benchmark(backend, {"x", "y"});
  REQUIRE(out.per_request_tokens_per_second.size() == 2);
  CHECK(out.per_request_tokens_per_second[0].value() == Approx(500.0));
  CHECK(out.per_request_tokens_per_second[1].value() == Approx(1000.0));
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
  CHECK(out.latency_ms_mean == Approx(42.0));
  CHECK(out.latency_ms_p50 == Approx(42.0));
  CHECK(out.latency_ms_p90 == Approx(42.0));
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
  CHECK_THROWS_WITH(ChatResult(kMessages, "", Json::array(), 0, 0, -1.0, BackendInfo("o", "x")),
                    Contains("latency_ms"));
}

TEST_CASE("TestChatResultBoilerplate::negative_prompt_tokens_rejected", "[clean]") {
  CHECK_THROWS_WITH(ChatResult(kMessages, "", Json::array(), -1, 0, 0.0, BackendInfo("o", "x")),
                    Contains("prompt_tokens"));
}
