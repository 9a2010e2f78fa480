// g2c-serve's HTTP/1.1 layer (module 16, implemented for you): sockets in, requests to handlers,
// answers out — and nothing a client sends can take the server down or hold it up.
//
// One thread reads every connection at once (poll), and only a request that has fully arrived —
// its head and its whole body — goes to a worker. A client that sends a byte every few seconds
// therefore holds no worker: it holds one slot among max_connections until request_timeout, then
// gets 408. Everything a client sends is bounded before it is kept: the head (431, 414), the
// number of headers, the body whether its length is declared or it comes chunked (413, counted as
// it arrives), and compressed bodies are refused (415) rather than inflated. Complete requests wait
// for a worker in a queue of max_queue; past it a request gets 503 with Retry-After at once, as
// Ollama does with OLLAMA_MAX_QUEUE. A handler sees whether its client is still there
// (IncomingRequest::client_connected), and a streamed answer's write() says false once the client
// has gone, so a generation nobody waits for ends at its next token.
//
//   HttpServer http(limits);
//   http.route("POST", "/api/chat", [](const IncomingRequest& request, OutgoingResponse& response)
//   {
//     response.set_content(R"({"ok": true})", "application/json");
//   });
//   const int port = http.bind("127.0.0.1", 0);   // 0: any free port
//   http.listen();                               // until stop(), from any thread
//
// POSIX sockets; HTTP/1.0 and 1.1 with keep-alive, pipelining and "Expect: 100-continue".
#pragma once

#include <chrono>
#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace g2c::inference {

/// What one client may send and how long it may take; every number is a bound on memory or time.
struct HttpLimits {
  std::size_t max_body_bytes = 1 << 20;    // the body as the handler gets it (chunks decoded): 413
  std::size_t max_head_bytes = 16 << 10;   // the request line and the headers together: 431
  std::size_t max_target_bytes = 8 << 10;  // the request line's path and query: 414
  std::size_t max_headers = 64;            // header lines: 431
  std::chrono::milliseconds request_timeout{10'000};  // a request's first byte to its last: 408
  std::chrono::milliseconds idle_timeout{5'000};      // a kept-alive connection between requests
  std::chrono::milliseconds write_timeout{10'000};  // a client that takes nothing this long is gone
  std::size_t workers = 16;                         // requests handled at once
  std::size_t max_queue = 64;         // complete requests waiting for a worker: 503 past it
  std::size_t max_connections = 128;  // connections open at once: 503 past it
};

/// One request as a handler sees it.
struct IncomingRequest {
  std::string method;   // "GET", "POST", …
  std::string target;   // as sent, e.g. "/api/chat?x=1"; not percent-decoded
  std::string path;     // the target without its query
  std::string version;  // "HTTP/1.1" or "HTTP/1.0"
  std::vector<std::pair<std::string, std::string>> headers;  // names in lower case, in order
  std::string body;
  /// Whether the client is still connected (has not closed its side); a poll, no waiting. A
  /// handler that computes for long asks it between steps.
  std::function<bool()> client_connected = [] { return true; };

  /// The first value of the header `name` (any case), or "" when it is absent.
  std::string header(std::string_view name) const;
  bool has_header(std::string_view name) const;
};

/// Writes the next piece of a streamed answer; false once the client has gone (stop generating).
using StreamWriter = std::function<bool(std::string_view piece)>;

/// One answer: a whole body, or a body produced while it is sent (chunked).
struct OutgoingResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra ones, e.g. Retry-After
  /// Set: the body is produced while it is sent (chunked). It returns true when the answer is
  /// complete, false to cut the connection (the client then sees an unfinished answer). The head
  /// goes out with the first piece written.
  std::function<bool(const StreamWriter& write)> stream;
  /// For a stream whose producer throws before it has written anything: fills `answer` for the
  /// failure (a 400 for a prompt too long, say). Unset: 500.
  std::function<void(const std::exception& failure, OutgoingResponse& answer)> on_failure;

  void set_content(std::string text, std::string type) {
    body = std::move(text);
    content_type = std::move(type);
  }
  void set_stream(std::string type, std::function<bool(const StreamWriter& write)> producer) {
    content_type = std::move(type);
    stream = std::move(producer);
  }
};

using RequestHandler =
    std::function<void(const IncomingRequest& request, OutgoingResponse& response)>;

/// An answer the layer gives itself — no such route, a malformed or oversized request, a full
/// queue, a handler that threw: fills `response` for `status` and `message`. `request` holds what
/// was read of it (the method and path may be empty).
using ErrorAnswer = std::function<void(const IncomingRequest& request, OutgoingResponse& response,
                                       int status, const std::string& message)>;

/// Why a request's head is refused before its body is read (an unknown Host, a missing API key).
struct Refusal {
  int status;
  std::string message;
};
using HeadCheck = std::function<std::optional<Refusal>(const IncomingRequest& head)>;

class HttpServer {
 public:
  explicit HttpServer(HttpLimits limits = {});
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  /// `handler` answers `method` on `path` (exact match, query ignored); HEAD is answered by GET's,
  /// OPTIONS (a browser's preflight) with 204 and the path's methods.
  void route(const std::string& method, const std::string& path, RequestHandler handler);
  void set_error_answer(ErrorAnswer answer);
  void set_head_check(HeadCheck check);
  /// Called once an answer has been written (or the client left while it was), on the thread
  /// that wrote it; stop() may be called from it.
  void set_on_answered(std::function<void(const IncomingRequest&, int status)> on_answered);
  /// Called on every answer before it is written, refusals included: adds headers (CORS).
  void set_answer_headers(std::function<void(const IncomingRequest&, OutgoingResponse&)> headers);

  /// Listens on host:port (port 0: any free port) and returns the port. ValueError when the
  /// address is taken or cannot be bound.
  int bind(const std::string& host, int port);
  /// Serves until stop(): connections still being read are closed at once, handlers at work
  /// finish. bind() first.
  void listen();
  /// Asks listen() to return; safe from any thread, a handler included. Returns at once.
  void stop();
  bool stopping() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The standard reason phrase for an HTTP status ("Not Found"); "Unknown" for one it does not know.
std::string_view http_reason(int status);

}  // namespace g2c::inference
