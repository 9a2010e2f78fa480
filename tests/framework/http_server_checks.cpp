// Framework checks of g2c-serve's HTTP layer (g2c/inference/http_server.h), on a free port of
// 127.0.0.1, driven over raw sockets so that every byte is the check's own: requests kept alive and
// pipelined, chunked bodies decoded, "Expect: 100-continue"; and what a hostile client does — a
// handler that throws, framing that smuggles, compressed or oversized bodies, heads that never end,
// a full queue, a client that leaves — answered without the server falling over or holding up the
// next client. scripts/check_serve_hostile.py tries the same on the g2c-serve program.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "g2c/core/errors.h"
#include "g2c/inference/http_server.h"
#include "g2c_test.h"

using Catch::Matchers::Contains;
using g2c::inference::HttpLimits;
using g2c::inference::HttpServer;
using g2c::inference::IncomingRequest;
using g2c::inference::OutgoingResponse;
using g2c::inference::StreamWriter;
using Seconds = std::chrono::duration<double>;

namespace {

/// An HttpServer listening on its own thread until destroyed, with two routes: GET /hello and
/// POST /echo (the body back, and its length in a header).
class Running {
 public:
  explicit Running(HttpLimits limits = {}, bool echo = true) : http_(limits) {
    http_.route("GET", "/hello", [](const IncomingRequest&, OutgoingResponse& response) {
      response.set_content("hello", "text/plain");
    });
    if (echo) {
      http_.route("POST", "/echo", [](const IncomingRequest& request, OutgoingResponse& response) {
        response.set_content(request.body, "application/octet-stream");
      });
    }
    http_.set_error_answer([](const IncomingRequest&, OutgoingResponse& response, int status,
                              const std::string& message) {
      response.status = status;
      response.set_content("{\"error\": \"" + message + "\"}", "application/json");
    });
    port_ = http_.bind("127.0.0.1", 0);
  }
  void start() {
    thread_ = std::thread([this] { http_.listen(); });
  }
  ~Running() {
    http_.stop();
    if (thread_.joinable()) thread_.join();
  }
  HttpServer& http() { return http_; }
  int port() const { return port_; }

 private:
  HttpServer http_;
  int port_ = 0;
  std::thread thread_;
};

/// A client socket to 127.0.0.1:port that gives up reading after `seconds`.
class Client {
 public:
  explicit Client(int port, double seconds = 10) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(fd_ >= 0);
    timeval limit{static_cast<time_t>(seconds),
                  static_cast<suseconds_t>((seconds - static_cast<time_t>(seconds)) * 1e6)};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  }
  ~Client() { ::close(fd_); }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  void send(const std::string& bytes) {
    REQUIRE(::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
            static_cast<ssize_t>(bytes.size()));
  }
  /// Everything that arrives until `marker` is in it, the server closes, or the time is up.
  std::string read_until(const std::string& marker) {
    return read_while(
        [&](const std::string& text) { return text.find(marker) == std::string::npos; });
  }
  /// Everything that arrives while `more(received)` holds, until the server closes or the time
  /// is up.
  template <typename More>
  std::string read_while(More more) {
    char chunk[4096];
    while (more(received_)) {
      const auto got = ::recv(fd_, chunk, sizeof chunk, 0);
      if (got <= 0) break;
      received_.append(chunk, static_cast<std::size_t>(got));
    }
    return received_;
  }
  /// The status of the next answer's first line, and its whole text up to `marker`.
  int status(const std::string& marker = "\r\n\r\n") {
    const auto text = read_until(marker);
    return text.starts_with("HTTP/1.1 ") ? std::stoi(text.substr(9, 3)) : 0;
  }
  const std::string& received() const { return received_; }
  void forget() { received_.clear(); }
  void close() { ::shutdown(fd_, SHUT_RDWR); }

 private:
  int fd_ = -1;
  std::string received_;
};

std::string post(const std::string& path, const std::string& body, const std::string& extra = "") {
  return "POST " + path +
         " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" +
         extra + "\r\n" + body;
}

const std::string kHello = "GET /hello HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

}  // namespace

TEST_CASE("kept_alive_and_pipelined_requests_are_answered_in_order", "[serve]") {
  Running running;
  running.start();
  Client client(running.port());
  client.send(kHello + post("/echo", "first") + kHello);
  const auto text = client.read_while([](const std::string& text) {
    const auto echoed = text.find("first");
    return echoed == std::string::npos || text.find("hello", echoed) == std::string::npos;
  });
  INFO(text);
  const auto first = text.find("hello");
  const auto echoed = text.find("first");
  REQUIRE(first != std::string::npos);
  REQUIRE(echoed != std::string::npos);
  CHECK(first < echoed);
  CHECK(text.find("hello", echoed) != std::string::npos);
  CHECK_THAT(text, Contains("Connection: keep-alive"));
}

