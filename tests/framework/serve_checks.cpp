// Framework checks of g2c-serve (g2c/inference/server.h), a server started in this process on a
// free port of 127.0.0.1 and stopped at the end of each check: stop strings against hand-made
// cases; every kind of bad request answered 4xx with a JSON error; and, on the real
// SmolLM2-135M-Instruct file (skipped, visibly, without it), module 16's OllamaBackend through the
// server giving exactly the in-process backend's answer, eight clients at once each getting the
// answer it gets alone, a client that leaves — mid-stream or before a whole answer — ending its
// generation, and a client that never reads holding up no one; and a course model saved in a
// temporary folder, served as module 11's generate() continues its prompt. scripts/check_serve.py
// drives the same server with the official `ollama` and `openai` Python clients and stops it with
// SIGTERM.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "g2c/core/errors.h"
#include "g2c/inference/ollama.h"
#include "g2c/inference/pretrained_backend.h"
#include "g2c/inference/server.h"
#include "g2c/inference/stop_strings.h"
#include "g2c/pretrained/catalog.h"
#include "g2c/pretraining/model_artifact.h"
#include "g2c/sampling/generate.h"
#include "g2c/sampling/text_generation.h"
#include "g2c/tokenizer/artifacts.h"
#include "g2c/tokenizer/bpe.h"
#include "g2c/transformer/transformer_lm.h"
#include "g2c_test.h"
#include "running_server.h"

using Catch::Matchers::Contains;
using g2c::inference::Server;
using g2c::inference::ServerOptions;
using g2c::inference::StopStrings;
using json = nlohmann::json;

namespace {

const char* kName = "SmolLM2-135M-Instruct";

std::string missing_model() {
  return g2c_test::missing_pretrained_model(kName);
}

using g2c_test::RunningServer;

/// G2C_ARTIFACTS_DIR pointed at `root` while alive (where tokenizer artifacts are looked for).
class ArtifactsDir {
 public:
  explicit ArtifactsDir(const std::filesystem::path& root) {
    if (const char* old = std::getenv("G2C_ARTIFACTS_DIR")) saved_ = old;
    ::setenv("G2C_ARTIFACTS_DIR", root.c_str(), 1);
  }
  ~ArtifactsDir() {
    if (saved_) {
      ::setenv("G2C_ARTIFACTS_DIR", saved_->c_str(), 1);
    } else {
      ::unsetenv("G2C_ARTIFACTS_DIR");
    }
  }
  ArtifactsDir(const ArtifactsDir&) = delete;
  ArtifactsDir& operator=(const ArtifactsDir&) = delete;

 private:
  std::optional<std::string> saved_;
};

/// A POST's status and its body as JSON. The server's 501 (a course function on the model's path
/// is still a TODO) comes back as the NotImplementedError it was.
std::pair<int, json> post(httplib::Client& client, const std::string& path,
                          const std::string& body) {
  const auto answer = client.Post(path.c_str(), body, "application/json");
  REQUIRE(answer);
  auto parsed = json::parse(answer->body);
  if (answer->status == 501) throw g2c::NotImplementedError(parsed["error"].get<std::string>());
  return {answer->status, std::move(parsed)};
}

/// One token from the real model through the server, before a check leans on the model running:
/// in a build whose model functions are still TODOs this throws their NotImplementedError.
void require_the_model_runs(RunningServer& running) {
  auto client = running.client();
  const auto [status, body] = post(client, "/api/generate",
                                   json({{"model", kName},
                                         {"prompt", "Hi"},
                                         {"stream", false},
                                         {"options", {{"num_predict", 1}}}})
                                       .dump());
  REQUIRE(status == 200);
}

/// A socket to the server with `request` sent on it; the caller reads (or not) and closes.
int open_request(int port, const std::string& path, const std::string& body) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  const auto request = "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: " +
                       "application/json\r\nContent-Length: " + std::to_string(body.size()) +
                       "\r\n\r\n" + body;
  REQUIRE(::send(fd, request.data(), request.size(), 0) == static_cast<ssize_t>(request.size()));
  return fd;
}

