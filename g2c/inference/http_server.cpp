#include "g2c/inference/http_server.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <system_error>
#include <thread>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/core/strip.h"

namespace g2c::inference {

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::string_view kBlanks = " \t";  // what surrounds a header's value (RFC 9110's OWS)

/// RFC 9110's token characters: what a method or a header name is made of.
bool is_token(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](unsigned char c) {
    return std::isalnum(c) || std::strchr("!#$%&'*+-.^_`|~", c) != nullptr;
  });
}

bool has_control_or_space(std::string_view text) {
  return std::any_of(text.begin(), text.end(),
                     [](unsigned char c) { return c <= 0x20 || c == 0x7f; });
}

/// Writes all of `data` to a non-blocking socket, waiting at most `timeout` each time the client's
/// window is full. false: the client has gone or takes nothing.
bool send_all(int fd, std::string_view data, std::chrono::milliseconds timeout) {
  while (!data.empty()) {
    const auto sent = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (sent > 0) {
      data.remove_prefix(static_cast<std::size_t>(sent));
      continue;
    }
    if (sent < 0 && errno == EINTR) continue;
    if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd ready{fd, POLLOUT, 0};
      const int count = ::poll(&ready, 1, static_cast<int>(timeout.count()));
      if (count < 0 && errno == EINTR) continue;
      if (count <= 0 || (ready.revents & (POLLERR | POLLHUP | POLLNVAL))) return false;
      continue;
    }
    return false;
  }
  return true;
}

/// Whether the peer still has its side of the connection open.
bool peer_connected(int fd) {
  pollfd state{fd, POLLRDHUP, 0};
  if (::poll(&state, 1, 0) < 0) return true;
  return (state.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) == 0;
}

/// The first line of an exception's message: a library's stack trace stays out of answers.
std::string first_line(const char* what) {
  std::string_view text(what);
  return std::string(text.substr(0, text.find('\n')));
}

/// Where a connection is in reading its current request.
enum class Phase {
  kHead,        // the request line and headers
  kBody,        // a body of declared length
  kChunkSize,   // a chunk's size line
  kChunkData,   // a chunk's bytes
  kChunkEnd,    // the line break after a chunk's bytes
  kTrailers,    // header lines after the last chunk
  kDispatched,  // complete: with a worker
  kDraining,    // refused: what the client still sends is read and dropped, then it is closed
};

struct Connection {
  explicit Connection(int fd_) : fd(fd_) {}
  ~Connection() { ::close(fd); }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  int fd;
  std::string buffer;       // bytes read and not yet taken
  std::size_t scanned = 0;  // kHead: where the search for the blank line resumes
  Phase phase = Phase::kHead;
  IncomingRequest request;
  std::size_t body_left = 0;  // kBody, kChunkData: bytes still to come
  std::size_t trailer_bytes = 0;
  bool started = false;  // a byte of the current request has arrived
  bool keep_alive = true;
  Clock::time_point deadline;
};

/// The index just past the blank line that ends the head, or npos; `scanned` remembers how far
/// the search got, so a head that arrives a byte at a time is scanned once.
std::size_t find_head_end(const std::string& buffer, std::size_t& scanned) {
  while (true) {
    const auto newline = buffer.find('\n', scanned);
    if (newline == std::string::npos) return std::string::npos;
    const auto length = newline - scanned;
    const bool blank = length == 0 || (length == 1 && buffer[scanned] == '\r');
    scanned = newline + 1;
    if (blank) return scanned;
  }
}

/// Splits `text` into lines ending in LF or CRLF (the line breaks removed).
std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const auto newline = text.find('\n');
    auto line = text.substr(0, newline);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    if (newline == std::string_view::npos) break;
    text.remove_prefix(newline + 1);
  }
  return lines;
}