TEST_CASE("a_chunked_body_is_decoded_and_one_past_the_limit_is_413", "[serve]") {
  HttpLimits limits;
  limits.max_body_bytes = 64;
  Running running(limits);
  running.start();
  {
    Client client(running.port());
    client.send(
        "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        "5;note=x\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: 1\r\n\r\n");
    CHECK(client.status("hello world") == 200);
    CHECK_THAT(client.received(), Contains("Content-Length: 11"));
  }
  {
    Client client(running.port());
    client.send(
        "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        "40\r\n" +
        std::string(64, 'a') + "\r\n1\r\nb\r\n");
    CHECK(client.status() == 413);
  }
  {
    Client client(running.port());
    client.send(post("/echo", std::string(65, 'a')));
    CHECK(client.status() == 413);
  }
}

TEST_CASE("framing_the_layer_does_not_accept_is_refused_with_the_reason", "[serve]") {
  Running running;
  running.start();
  const std::vector<std::pair<std::string, int>> cases = {
      {"POST /echo HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\nabc", 400},
      {"POST /echo HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", 400},
      {"POST /echo HTTP/1.1\r\nContent-Length: -3\r\n\r\n", 400},
      {"POST /echo HTTP/1.1\r\nContent-Length: 3\r\nContent-Encoding: gzip\r\n\r\nabc", 415},
      {"POST /echo HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501},
      {"GET /hello HTTP/2.0\r\n\r\n", 505},
      {"GET hello HTTP/1.1\r\n\r\n", 400},
      {"GET /hello HTTP/1.1\r\nX-Folded: a\r\n b\r\n\r\n", 400},
      {"GET /hello HTTP/1.1\r\nExpect: something\r\n\r\n", 417},
      {"DELETE /hello HTTP/1.1\r\n\r\n", 405},
      {"GET /nothing HTTP/1.1\r\n\r\n", 404},
      {"GET /" + std::string(9000, 'a') + " HTTP/1.1\r\n\r\n", 414},
      {"GET /hello HTTP/1.1\r\nX-Big: " + std::string(17000, 'a') + "\r\n\r\n", 431},
  };
  for (const auto& [request, expected] : cases) {
    Client client(running.port());
    client.send(request);
    INFO(request);
    CHECK(client.status() == expected);
    CHECK_THAT(client.received(), Contains("{\"error\": "));
  }
}

TEST_CASE("a_preflight_gets_the_methods_and_every_answer_the_servers_headers", "[serve]") {
  Running running;
  running.http().set_answer_headers([](const IncomingRequest&, OutgoingResponse& response) {
    response.headers.emplace_back("X-Answered-By", "the check");
  });
  running.start();
  Client preflight(running.port());
  preflight.send("OPTIONS /echo HTTP/1.1\r\nOrigin: http://localhost:3000\r\n\r\n");
  CHECK(preflight.status() == 204);
  CHECK_THAT(preflight.received(), Contains("Allow: OPTIONS, POST"));
  CHECK_THAT(preflight.received(), Contains("X-Answered-By: the check"));
  Client refused(running.port());  // a refusal the layer writes itself carries them too
  refused.send("GET /hello HTTP/2.0\r\n\r\n");
  CHECK(refused.status() == 505);
  CHECK_THAT(refused.received(), Contains("X-Answered-By: the check"));
}

TEST_CASE("expect_100_continue_gets_continue_before_the_answer", "[serve]") {
  Running running;
  running.start();
  Client client(running.port());
  client.send(
      "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n");
  CHECK(client.status() == 100);
  client.forget();
  client.send("body");
  CHECK(client.status("body") == 200);
}

TEST_CASE("a_handler_that_throws_is_a_500_and_the_server_answers_on", "[serve]") {
  Running running;
  running.http().route("GET", "/throws", [](const IncomingRequest&, OutgoingResponse&) {
    throw std::runtime_error("broken\nException raised from a library's stack trace");
  });
  running.http().route("GET", "/throws-anything",
                       [](const IncomingRequest&, OutgoingResponse&) { throw 42; });
  running.start();
  for (const std::string path : {"/throws", "/throws-anything"}) {
    Client client(running.port());
    client.send("GET " + path + " HTTP/1.1\r\n\r\n");
    CHECK(client.status() == 500);
    CHECK(client.read_until("}").find("stack trace") == std::string::npos);
  }
  Client client(running.port());
  client.send(kHello);
  CHECK(client.status("hello") == 200);
}

TEST_CASE("a_stream_that_fails_before_writing_gets_its_own_error_answer", "[serve]") {
  Running running;
  running.http().route("GET", "/refused", [](const IncomingRequest&, OutgoingResponse& response) {
    response.on_failure = [](const std::exception& failure, OutgoingResponse& answer) {
      answer.status = 400;
      answer.set_content(std::string("{\"error\": \"") + failure.what() + "\"}",
                         "application/json");
    };
    response.set_stream("application/x-ndjson", [](const StreamWriter&) -> bool {
      throw std::invalid_argument("the prompt is too long");
    });
  });
  running.http().route("GET", "/broken", [](const IncomingRequest&, OutgoingResponse& response) {
    response.set_stream("application/x-ndjson", [](const StreamWriter& write) -> bool {
      write("{\"piece\": 1}\n");
      throw std::runtime_error("lost the model");
    });
  });
  running.start();
  {
    Client client(running.port());
    client.send("GET /refused HTTP/1.1\r\n\r\n");
    CHECK(client.status("}") == 400);
    CHECK_THAT(client.received(), Contains("the prompt is too long"));
    CHECK_THAT(client.received(), Contains("Content-Length"));
  }
  {
    // Once a piece has gone out, the answer is cut: the client sees the piece and no end.
    Client client(running.port());
    client.send("GET /broken HTTP/1.1\r\n\r\n");
    CHECK(client.status("piece") == 200);
    const auto text = client.read_until("0\r\n\r\n");
    CHECK(text.find("0\r\n\r\n") == std::string::npos);
  }
}

TEST_CASE("clients_that_send_slowly_hold_no_worker_and_get_408", "[serve]") {
  HttpLimits limits;
  limits.workers = 1;
  limits.request_timeout = std::chrono::milliseconds(800);
  Running running(limits);
  running.start();
  std::vector<std::unique_ptr<Client>> slow;
  for (int i = 0; i < 8; ++i) {
    slow.push_back(std::make_unique<Client>(running.port()));
    slow.back()->send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nab");
  }
  const auto start = std::chrono::steady_clock::now();
  Client quick(running.port());
  quick.send(kHello);
  CHECK(quick.status("hello") == 200);
  CHECK(Seconds(std::chrono::steady_clock::now() - start).count() < 0.5);
  for (auto& client : slow) CHECK(client->status() == 408);
}

TEST_CASE("a_full_queue_answers_503_with_retry_after", "[serve]") {
  HttpLimits limits;
  limits.workers = 1;
  limits.max_queue = 1;
  Running running(limits);
  std::mutex mutex;
  std::condition_variable released;
  bool open = false;
  std::atomic<int> entered{0};
  running.http().route("GET", "/wait", [&](const IncomingRequest&, OutgoingResponse& response) {
    ++entered;
    std::unique_lock lock(mutex);
    released.wait_for(lock, std::chrono::seconds(10), [&] { return open; });
    response.set_content("done", "text/plain");
  });
  running.start();
  Client first(running.port());
  first.send("GET /wait HTTP/1.1\r\n\r\n");
  for (int i = 0; i < 200 && entered == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  REQUIRE(entered == 1);
  Client second(running.port());
  second.send("GET /wait HTTP/1.1\r\n\r\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  Client third(running.port());
  third.send("GET /wait HTTP/1.1\r\n\r\n");
  CHECK(third.status() == 503);
  CHECK_THAT(third.received(), Contains("Retry-After: 1"));
  {
    std::lock_guard lock(mutex);
    open = true;
  }
  released.notify_all();
  CHECK(first.status("done") == 200);
  CHECK(second.status("done") == 200);
}

TEST_CASE("a_handler_sees_its_client_leave", "[serve]") {
  Running running;
  std::atomic<int> noticed{0};
  running.http().route("GET", "/long", [&](const IncomingRequest& request, OutgoingResponse&) {
    for (int i = 0; i < 500 && request.client_connected(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!request.client_connected()) ++noticed;
  });
  std::atomic<bool> write_failed{false};
  running.http().route("GET", "/stream", [&](const IncomingRequest&, OutgoingResponse& response) {
    response.set_stream("text/plain", [&](const StreamWriter& write) {
      for (int i = 0; i < 500; ++i) {
        if (!write(std::string(4096, 'x'))) {
          write_failed = true;
          return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      return true;
    });
  });
  running.start();
  {
    Client client(running.port());
    client.send("GET /long HTTP/1.1\r\n\r\n");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  {
    Client client(running.port());
    client.send("GET /stream HTTP/1.1\r\n\r\n");
    CHECK(client.status() == 200);
  }
  for (int i = 0; i < 300 && (noticed == 0 || !write_failed); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(noticed == 1);
  CHECK(write_failed);
}

TEST_CASE("stop_returns_at_once_with_a_half_sent_request_open", "[serve]") {
  auto running = std::make_unique<Running>();
  running->start();
  Client client(running->port());
  client.send("POST /echo HTTP/1.1\r\nContent-Length: 100\r\n\r\nhalf");
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const auto start = std::chrono::steady_clock::now();
  running.reset();
  CHECK(Seconds(std::chrono::steady_clock::now() - start).count() < 1.0);
}

TEST_CASE("a_taken_port_is_a_value_error", "[serve]") {
  Running running;
  HttpServer second;
  CHECK_THROWS_AS(second.bind("127.0.0.1", running.port()), g2c::ValueError);
}