/// A request for 2000 tokens, which would take half a minute.
std::string long_story(bool stream) {
  return json({{"model", kName},
               {"prompt", "Tell me a long story."},
               {"stream", stream},
               {"options", {{"num_predict", 2000}}}})
      .dump();
}

/// How many generations the server has ended for clients that left, once there is one or
/// `seconds` have passed.
std::size_t abandoned_within(RunningServer& running, int seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (running.server().generations_abandoned() == 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return running.server().generations_abandoned();
}

json chat_request(const std::string& question, std::int64_t tokens, bool stream) {
  return {{"model", kName},
          {"messages", {{{"role", "user"}, {"content", question}}}},
          {"stream", stream},
          {"options", {{"temperature", 0}, {"num_predict", tokens}}}};
}

}  // namespace

TEST_CASE("stop_strings_hold_back_a_possible_start_and_cut_at_the_first", "[serve]") {
  StopStrings stops({"\n\n", "END"});
  CHECK(stops.push("a\n") == "a");  // "\n" may begin "\n\n": held back
  CHECK(stops.push("b") == "\nb");  // it did not
  CHECK(stops.push("E") == "");     // may begin "END"
  CHECK(stops.push("Nx") == "ENx");
  CHECK(stops.push("yz\n") == "yz");
  CHECK_FALSE(stops.stopped());
  CHECK(stops.push("\nmore") == "");  // "\n\n": the text ends before it
  CHECK(stops.stopped());
  CHECK(stops.push("after") == "");
  CHECK(stops.finish() == "");

  StopStrings none({});
  CHECK(none.push("text\n") == "text\n");
  StopStrings tail({"STOP"});
  CHECK(tail.push("abcST") == "abc");
  CHECK(tail.finish() == "ST");  // no stop came: what was held back is shown
  StopStrings first({"b", "abc"});
  CHECK(first.push("xabcd") == "x");  // the stop string that starts first wins
}

TEST_CASE("serve_answers_bad_requests_with_a_4xx_json_error", "[serve]") {
  ServerOptions options;
  options.max_body_bytes = 4096;
  RunningServer running(options);
  auto client = running.client();

  auto [status, body] = post(client, "/api/generate", "{\"model\": ");
  CHECK(status == 400);
  CHECK_THAT(body["error"].get<std::string>(), Contains("not valid JSON"));

  std::tie(status, body) =
      post(client, "/api/generate", R"({"model": "NoSuchModel", "prompt": "x"})");
  CHECK(status == 404);
  CHECK_THAT(body["error"].get<std::string>(), Contains("NoSuchModel"));

  std::tie(status, body) = post(client, "/api/chat", R"({"model": "x", "messages": "hi"})");
  CHECK(status == 400);
  CHECK_THAT(body["error"].get<std::string>(), Contains("messages"));

  std::tie(status, body) = post(client, "/api/generate",
                                R"({"model": "x", "prompt": "x", "options": {"num_predict": -5}})");
  CHECK(status == 400);
  CHECK_THAT(body["error"].get<std::string>(), Contains("num_predict"));

  // A misspelt option is refused by name rather than dropped without a word.
  std::tie(status, body) = post(client, "/api/generate",
                                R"({"model": "x", "prompt": "x", "options": {"temperatur": 0}})");
  CHECK(status == 400);
  CHECK_THAT(body["error"].get<std::string>(), Contains("temperatur"));

  std::tie(status, body) =
      post(client, "/api/generate", R"({"model": "x", "prompt": "x", "stream": "yes"})");
  CHECK(status == 400);

  std::tie(status, body) = post(client, "/api/generate",
                                json({{"model", "x"}, {"prompt", std::string(10000, 'a')}}).dump());
  CHECK(status == 413);
  CHECK_THAT(body["error"].get<std::string>(), Contains("4096"));

  std::tie(status, body) =
      post(client, "/v1/chat/completions",
           R"({"model": "x", "messages": [{"role": "user", "content": "hi"}], "max_tokens": -1})");
  CHECK(status == 400);
  CHECK_THAT(body["error"]["message"].get<std::string>(), Contains("max_tokens"));

  const auto missing = client.Get("/api/nothing");
  REQUIRE(missing);
  CHECK(missing->status == 404);
  CHECK(json::parse(missing->body).contains("error"));

  if (missing_model().empty()) {
    // A prompt longer than the model's context (8192 tokens).
    std::string long_prompt;
    for (int i = 0; i < 9000; ++i) long_prompt += " word";
    ServerOptions roomy;
    roomy.max_body_bytes = 1 << 20;
    RunningServer larger(roomy);
    auto big_client = larger.client();
    std::tie(status, body) =
        post(big_client, "/api/generate", json({{"model", kName}, {"prompt", long_prompt}}).dump());
    CHECK(status == 400);
    CHECK_THAT(body["error"].get<std::string>(), Contains("context"));
  }
}