/// The request line and headers of `head` (its blank line included) into `request`; a refusal
/// for a malformed or oversized head.
std::optional<Refusal> parse_head(std::string_view head, IncomingRequest& request,
                                  const HttpLimits& limits) {
  auto lines = lines_of(head);
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  if (lines.empty()) return Refusal{400, "the request is empty"};
  const auto line = lines.front();
  const auto first_space = line.find(' ');
  const auto last_space = line.rfind(' ');
  if (first_space == std::string_view::npos || first_space == last_space) {
    return Refusal{400, "the request line must be METHOD /path HTTP/1.1"};
  }
  request.method = std::string(line.substr(0, first_space));
  request.target = std::string(line.substr(first_space + 1, last_space - first_space - 1));
  request.version = std::string(line.substr(last_space + 1));
  if (!is_token(request.method)) return Refusal{400, "the request's method is not a word"};
  if (request.target.size() > limits.max_target_bytes) {
    return Refusal{414, fmt::format("the request's path is {} bytes; at most {} are read",
                                    request.target.size(), limits.max_target_bytes)};
  }
  if (!request.target.starts_with('/') || has_control_or_space(request.target)) {
    return Refusal{400, "the request's target must be a path such as /api/chat"};
  }
  if (request.version != "HTTP/1.1" && request.version != "HTTP/1.0") {
    return request.version.starts_with("HTTP/")
               ? Refusal{505, "only HTTP/1.0 and HTTP/1.1 are served"}
               : Refusal{400, "the request line must end with HTTP/1.1"};
  }
  request.path = request.target.substr(0, request.target.find('?'));
  if (lines.size() - 1 > limits.max_headers) {
    return Refusal{431, fmt::format("the request has {} header lines; at most {} are read",
                                    lines.size() - 1, limits.max_headers)};
  }
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const auto header = lines[i];
    if (header.front() == ' ' || header.front() == '\t') {
      return Refusal{400, "a header line is folded onto the next; send each header on one line"};
    }
    const auto colon = header.find(':');
    if (colon == std::string_view::npos || !is_token(header.substr(0, colon))) {
      return Refusal{400, "a header line is not Name: value"};
    }
    request.headers.emplace_back(ascii_lowercase(header.substr(0, colon)),
                                 strip(header.substr(colon + 1), kBlanks));
  }
  return std::nullopt;
}

/// How the body arrives, from the head: sets the phase and body_left; a refusal for framing the
/// layer does not accept (both lengths, an unknown coding, a compressed body, over the limit).
std::optional<Refusal> read_framing(Connection& connection, const HttpLimits& limits) {
  const auto& request = connection.request;
  const auto encoding = ascii_lowercase(strip(request.header("content-encoding"), kBlanks));
  if (!encoding.empty() && encoding != "identity") {
    return Refusal{415, fmt::format("Content-Encoding: {} is not accepted: send the body "
                                    "uncompressed",
                                    encoding)};
  }
  std::optional<std::size_t> length;
  for (const auto& [name, value] : request.headers) {
    if (name != "content-length") continue;
    std::size_t parsed = 0;
    const auto text = strip(value, kBlanks);
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), parsed);
    if (text.empty() || error != std::errc() || end != text.data() + text.size() ||
        (length && *length != parsed)) {
      return Refusal{400, "Content-Length must be one whole number of bytes"};
    }
    length = parsed;
  }
  if (request.has_header("transfer-encoding")) {
    if (length) return Refusal{400, "a request has Content-Length or Transfer-Encoding, not both"};
    if (ascii_lowercase(strip(request.header("transfer-encoding"), kBlanks)) != "chunked") {
      return Refusal{501, "only Transfer-Encoding: chunked is accepted for a request body"};
    }
    connection.phase = Phase::kChunkSize;
    return std::nullopt;
  }
  if (length.value_or(0) > limits.max_body_bytes) {
    return Refusal{413, fmt::format("the request body is {} bytes; at most {} are accepted",
                                    *length, limits.max_body_bytes)};
  }
  connection.body_left = length.value_or(0);
  connection.phase = Phase::kBody;
  return std::nullopt;
}

