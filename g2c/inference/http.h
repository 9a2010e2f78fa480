// Module 16, implemented for you — the one HTTP call a client of a model server makes: a request
// out, a status and a body back. Backends take the transport as a function, so the tests give
// them a fake one that records what was sent (the Python tests inject a fake urlopen) and no test
// needs a server.
#pragma once

#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>

namespace g2c::inference {

struct HttpRequest {
  std::string method = "POST";
  std::string url;  // "http://host:port/path"
  std::map<std::string, std::string> headers;
  std::string body;
  /// When set, the answer's body as it arrives, in the chunks the network delivers (a streamed
  /// reply read while it comes); the response still carries the whole body. A transport that
  /// cannot stream (a test's fake) may leave it uncalled: the body then arrives all at once.
  std::function<void(std::string_view chunk)> on_body = {};
};

struct HttpResponse {
  int status = 0;  // 200, 404, 500, …: any status the server answered with
  std::string body;
};

/// The server could not be reached: refused, timed out, a URL that is not http://host[:port]/…
/// (the Python edition's URLError).
class NetworkError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Sends `request`, waiting at most `timeout_seconds` to connect and for each read; returns the
/// server's answer whatever its status. Throws NetworkError when there is no answer.
using HttpTransport =
    std::function<HttpResponse(const HttpRequest& request, double timeout_seconds)>;

/// A server's base URL as clients join paths to it: without trailing slashes.
/// Example: "http://localhost:11434/" -> "http://localhost:11434".
std::string without_trailing_slashes(std::string url);

/// The real transport, HTTP/1.1 over cpp-httplib (http:// only). In a build without the library
/// every call throws NetworkError saying how to get it (scripts/setup.sh installs it).
HttpResponse http_send(const HttpRequest& request, double timeout_seconds);

}  // namespace g2c::inference