TEST_CASE("ollama_options_the_course_does_not_use_are_named_not_refused", "[serve]") {
  // Clients send settings for Ollama's runtime (threads, GPUs, memory maps) and, from older
  // versions, the model's own rotary and attention settings: answered, and each one named.
  if (const auto missing = missing_model(); !missing.empty()) G2C_SKIP(missing);
  RunningServer running;
  auto client = running.client();
  const json request = {{"model", kName},
                        {"prompt", "Hi"},
                        {"stream", false},
                        {"options",
                         {{"num_predict", 1},
                          {"num_thread", 2},
                          {"num_gqa", 8},
                          {"rope_frequency_base", 10000.0},
                          {"mirostat", 0}}}};
  const auto answer = client.Post("/api/generate", request.dump(), "application/json");
  REQUIRE(answer);
  if (answer->status == 501) throw g2c::NotImplementedError(answer->body);
  REQUIRE(answer->status == 200);
  const auto ignored = answer->get_header_value("X-G2C-Ignored-Options");
  for (const std::string name : {"num_thread", "num_gqa", "rope_frequency_base", "mirostat"}) {
    CHECK_THAT(ignored, Contains(name));
  }
}

TEST_CASE("a_conversation_longer_than_num_ctx_loses_its_oldest_turns_as_in_ollama", "[serve]") {
  if (const auto missing = missing_model(); !missing.empty()) G2C_SKIP(missing);
  // A system message, ten exchanges of about sixty tokens each, and the question: far more than
  // a context of 256 tokens.
  json messages = json::array({{{"role", "system"}, {"content", "You answer in one word."}}});
  for (int i = 0; i < 10; ++i) {
    std::string filler;
    for (int word = 0; word < 40; ++word) filler += " story" + std::to_string(i);
    messages.push_back({{"role", "user"}, {"content", "Remember this:" + filler}});
    messages.push_back({{"role", "assistant"}, {"content", "I will remember it."}});
  }
  messages.push_back({{"role", "user"}, {"content", "What is the capital of France?"}});

  // In process the backend refuses it, unless asked to leave the oldest turns out.
  auto local = g2c::inference::PretrainedBackend::load(kName);
  auto options = g2c::inference::ChatOptions();
  options.max_new_tokens = 3;
  options.temperature = 0;
  options.extras.context = 256;
  CHECK_THROWS_MATCHES(local.chat_with_tools(messages, json::array(), options), g2c::ValueError,
                       MessageContains("context 256"));
  options.extras.drop_oldest_to_fit = true;
  const auto fitted = local.chat_with_tools(messages, json::array(), options);
  CHECK(fitted.metadata["dropped_messages"].get<std::int64_t>() > 0);
  CHECK(fitted.prompt_tokens.value() < 256);

  // Ollama's protocol does the same: answered, within num_ctx.
  RunningServer running;
  auto client = running.client();
  const auto [status, body] =
      post(client, "/api/chat",
           json({{"model", kName},
                 {"messages", messages},
                 {"stream", false},
                 {"options", {{"num_ctx", 256}, {"num_predict", 3}, {"temperature", 0}}}})
               .dump());
  REQUIRE(status == 200);
  CHECK(body["prompt_eval_count"].get<std::int64_t>() == fitted.prompt_tokens.value());
}