bool wants_keep_alive(const IncomingRequest& request) {
  const auto connection = ascii_lowercase(request.header("connection"));
  if (request.version == "HTTP/1.0") return connection.find("keep-alive") != std::string::npos;
  return connection.find("close") == std::string::npos;
}

/// The response's head; `chunked` for a streamed body, else its length.
std::string response_head(const OutgoingResponse& response, bool chunked, bool keep_alive) {
  const auto clean = [](std::string text) {  // no header can end the head early
    std::erase_if(text, [](char c) { return c == '\r' || c == '\n'; });
    return text;
  };
  auto head = fmt::format("HTTP/1.1 {} {}\r\nContent-Type: {}\r\n", response.status,
                          http_reason(response.status), clean(response.content_type));
  for (const auto& [name, value] : response.headers) {
    head += fmt::format("{}: {}\r\n", clean(name), clean(value));
  }
  head += chunked ? std::string("Transfer-Encoding: chunked\r\n")
                  : fmt::format("Content-Length: {}\r\n", response.body.size());
  head += keep_alive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n";
  return head;
}

}  // namespace

std::string IncomingRequest::header(std::string_view name) const {
  const auto wanted = ascii_lowercase(name);
  for (const auto& [key, value] : headers) {
    if (key == wanted) return value;
  }
  return "";
}

bool IncomingRequest::has_header(std::string_view name) const {
  const auto wanted = ascii_lowercase(name);
  return std::any_of(headers.begin(), headers.end(),
                     [&](const auto& header) { return header.first == wanted; });
}

struct HttpServer::Impl {
  explicit Impl(HttpLimits limits_) : limits(limits_) {
    if (::pipe2(wake_pipe, O_NONBLOCK | O_CLOEXEC) != 0) {
      throw std::system_error(errno, std::generic_category(), "g2c-serve: pipe2");
    }
  }
  ~Impl() {
    if (listen_fd >= 0) ::close(listen_fd);
    ::close(wake_pipe[0]);
    ::close(wake_pipe[1]);
  }

  HttpLimits limits;
  std::map<std::pair<std::string, std::string>, RequestHandler> routes;  // (method, path)
  ErrorAnswer error_answer;
  HeadCheck head_check;
  std::function<void(const IncomingRequest&, int)> on_answered;
  std::function<void(const IncomingRequest&, OutgoingResponse&)> answer_headers;
  int listen_fd = -1;
  int wake_pipe[2] = {-1, -1};
  std::atomic<bool> stopping{false};
  std::atomic<std::size_t> open_connections{0};

  std::mutex mutex;  // guards the three below
  std::condition_variable work_ready;
  std::deque<std::unique_ptr<Connection>> queue;      // complete requests for the workers
  std::vector<std::unique_ptr<Connection>> returned;  // kept-alive, back from the workers
  bool workers_done = false;

  void wake() {
    const char byte = 1;
    [[maybe_unused]] const auto written = ::write(wake_pipe[1], &byte, 1);
  }

  void close_connection(std::unique_ptr<Connection> connection) {
    if (!connection) return;
    connection.reset();
    --open_connections;
  }

  /// The error answer for `status`, made by the server's ErrorAnswer (JSON in its protocol); a
  /// plain one should that fail.
  OutgoingResponse error_response(const IncomingRequest& request, int status,
                                  const std::string& message) {
    OutgoingResponse response;
    response.status = status;
    try {
      if (error_answer) error_answer(request, response, status, message);
    } catch (...) {
      response = {};
      response.status = status;
    }
    if (response.body.empty()) {
      response.set_content(std::string(http_reason(status)) + "\n", "text/plain; charset=utf-8");
    }
    if (status == 503) response.headers.emplace_back("Retry-After", "1");
    return response;
  }

