// Framework checks of module 16's HTTP transport (g2c/inference/http.h) against a real server:
// cpp-httplib's, bound to 127.0.0.1 on a free port for the length of one check. The request goes
// out as sent and the answer comes back whatever its status; no server is a NetworkError; and
// chat_with_tools works over the real wire as it does over the tests' fake transport.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "g2c/inference/http.h"
#include "g2c/inference/ollama.h"
#include "g2c_test.h"

#if defined(G2C_HAVE_HTTPLIB)
#include <httplib.h>
#endif

using Catch::Matchers::Contains;
using g2c::inference::http_send;
using g2c::inference::HttpRequest;
using g2c::inference::NetworkError;
using Json = nlohmann::json;

namespace {

// What /api/chat streams for "Hello wörld" and one calculator call: a JSON object a line.
std::string streamed_reply() {
  std::string body;
  for (const char* piece : {"Hel", "lo ", "w\xc3\xb6rld"}) {
    body +=
        Json({{"message", {{"role", "assistant"}, {"content", piece}}}, {"done", false}}).dump() +
        "\n";
  }
  body +=
      Json(
          {{"message",
            {{"role", "assistant"},
             {"content", ""},
             {"tool_calls",
              {{{"function", {{"name", "calculator"}, {"arguments", {{"expression", "1+1"}}}}}}}}}},
           {"done", false}})
          .dump() +
      "\n";
  body += Json({{"message", {{"role", "assistant"}, {"content", ""}}},
                {"done", true},
                {"prompt_eval_count", 9},
                {"eval_count", 4}})
              .dump() +
          "\n";
  return body;
}

// A transport that answers `body`, handing on_body (when the request has one) the first
// `streamed` bytes in chunks of `chunk` bytes — lines and characters cut anywhere — and returning
// the whole body, as http_send does.
g2c::inference::HttpTransport answering(std::string body, std::size_t streamed, std::size_t chunk,
                                        Json* sent = nullptr) {
  return [=](const HttpRequest& request, double) {
    if (sent) *sent = Json::parse(request.body);
    for (std::size_t at = 0; request.on_body && at < std::min(streamed, body.size()); at += chunk) {
      request.on_body(std::string_view(body).substr(at, std::min(chunk, streamed - at)));
    }
    return g2c::inference::HttpResponse{200, body};
  };
}

const Json kHello = Json::array({{{"role", "user"}, {"content", "hello"}}});

}  // namespace

TEST_CASE("a_streamed_chat_reply_is_the_reply_it_would_be_whole", "[inference]") {
  const auto body = streamed_reply();
  // Streamed in chunks of 1, 5 or 64 bytes, half of it streamed, or none (a transport that cannot
  // stream): the sink sees each piece once, in order, and the result is the same.
  for (const std::size_t streamed : {body.size(), body.size() / 2, std::size_t{0}}) {
    for (const std::size_t chunk : {1, 5, 64}) {
      INFO("streamed " << streamed << " bytes in chunks of " << chunk);
      Json sent;
      g2c::inference::OllamaBackend backend("x:1", g2c::inference::OllamaOptions().with_transport(
                                                       answering(body, streamed, chunk, &sent)));
      std::vector<std::string> pieces;
      const auto result = backend.chat_with_tools(
          kHello, nullptr, g2c::inference::ChatOptions().with_on_text([&](std::string_view piece) {
            pieces.emplace_back(piece);
          }));
      CHECK(sent["stream"] == true);
      CHECK(pieces == std::vector<std::string>{"Hel", "lo ", "w\xc3\xb6rld"});
      CHECK(result.content == "Hello w\xc3\xb6rld");
      REQUIRE(result.tool_calls.size() == 1);
      CHECK(result.tool_calls[0]["name"] == "calculator");
      CHECK(result.tool_calls[0]["arguments"] == Json({{"expression", "1+1"}}));
      CHECK(result.prompt_tokens == 9);
      CHECK(result.completion_tokens == 4);
    }
  }
  // Nobody watching: the request asks for one answer, as before.
  Json sent;
  const Json whole = {{"message", {{"role", "assistant"}, {"content", "hi"}}}, {"done", true}};
  g2c::inference::OllamaBackend plain(
      "x:1", g2c::inference::OllamaOptions().with_transport(answering(whole.dump(), 0, 1, &sent)));
  CHECK(plain.chat_with_tools(kHello).content == "hi");
  CHECK(sent["stream"] == false);
}