TEST_CASE("ollama_backend_through_serve_answers_as_in_process", "[serve]") {
  if (const auto missing = missing_model(); !missing.empty()) G2C_SKIP(missing);
  RunningServer running;
  auto options = g2c::inference::CompletionOptions().with_temperature(0).with_max_new_tokens(24);
  // The server applies Ollama's defaults to what a request leaves unsaid (OllamaBackend sends the
  // four sampling settings): in this process the same answer comes with the same extras.
  options.extras = g2c::inference::GenerationExtras::ollama_defaults();
  g2c::inference::OllamaBackend remote(
      kName, g2c::inference::OllamaOptions().with_base_url(running.url()));
  auto local = g2c::inference::PretrainedBackend::load(kName);
  for (const std::string prompt : {"What is the capital of France?", "Name a colour."}) {
    const auto over_http = remote.complete(prompt, options);
    const auto in_process = local.complete(prompt, options);
    CHECK(over_http.completion == in_process.completion);
    CHECK(over_http.prompt_tokens == in_process.prompt_tokens);
    CHECK(over_http.completion_tokens == in_process.completion_tokens);
  }
  CHECK(remote.complete("What is the capital of France?", options).completion ==
        "The capital of France is Paris.");
}

TEST_CASE("eight_clients_at_once_each_get_the_answer_they_get_alone", "[serve]") {
  if (const auto missing = missing_model(); !missing.empty()) G2C_SKIP(missing);
  RunningServer running;
  require_the_model_runs(running);
  const std::vector<std::string> questions = {"What is the capital of France?",
                                              "What is the capital of Italy?",
                                              "Name a fruit.",
                                              "What is 2 + 2?",
                                              "Say hello.",
                                              "Name a colour.",
                                              "What is the capital of Spain?",
                                              "Name an animal."};
  // Alone, one after the other.
  std::vector<std::string> alone;
  {
    auto client = running.client();
    for (const auto& question : questions) {
      auto [status, body] = post(client, "/api/chat", chat_request(question, 16, false).dump());
      REQUIRE(status == 200);
      alone.push_back(body["message"]["content"].get<std::string>());
    }
  }
  // All at once, half of them streamed.
  std::vector<std::future<std::string>> answers;
  for (std::size_t i = 0; i < questions.size(); ++i) {
    answers.push_back(std::async(std::launch::async, [&, i] {
      auto client = running.client();
      const bool stream = i % 2 == 1;
      const auto answer = client.Post("/api/chat", chat_request(questions[i], 16, stream).dump(),
                                      "application/json");
      if (!answer || answer->status != 200) return std::string("<failed>");
      if (!stream) return json::parse(answer->body)["message"]["content"].get<std::string>();
      std::string text;
      std::size_t start = 0;
      while (start < answer->body.size()) {
        const auto end = answer->body.find('\n', start);
        const auto line = json::parse(answer->body.substr(start, end - start));
        text += line["message"]["content"].get<std::string>();
        start = end + 1;
      }
      return text;
    }));
  }
  for (std::size_t i = 0; i < questions.size(); ++i) {
    INFO(questions[i]);
    CHECK(answers[i].get() == alone[i]);
  }
}

TEST_CASE("a_client_that_leaves_mid_stream_ends_its_generation", "[serve]") {
  if (const auto missing = missing_model(); !missing.empty()) G2C_SKIP(missing);
  RunningServer running;
  require_the_model_runs(running);
  // The client reads the first piece and leaves.
  const int fd = open_request(running.port(), "/api/generate", long_story(true));
  char buffer[512];
  REQUIRE(::recv(fd, buffer, sizeof buffer, 0) > 0);
  ::close(fd);
  CHECK(abandoned_within(running, 20) == 1);
}

TEST_CASE("a_client_that_leaves_before_a_whole_answer_ends_its_generation", "[serve]") {
  if (const auto missing = missing_model(); !missing.empty()) G2C_SKIP(missing);
  RunningServer running;
  require_the_model_runs(running);
  // Not streamed: nothing is written until the end, so only asking whether the client is still
  // there can stop the 2000 tokens.
  const int fd = open_request(running.port(), "/api/generate", long_story(false));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  ::close(fd);
  CHECK(abandoned_within(running, 20) == 1);
}