  /// The server's headers for every answer (CORS, say); a hook that throws adds none.
  void add_answer_headers(const IncomingRequest& request, OutgoingResponse& response) {
    if (!answer_headers) return;
    try {
      answer_headers(request, response);
    } catch (...) {
    }
  }

  /// The answer for a streamed response whose producer threw before writing anything: the
  /// route's own translation when it gave one (OutgoingResponse::on_failure), else a 500.
  OutgoingResponse failure_response(const IncomingRequest& request,
                                    const OutgoingResponse& streamed,
                                    const std::exception& failure) {
    if (streamed.on_failure) {
      OutgoingResponse answer;
      try {
        streamed.on_failure(failure, answer);
        return answer;
      } catch (...) {
      }
    }
    return error_response(request, 500, "the server failed: " + first_line(failure.what()));
  }

  /// Answers a request the layer refuses while reading it, then drops what the client still
  /// sends for a moment (so it can read the answer before the connection closes).
  void refuse(Connection& connection, int status, const std::string& message) {
    auto response = error_response(connection.request, status, message);
    add_answer_headers(connection.request, response);
    // One attempt that never waits: the answer is small, and a client that takes nothing loses it.
    send_all(connection.fd, response_head(response, false, false) + response.body,
             std::chrono::milliseconds(0));
    ::shutdown(connection.fd, SHUT_WR);
    connection.phase = Phase::kDraining;
    connection.buffer.clear();
    connection.deadline = Clock::now() + std::chrono::seconds(1);
    if (on_answered) {
      try {
        on_answered(connection.request, status);
      } catch (...) {
      }
    }
  }

  /// A connection ready for its next request (new, or kept alive).
  void start_request(Connection& connection) {
    connection.phase = Phase::kHead;
    connection.scanned = 0;
    connection.request = IncomingRequest{};
    connection.trailer_bytes = 0;
    connection.started = !connection.buffer.empty();
    connection.deadline =
        Clock::now() + (connection.started ? limits.request_timeout : limits.idle_timeout);
  }

  /// Moves up to body_left bytes from the buffer to the body; true once all of them have come.
  static bool take_body_bytes(Connection& connection) {
    const auto take = std::min(connection.body_left, connection.buffer.size());
    connection.request.body.append(connection.buffer, 0, take);
    connection.buffer.erase(0, take);
    connection.body_left -= take;
    return connection.body_left == 0;
  }

