// Framework checks of module 16's HTTP transport (g2c/inference/http.h) against a real server:
// cpp-httplib's, bound to 127.0.0.1 on a free port for the length of one check. The request goes
// out as sent and the answer comes back whatever its status; no server is a NetworkError; and
// chat_with_tools works over the real wire as it does over the tests' fake transport.
#include <chrono>
#include <string>
#include <thread>

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

#else

TEST_CASE("http_send_posts_the_request_and_reads_the_answer", "[inference]") {
  G2C_SKIP("this build has no cpp-httplib (libcpp-httplib-dev)");
}

#endif