TEST_CASE("a_client_that_never_reads_holds_up_no_one", "[serve]") {
  if (const auto missing = missing_model(); !missing.empty()) G2C_SKIP(missing);
  RunningServer running;
  require_the_model_runs(running);
  const int idle = open_request(running.port(), "/api/generate",
                                json({{"model", kName},
                                      {"prompt", "Tell me a long story."},
                                      {"options", {{"num_predict", 400}}}})
                                    .dump());
  auto client = running.client();
  const auto start = std::chrono::steady_clock::now();
  auto [status, body] =
      post(client, "/api/chat", chat_request("What is the capital of France?", 12, false).dump());
  const auto seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(status == 200);
  CHECK(body["message"]["content"] == "The capital of France is Paris.");
  CHECK(seconds < 30);
  ::close(idle);
}

TEST_CASE("a_course_model_is_served_as_it_generates_in_process", "[serve]") {
  // A tiny TransformerLM and its BPE tokenizer saved as artifacts in a temporary folder, as
  // module 10 saves them; the server finds it by name in any case.
  const auto root =
      std::filesystem::temp_directory_path() / ("g2c-serve-check-" + std::to_string(::getpid()));
  std::filesystem::remove_all(root);
  ArtifactsDir artifacts(root);
  g2c::tokenizer::BPETokenizer bpe(g2c::tokenizer::course_special_tokens());
  std::string corpus;
  for (int i = 0; i < 40; ++i) corpus += "to be or not to be, that is the question. ";
  bpe.train(corpus, 300);
  g2c::tokenizer::save_artifact(bpe, {}, nlohmann::ordered_json{{"name", "TinyServeTokenizer"}},
                                root / "tokenizers" / "TinyServeTokenizer");
  torch::manual_seed(0);
  g2c::transformer::TransformerLM model(300, 16, 1, 2, 32);
  model->eval();
  g2c::pretraining::ModelArtifactInfo info;
  info.name = "TinyServeLM";
  info.tokenizer_artifact = "TinyServeTokenizer";
  g2c::pretraining::save_model_artifact(info, model, root / "models" / "TinyServeLM");

  ServerOptions options;
  options.models_dir = root / "models";
  RunningServer running(options);
  auto client = running.client();
  // /api/generate continues the prompt: greedy, the tokens module 11's generate() gives.
  auto [status, body] = post(client, "/api/generate",
                             json({{"model", "tinyservelm:latest"},
                                   {"prompt", "to be"},
                                   {"stream", false},
                                   {"options", {{"temperature", 0}, {"num_predict", 6}}}})
                                 .dump());
  REQUIRE(status == 200);
  auto text_model = g2c::sampling::load_text_model((root / "models" / "TinyServeLM").string());
  torch::NoGradGuard no_grad;
  const auto prompt = text_model.encode("to be");
  const auto full = g2c::sampling::generate(*text_model.artifact.model, prompt, 6,
                                            g2c::sampling::GenerateOptions().temperature(0));
  std::vector<std::int64_t> added;
  for (auto i = prompt.size(0); i < full.size(0); ++i)
    added.push_back(full[i].item<std::int64_t>());
  CHECK(body["response"] == text_model.tokenizer.decode(added));
  CHECK(body["eval_count"] == 6);
  CHECK(body["prompt_eval_count"] == prompt.size(0));
  // /api/chat in module 13's template; /api/embed is refused, saying why.
  std::tie(status, body) = post(client, "/api/chat",
                                json({{"model", "TinyServeLM"},
                                      {"messages", {{{"role", "user"}, {"content", "to be?"}}}},
                                      {"stream", false},
                                      {"options", {{"temperature", 0}, {"num_predict", 4}}}})
                                    .dump());
  CHECK(status == 200);
  CHECK(body["message"]["role"] == "assistant");
  CHECK(body["eval_count"].get<int>() <= 4);
  std::tie(status, body) =
      post(client, "/api/embed", R"({"model": "TinyServeLM", "input": "to be"})");
  CHECK(status == 400);
  CHECK_THAT(body["error"].get<std::string>(), Contains("no embedding"));
  const auto tags = client.Get("/api/tags");
  REQUIRE(tags);
  CHECK_THAT(tags->body, Contains("TinyServeLM:latest"));
  std::filesystem::remove_all(root);
}