  /// Takes what `connection.buffer` holds as far as it goes; true when a request is complete.
  bool advance(Connection& connection) {
    auto& buffer = connection.buffer;
    while (true) {
      switch (connection.phase) {
        case Phase::kHead: {
          // Blank lines before a request are allowed (RFC 9112 section 2.2).
          while (connection.scanned == 0 &&
                 (buffer.starts_with("\r\n") || buffer.starts_with("\n"))) {
            buffer.erase(0, buffer.starts_with("\n") ? 1 : 2);
          }
          const auto end = find_head_end(buffer, connection.scanned);
          // The request line alone may be over its limit (414) before the head is (431).
          const auto line_end = buffer.find('\n');
          if ((line_end == std::string::npos ? buffer.size() : line_end) >
              limits.max_target_bytes + 64) {
            refuse(connection, 414,
                   fmt::format("the request line is over {} bytes", limits.max_target_bytes));
            return false;
          }
          if ((end == std::string::npos ? buffer.size() : end) > limits.max_head_bytes) {
            refuse(connection, 431,
                   fmt::format("the request's headers are over {} bytes", limits.max_head_bytes));
            return false;
          }
          if (end == std::string::npos) return false;
          auto refusal =
              parse_head(std::string_view(buffer).substr(0, end), connection.request, limits);
          buffer.erase(0, end);
          if (!refusal) refusal = read_framing(connection, limits);
          if (!refusal && head_check) {
            try {
              refusal = head_check(connection.request);
            } catch (const std::exception& failure) {
              refusal = Refusal{500, first_line(failure.what())};
            }
          }
          if (!refusal) {
            const auto expect =
                ascii_lowercase(strip(connection.request.header("expect"), kBlanks));
            if (!expect.empty() && expect != "100-continue") {
              refusal = Refusal{417, "only \"Expect: 100-continue\" is understood"};
            } else if (!expect.empty() && connection.request.version == "HTTP/1.1") {
              send_all(connection.fd, "HTTP/1.1 100 Continue\r\n\r\n",
                       std::chrono::milliseconds(0));
            }
          }
          if (refusal) {
            refuse(connection, refusal->status, refusal->message);
            return false;
          }
          connection.keep_alive = wants_keep_alive(connection.request);
          break;
        }
        case Phase::kBody:
          if (!take_body_bytes(connection)) return false;
          connection.phase = Phase::kDispatched;
          return true;
        case Phase::kChunkSize: {
          const auto newline = buffer.find('\n');
          if (newline == std::string::npos) {
            if (buffer.size() > 1024) refuse(connection, 400, "a chunk's size line is too long");
            return false;
          }
          // The size, without the line break and any chunk extension (";name=value", ignored).
          const auto line =
              strip(std::string_view(buffer).substr(0, buffer.find_first_of(";\n")), " \t\r");
          std::size_t size = 0;
          const auto [end, error] =
              std::from_chars(line.data(), line.data() + line.size(), size, 16);
          if (line.empty() || error != std::errc() || end != line.data() + line.size()) {
            refuse(connection, 400, "a chunk's size is not a hexadecimal number");
            return false;
          }
          buffer.erase(0, newline + 1);
          if (size > limits.max_body_bytes - connection.request.body.size()) {
            refuse(connection, 413,
                   fmt::format("the request body is over {} bytes", limits.max_body_bytes));
            return false;
          }
          connection.body_left = size;
          connection.phase = size == 0 ? Phase::kTrailers : Phase::kChunkData;
          break;
        }
        case Phase::kChunkData:
          if (!take_body_bytes(connection)) return false;
          connection.phase = Phase::kChunkEnd;
          break;
        case Phase::kChunkEnd: {
          if (buffer.starts_with("\n")) {
            buffer.erase(0, 1);
          } else if (buffer.starts_with("\r\n")) {
            buffer.erase(0, 2);
          } else if (buffer.size() < 2 && (buffer.empty() || buffer[0] == '\r')) {
            return false;
          } else {
            refuse(connection, 400, "a chunk's bytes are longer than its size says");
            return false;
          }
          connection.phase = Phase::kChunkSize;
          break;
        }
        case Phase::kTrailers: {
          const auto newline = buffer.find('\n');
          if (newline == std::string::npos) {
            if (connection.trailer_bytes + buffer.size() > limits.max_head_bytes) {
              refuse(connection, 431, "the request's trailing headers are too long");
            }
            return false;
          }
          connection.trailer_bytes += newline + 1;
          const bool blank = newline == 0 || (newline == 1 && buffer[0] == '\r');
          buffer.erase(0, newline + 1);
          if (connection.trailer_bytes > limits.max_head_bytes) {
            refuse(connection, 431, "the request's trailing headers are too long");
            return false;
          }
          if (!blank) break;
          connection.phase = Phase::kDispatched;
          return true;
        }
        case Phase::kDispatched:
          return true;
        case Phase::kDraining:
          buffer.clear();
          return false;
      }
    }
  }

  /// Reads what the socket has; false when the client has closed or failed.
  bool read_some(Connection& connection) {
    char chunk[16 << 10];
    // A bounded number of reads per wake, so one client that sends without pause cannot keep the
    // thread from the others.
    for (int reads = 0; reads < 64; ++reads) {
      const auto got = ::recv(connection.fd, chunk, sizeof chunk, 0);
      if (got > 0) {
        if (connection.phase == Phase::kDraining) continue;
        if (!connection.started) {
          connection.started = true;
          connection.deadline = Clock::now() + limits.request_timeout;
        }
        connection.buffer.append(chunk, static_cast<std::size_t>(got));
        // Never more than a request's worth ahead: the rest waits in the kernel.
        if (connection.buffer.size() > limits.max_head_bytes + limits.max_body_bytes) return true;
        continue;
      }
      if (got < 0 && errno == EINTR) continue;
      if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
      return false;  // closed (0) or failed
    }
    return true;
  }

