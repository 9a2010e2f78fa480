#include "g2c/inference/http.h"

#include <cmath>
#include <cstdint>
#include <exception>

#include <fmt/format.h>

#if defined(G2C_HAVE_HTTPLIB)
#include <httplib.h>
#endif

namespace g2c::inference {

namespace {

// "http://host:port/path?query" -> {"http://host:port", "/path?query"}.
std::pair<std::string, std::string> split_url(const std::string& url) {
  const auto scheme = url.find("://");
  if (scheme == std::string::npos || url.compare(0, scheme, "http") != 0) {
    throw NetworkError(fmt::format("'{}' is not an http://host[:port]/path URL", url));
  }
  const auto path = url.find('/', scheme + 3);
  if (path == std::string::npos) return {url, "/"};
  return {url.substr(0, path), url.substr(path)};
}

}  // namespace

HttpResponse http_send(const HttpRequest& request, double timeout_seconds) {
  const auto [origin, path] = split_url(request.url);
#if defined(G2C_HAVE_HTTPLIB)
  httplib::Client client(origin);
  const auto seconds = static_cast<time_t>(std::floor(timeout_seconds));
  const auto microseconds =
      static_cast<time_t>((timeout_seconds - std::floor(timeout_seconds)) * 1e6);
  client.set_connection_timeout(seconds, microseconds);
  client.set_read_timeout(seconds, microseconds);
  client.set_write_timeout(seconds, microseconds);
  httplib::Headers headers;
  std::string content_type = "application/octet-stream";
  for (const auto& [key, value] : request.headers) {
    if (key == "Content-Type") {
      content_type = value;
    } else {
      headers.emplace(key, value);
    }
  }
  if (!request.on_body) {
    httplib::Result result = request.method == "GET"
                                 ? client.Get(path, headers)
                                 : client.Post(path, headers, request.body, content_type);
    if (!result) {
      throw NetworkError(fmt::format("{} {}: {}", request.method, request.url,
                                     httplib::to_string(result.error())));
    }
    return {result->status, result->body};
  }
  // Streamed: the body is handed on chunk by chunk as it is read. What the callback throws is
  // kept and rethrown here, after the connection is closed, never through the library.
  httplib::Request streamed;
  streamed.method = request.method;
  streamed.path = path;
  streamed.headers = headers;
  if (request.method != "GET") {
    streamed.body = request.body;
    streamed.set_header("Content-Type", content_type);
  }
  std::string body;
  std::exception_ptr failure;
  streamed.content_receiver = [&](const char* data, std::size_t size, std::uint64_t,
                                  std::uint64_t) {
    body.append(data, size);
    try {
      request.on_body(std::string_view(data, size));
    } catch (...) {
      failure = std::current_exception();
      return false;  // stop reading
    }
    return true;
  };
  httplib::Result result = client.send(streamed);
  if (failure) std::rethrow_exception(failure);
  if (!result) {
    throw NetworkError(
        fmt::format("{} {}: {}", request.method, request.url, httplib::to_string(result.error())));
  }
  return {result->status, std::move(body)};
#else
  (void)timeout_seconds;
  throw NetworkError(fmt::format(
      "{} {}: this build has no HTTP client; install libcpp-httplib-dev (scripts/setup.sh does) "
      "and configure again",
      request.method, origin + path));
#endif
}

std::string without_trailing_slashes(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

}  // namespace g2c::inference