TEST_CASE("a_streamed_chat_reply_that_breaks_is_an_ollama_error", "[inference]") {
  const auto watch = g2c::inference::ChatOptions().with_on_text([](std::string_view) {});
  const auto line = [](const Json& value) { return value.dump() + "\n"; };
  const auto piece = line({{"message", {{"content", "Hel"}}}, {"done", false}});
  const auto reply = [&](std::string body) {
    g2c::inference::OllamaBackend backend(
        "x:1", g2c::inference::OllamaOptions().with_transport(answering(body, body.size(), 7)));
    return backend.chat_with_tools(kHello, nullptr, watch);
  };
  // The server's own error line mid-stream (Ollama sends {"error": …}), a line that is not JSON,
  // nothing at all: each one OllamaError saying what came back.
  CHECK_THROWS_WITH(reply(piece + line({{"error", "model unloaded"}})), Contains("model unloaded"));
  CHECK_THROWS_AS(reply(piece + "<html>proxy error</html>\n"), g2c::inference::OllamaError);
  CHECK_THROWS_WITH(reply(piece + "<html>proxy error</html>\n"), Contains("non-JSON"));
  CHECK_THROWS_WITH(reply(""), Contains("non-JSON"));
}

#if defined(G2C_HAVE_HTTPLIB)