  /// Hands a complete request to the workers; 503 when the queue is full.
  void dispatch(std::unique_ptr<Connection>& connection) {
    std::unique_lock lock(mutex);
    if (queue.size() >= limits.max_queue) {
      lock.unlock();
      refuse(*connection, 503,
             fmt::format("g2c-serve is busy: {} requests are already waiting; try again",
                         limits.max_queue));
      return;
    }
    const int fd = connection->fd;
    connection->request.client_connected = [fd] { return peer_connected(fd); };
    queue.push_back(std::move(connection));
    work_ready.notify_one();
  }

  void accept_new(std::map<int, std::unique_ptr<Connection>>& connections) {
    while (true) {
      const int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        return;  // EAGAIN: none left; EMFILE and the like: try again on the next wake
      }
      ++open_connections;
      auto connection = std::make_unique<Connection>(fd);
      if (open_connections > limits.max_connections) {
        refuse(*connection, 503,
               fmt::format("g2c-serve has {} connections open; try again", limits.max_connections));
        connection->deadline = Clock::now() + std::chrono::milliseconds(200);
      } else {
        start_request(*connection);
      }
      connections.emplace(fd, std::move(connection));
    }
  }

  /// The reading thread: every connection that is not with a worker, until stop().
  void reactor() {
    std::map<int, std::unique_ptr<Connection>> connections;
    std::vector<pollfd> polled;
    while (!stopping) {
      std::erase_if(connections, [](const auto& entry) { return !entry.second; });
      std::vector<std::unique_ptr<Connection>> back;
      {
        std::lock_guard lock(mutex);
        back.swap(returned);
      }
      for (auto& connection : back) {
        start_request(*connection);
        auto& slot = connections[connection->fd];
        slot = std::move(connection);
        if (advance(*slot)) dispatch(slot);  // a pipelined request already here
      }
      const auto now = Clock::now();
      for (auto& [fd, connection] : connections) {
        if (!connection || connection->deadline > now) continue;
        if (connection->phase == Phase::kDraining || !connection->started) {
          close_connection(std::move(connection));  // idle, or done draining
        } else {
          refuse(*connection, 408,
                 fmt::format("the request did not arrive within {} s: send it whole, and sooner",
                             limits.request_timeout.count() / 1000.0));
        }
      }
      // Entries left empty went to a worker or were closed.
      std::erase_if(connections, [](const auto& entry) { return !entry.second; });
      auto wait = std::chrono::milliseconds(1000);
      for (const auto& [fd, connection] : connections) {
        wait = std::min(wait, std::chrono::duration_cast<std::chrono::milliseconds>(
                                  connection->deadline - now) +
                                  std::chrono::milliseconds(1));
      }

      polled.clear();
      polled.push_back({wake_pipe[0], POLLIN, 0});
      polled.push_back({listen_fd, POLLIN, 0});
      for (const auto& [fd, connection] : connections) polled.push_back({fd, POLLIN, 0});
      const int ready = ::poll(polled.data(), polled.size(), static_cast<int>(wait.count()));
      if (ready < 0 && errno != EINTR) break;
      if (ready <= 0) continue;
      if (polled[0].revents) {
        char drain[64];
        while (::read(wake_pipe[0], drain, sizeof drain) > 0) {
        }
      }
      if (stopping) break;
      if (polled[1].revents & POLLIN) accept_new(connections);
      for (std::size_t i = 2; i < polled.size(); ++i) {
        if (!polled[i].revents) continue;
        auto found = connections.find(polled[i].fd);
        if (found == connections.end()) continue;
        auto& connection = found->second;
        const bool open = read_some(*connection);
        if (advance(*connection)) {
          dispatch(connection);
        } else if (!open) {
          close_connection(std::move(connection));
        }
      }
    }
    for (auto& [fd, connection] : connections) close_connection(std::move(connection));
  }

  /// Answers one complete request; true when the connection may carry another.
  bool serve(Connection& connection) {
    auto& request = connection.request;
    const bool head_only = request.method == "HEAD";
    OutgoingResponse response;
    if (stopping) {
      response = error_response(request, 503, "g2c-serve is stopping");
    } else {
      const auto route =
          routes.find({head_only ? std::string("GET") : request.method, request.path});
      const bool known_path = std::any_of(routes.begin(), routes.end(), [&](const auto& entry) {
        return entry.first.second == request.path;
      });
      if (route == routes.end() && known_path && request.method == "OPTIONS") {
        // A browser's preflight: the methods the path answers (CORS headers come from
        // answer_headers).
        response.status = 204;
        std::string allowed = "OPTIONS";
        for (const auto& [key, handler] : routes) {
          if (key.second == request.path) allowed += ", " + key.first;
        }
        response.headers.emplace_back("Allow", allowed);
      } else if (route == routes.end()) {
        response =
            known_path
                ? error_response(request, 405,
                                 fmt::format("{} does not answer {}", request.path, request.method))
                : error_response(
                      request, 404,
                      fmt::format("no such endpoint: {} {}", request.method, request.path));
      } else {
        try {
          route->second(request, response);
        } catch (const std::exception& failure) {
          response =
              error_response(request, 500, "the server failed: " + first_line(failure.what()));
        } catch (...) {
          response = error_response(request, 500, "the server failed");
        }
      }
    }
    add_answer_headers(request, response);
    bool keep_alive = connection.keep_alive && !stopping;
    const bool streamed = response.stream && !head_only;
    if (streamed && request.version == "HTTP/1.0") keep_alive = false;
    const bool chunked = streamed && request.version == "HTTP/1.1";
    bool delivered = true;
    if (!streamed) {
      auto whole = response_head(response, false, keep_alive);
      if (!head_only) whole += response.body;
      delivered = send_all(connection.fd, whole, limits.write_timeout);
    } else {
      // The head goes out with the first piece: a producer that fails before writing anything
      // (a prompt too long, a model that cannot be loaded) still gets a proper error answer.
      bool head_sent = false;
      const StreamWriter write = [&](std::string_view piece) {
        if (!delivered) return false;
        if (piece.empty()) return true;
        std::string framed = head_sent ? "" : response_head(response, chunked, keep_alive);
        head_sent = true;
        framed += chunked ? fmt::format("{:x}\r\n{}\r\n", piece.size(), piece) : std::string(piece);
        delivered = send_all(connection.fd, framed, limits.write_timeout);
        return delivered;
      };
      bool complete = false;
      try {
        complete = response.stream(write) && delivered;
      } catch (const std::exception& failure) {
        if (!head_sent) {
          response = failure_response(request, response, failure);
          auto whole = response_head(response, false, keep_alive) + response.body;
          delivered = send_all(connection.fd, whole, limits.write_timeout);
          head_sent = complete = true;
        }
        // Else the head is sent: cutting the connection is all that is left.
      } catch (...) {
      }
      if (complete && !head_sent) {  // nothing was written: an empty body
        complete = send_all(connection.fd, response_head(response, chunked, keep_alive),
                            limits.write_timeout);
      }
      if (complete && chunked && response.stream) {
        complete = send_all(connection.fd, "0\r\n\r\n", limits.write_timeout);
      }
      delivered = delivered && complete;
      keep_alive = keep_alive && complete && !stopping;
    }
    if (on_answered) {
      try {
        on_answered(request, response.status);
      } catch (...) {
      }
    }
    return delivered && keep_alive;
  }

  void worker() {
    while (true) {
      std::unique_ptr<Connection> connection;
      {
        std::unique_lock lock(mutex);
        work_ready.wait(lock, [&] { return workers_done || !queue.empty(); });
        if (queue.empty()) return;
        connection = std::move(queue.front());
        queue.pop_front();
      }
      if (serve(*connection) && !stopping) {
        std::lock_guard lock(mutex);
        returned.push_back(std::move(connection));
        wake();
      } else {
        close_connection(std::move(connection));
      }
    }
  }
};

HttpServer::HttpServer(HttpLimits limits) : impl_(std::make_unique<Impl>(limits)) {
  if (limits.workers == 0 || limits.max_connections == 0) {
    throw ValueError("HttpLimits: workers and max_connections must be at least 1");
  }
}

HttpServer::~HttpServer() = default;

void HttpServer::route(const std::string& method, const std::string& path, RequestHandler handler) {
  impl_->routes[{method, path}] = std::move(handler);
}

void HttpServer::set_error_answer(ErrorAnswer answer) {
  impl_->error_answer = std::move(answer);
}

void HttpServer::set_head_check(HeadCheck check) {
  impl_->head_check = std::move(check);
}

void HttpServer::set_answer_headers(
    std::function<void(const IncomingRequest&, OutgoingResponse&)> headers) {
  impl_->answer_headers = std::move(headers);
}

void HttpServer::set_on_answered(std::function<void(const IncomingRequest&, int)> on_answered) {
  impl_->on_answered = std::move(on_answered);
}

int HttpServer::bind(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const auto service = std::to_string(port);
  if (const int error =
          ::getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &found);
      error != 0) {
    throw ValueError(fmt::format("cannot listen on {}:{}: {}", host, port, ::gai_strerror(error)));
  }
  int failure = 0;
  for (auto* address = found; address; address = address->ai_next) {
    const int fd =
        ::socket(address->ai_family, address->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      failure = errno;
      continue;
    }
    const int on = 1;
    // SO_REUSEADDR lets a restarted server bind past old connections in TIME_WAIT; without
    // SO_REUSEPORT a second server on a taken port fails here instead of sharing it.
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (::bind(fd, address->ai_addr, address->ai_addrlen) == 0 && ::listen(fd, 128) == 0) {
      impl_->listen_fd = fd;
      break;
    }
    failure = errno;
    ::close(fd);
  }
  ::freeaddrinfo(found);
  if (impl_->listen_fd < 0) {
    throw ValueError(fmt::format("cannot listen on {}:{}: {}", host, port, std::strerror(failure)));
  }
  sockaddr_storage bound{};
  socklen_t size = sizeof bound;
  ::getsockname(impl_->listen_fd, reinterpret_cast<sockaddr*>(&bound), &size);
  return ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                           : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
}

void HttpServer::listen() {
  if (impl_->listen_fd < 0) throw ValueError("HttpServer::listen: call bind() first");
  std::vector<std::thread> workers;
  for (std::size_t i = 0; i < impl_->limits.workers; ++i) {
    workers.emplace_back([this] { impl_->worker(); });
  }
  impl_->reactor();
  {
    std::lock_guard lock(impl_->mutex);
    impl_->workers_done = true;
  }
  impl_->work_ready.notify_all();
  for (auto& worker : workers) worker.join();
  std::lock_guard lock(impl_->mutex);
  impl_->returned.clear();
}

void HttpServer::stop() {
  impl_->stopping = true;
  impl_->wake();
}

bool HttpServer::stopping() const {
  return impl_->stopping;
}

std::string_view http_reason(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 413:
      return "Content Too Large";
    case 414:
      return "URI Too Long";
    case 415:
      return "Unsupported Media Type";
    case 417:
      return "Expectation Failed";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Unknown";
  }
}

}  // namespace g2c::inference