namespace {

/// A server on 127.0.0.1 for one check: routes set up by the caller, stopped and joined on scope
/// exit.
class LocalServer {
 public:
  explicit LocalServer(const std::function<void(httplib::Server&)>& routes) {
    routes(server_);
    port_ = server_.bind_to_any_port("127.0.0.1");  // listening from here: requests queue up
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    // Until the accept loop runs, stop() would not reach it and the join would wait forever.
    for (int i = 0; i < 500 && !server_.is_running(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  ~LocalServer() {
    server_.stop();
    thread_.join();
  }
  std::string url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

}  // namespace

TEST_CASE("http_send_posts_the_request_and_reads_the_answer", "[inference]") {
  std::string seen_body, seen_type;
  LocalServer server([&](httplib::Server& s) {
    s.Post("/echo", [&](const httplib::Request& request, httplib::Response& response) {
      seen_body = request.body;
      seen_type = request.get_header_value("Content-Type");
      response.set_content(R"({"ok": true})", "application/json");
    });
    s.Get("/missing", [](const httplib::Request&, httplib::Response& response) {
      response.status = 404;
      response.set_content("no such thing", "text/plain");
    });
  });
  const auto answer = http_send(
      HttpRequest{"POST", server.url("/echo"), {{"Content-Type", "application/json"}}, "{\"a\":1}"},
      5.0);
  CHECK(answer.status == 200);
  CHECK(Json::parse(answer.body) == Json({{"ok", true}}));
  CHECK(seen_body == "{\"a\":1}");
  CHECK(seen_type == "application/json");
  // An error status is an answer, not an exception: the backend decides what it means.
  const auto missing = http_send(HttpRequest{"GET", server.url("/missing"), {}, ""}, 5.0);
  CHECK(missing.status == 404);
  CHECK(missing.body == "no such thing");
}

TEST_CASE("http_send_without_a_server_is_a_network_error", "[inference]") {
  std::string closed;
  {
    LocalServer server([](httplib::Server&) {});
    closed = server.url("/api/generate");
  }  // stopped: nothing listens on that port now
  CHECK_THROWS_AS(http_send(HttpRequest{"POST", closed, {}, "{}"}, 2.0), NetworkError);
  CHECK_THROWS_AS(http_send(HttpRequest{"POST", "localhost:11434/api", {}, "{}"}, 2.0),
                  NetworkError);
  // Through a backend: one OllamaError naming the URL, the NetworkError nested in it.
  g2c::inference::OllamaBackend backend(
      "x:1", g2c::inference::OllamaOptions().with_base_url(closed.substr(0, closed.find("/api"))));
  CHECK_THROWS_WITH(backend.chat_with_tools(Json::array({{{"role", "user"}, {"content", "hi"}}})),
                    Contains("Could not reach Ollama at"));
}

TEST_CASE("chat_with_tools_over_a_real_connection", "[inference]") {
  Json seen;
  LocalServer server([&](httplib::Server& s) {
    s.Post("/api/chat", [&](const httplib::Request& request, httplib::Response& response) {
      seen = Json::parse(request.body);
      const Json answer = {
          {"message",
           {{"role", "assistant"},
            {"content", ""},
            {"tool_calls",
             {{{"function", {{"name", "calculator"}, {"arguments", {{"expression", "12*9"}}}}}}}}}},
          {"done", true},
          {"prompt_eval_count", 5},
          {"eval_count", 3}};
      response.set_content(answer.dump(), "application/json");
    });
  });
  const std::string base = server.url("");
  g2c::inference::OllamaBackend backend("x:1", g2c::inference::OllamaOptions().with_base_url(base));
  const auto result =
      backend.chat_with_tools(Json::array({{{"role", "user"}, {"content", "12 * 9?"}}}));
  CHECK(seen["model"] == "x:1");
  CHECK(seen["stream"] == false);
  REQUIRE(result.tool_calls.size() == 1);
  CHECK(result.tool_calls[0]["arguments"]["expression"] == "12*9");
  CHECK(result.prompt_tokens == 5);
  CHECK(result.completion_tokens == 3);
}

TEST_CASE("a_streamed_reply_is_read_while_the_server_is_still_writing_it", "[inference]") {
  // The server writes one line, then waits until the client has shown it (or 5 s pass) before it
  // writes the rest: a client that read the whole answer first would see the piece only after
  // the wait, and too late.
  std::mutex mutex;
  std::condition_variable shown;
  bool first_shown = false;
  bool shown_before_the_rest = false;
  LocalServer server([&](httplib::Server& s) {
    s.Post("/api/chat", [&](const httplib::Request&, httplib::Response& response) {
      response.set_chunked_content_provider("application/x-ndjson", [&](std::size_t,
                                                                        httplib::DataSink& sink) {
        const auto first = Json({{"message", {{"content", "Hel"}}}, {"done", false}}).dump() + "\n";
        sink.write(first.data(), first.size());
        {
          std::unique_lock lock(mutex);
          shown_before_the_rest =
              shown.wait_for(lock, std::chrono::seconds(5), [&] { return first_shown; });
        }
        const auto rest =
            Json({{"message", {{"content", "lo"}}}, {"done", false}}).dump() + "\n" +
            Json({{"message", {{"content", ""}}}, {"done", true}, {"eval_count", 2}}).dump() + "\n";
        sink.write(rest.data(), rest.size());
        sink.done();
        return true;
      });
    });
  });
  g2c::inference::OllamaBackend backend(
      "x:1", g2c::inference::OllamaOptions().with_base_url(server.url("")));
  std::vector<std::string> pieces;
  const auto result = backend.chat_with_tools(
      kHello, nullptr, g2c::inference::ChatOptions().with_on_text([&](std::string_view piece) {
        pieces.emplace_back(piece);
        std::lock_guard lock(mutex);
        first_shown = true;
        shown.notify_all();
      }));
  CHECK(shown_before_the_rest);
  CHECK(pieces == std::vector<std::string>{"Hel", "lo"});
  CHECK(result.content == "Hello");
  CHECK(result.completion_tokens == 2);

  // http_send itself: the chunks as they come, and the whole body in the response.
  std::string chunks;
  HttpRequest request{
      "POST", server.url("/api/chat"), {{"Content-Type", "application/json"}}, "{}"};
  request.on_body = [&](std::string_view chunk) { chunks += chunk; };
  first_shown = true;  // no wait this time
  const auto answer = http_send(request, 5.0);
  CHECK(answer.status == 200);
  CHECK(chunks == answer.body);
  CHECK_THAT(answer.body, Contains("\"done\":true"));

  // A sink that throws stops the reading; its exception comes back to the caller.
  request.on_body = [](std::string_view) { throw std::runtime_error("terminal closed"); };
  CHECK_THROWS_WITH(http_send(request, 5.0), "terminal closed");
}

#else

TEST_CASE("http_send_posts_the_request_and_reads_the_answer", "[inference]") {
  G2C_SKIP("this build has no cpp-httplib (libcpp-httplib-dev)");
}

#endif
