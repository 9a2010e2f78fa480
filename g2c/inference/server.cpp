#include "g2c/inference/server.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "g2c/core/cli.h"
#include "g2c/core/errors.h"
#include "g2c/core/strip.h"
#include "g2c/inference/serve_json.h"

namespace g2c::inference {

using namespace serve;

namespace {

// --- who may ask
// ----------------------------------------------------------------------------------

/// The host in a Host header or an origin's authority: "[::1]:11434" -> "::1", "localhost:8080"
/// -> "localhost", in lower case.
std::string host_name(std::string_view authority) {
  std::string host;
  if (authority.starts_with('[')) {
    host = std::string(authority.substr(1, authority.find(']') - 1));
  } else {
    const auto colon = authority.find(':');
    host = std::string(authority.substr(0, colon));
  }
  return ascii_lowercase(host);
}

/// Whether `host` names this machine: localhost, a 127.x.y.z address or ::1.
bool is_loopback_name(const std::string& host) {
  return host == "localhost" || host.ends_with(".localhost") || host.starts_with("127.") ||
         host == "::1";
}

/// Whether the server was told to listen on this machine only.
bool listens_on_loopback(const std::string& host) {
  return is_loopback_name(ascii_lowercase(host));
}

}  // namespace

bool Server::origin_allowed(const std::string& origin) const {
  const auto scheme_end = origin.find("://");
  const bool local = scheme_end != std::string::npos &&
                     (origin.starts_with("http://") || origin.starts_with("https://")) &&
                     is_loopback_name(host_name(std::string_view(origin).substr(scheme_end + 3)));
  return local || std::any_of(options_.allowed_origins.begin(), options_.allowed_origins.end(),
                              [&](const std::string& allowed) {
                                return allowed == "*" || allowed == origin;
                              });
}

void Server::add_cors_headers(const IncomingRequest& request, OutgoingResponse& response) const {
  // A page may read an answer only when it says so: every answer to an allowed origin does.
  const auto origin = request.header("origin");
  if (origin.empty() || !origin_allowed(origin)) return;
  response.headers.emplace_back("Access-Control-Allow-Origin", origin);
  response.headers.emplace_back("Vary", "Origin");
  if (request.method == "OPTIONS") {
    response.headers.emplace_back("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
    response.headers.emplace_back("Access-Control-Allow-Headers", "Authorization, Content-Type");
    response.headers.emplace_back("Access-Control-Max-Age", "600");
  }
}

std::optional<Refusal> Server::check_head(const IncomingRequest& head) const {
  // A web page the user opens can send requests to 127.0.0.1; DNS rebinding makes them carry the
  // page's own name as Host. A server listening on this machine only answers this machine's names,
  // and pages of local origins or the ones --allow-origin lists — as Ollama does.
  if (listens_on_loopback(options_.host) && head.has_header("host")) {
    const auto host = host_name(head.header("host"));
    if (!host.empty() && !is_loopback_name(host)) {
      return Refusal{403, fmt::format("g2c-serve answers requests for this machine only (Host: "
                                      "localhost or 127.0.0.1), not for Host: {}",
                                      excerpt(json(head.header("host"))))};
    }
  }
  if (head.has_header("origin")) {
    const auto origin = head.header("origin");
    if (!origin_allowed(origin)) {
      return Refusal{403, fmt::format("requests from web pages at {} are refused; start g2c-serve "
                                      "with --allow-origin {} to accept them",
                                      excerpt(json(origin)), excerpt(json(origin)))};
    }
  }
  // A browser sends its preflight (OPTIONS) without the key; the request after it carries it.
  if (!options_.api_key.empty() && head.method != "OPTIONS") {
    const auto expected = "Bearer " + options_.api_key;
    const auto given = head.header("authorization");
    // Compared in time that does not depend on where the first difference is.
    unsigned char difference = given.size() == expected.size() ? 0 : 1;
    for (std::size_t i = 0; i < std::min(given.size(), expected.size()); ++i) {
      difference |= static_cast<unsigned char>(given[i] ^ expected[i]);
    }
    if (difference != 0) {
      return Refusal{401,
                     "this g2c-serve needs its API key: send \"Authorization: Bearer <key>\" "
                     "(the key given to --api-key)"};
    }
  }
  return std::nullopt;
}

// --- routes -----------------------------------------------------------------------------------

namespace {

using Route = std::function<void(const IncomingRequest&, OutgoingResponse&)>;

/// A route whose failures become the protocol's error answers, whatever was thrown.
RequestHandler guarded(Route route, ErrorWriter error) {
  return [route = std::move(route), error](const IncomingRequest& request,
                                           OutgoingResponse& response) {
    // A pool thread starts with OpenMP's own thread count (every core), not the one the process
    // set with torch::set_num_threads (g2c-serve's --torch-threads): take the process's.
    at::init_num_threads();
    try {
      route(request, response);
    } catch (const EndGeneration&) {
      error(response, 503, "g2c-serve is stopping; the generation was ended");
    } catch (const ClientGone&) {
      response.status = 499;  // nobody is there to read it (nginx's "client closed request")
    } catch (const BadRequest& bad) {
      error(response, bad.status, bad.message);
    } catch (const std::exception& failure) {
      answer_failure(failure, response, error);
    } catch (...) {
      error(response, 500, "the server failed with an unknown error");
    }
  };
}

/// A request path as a log line shows it: printable ASCII, at most 200 characters.
std::string printable(const std::string& text) {
  std::string out;
  for (const char c : text.substr(0, 200)) {
    out += (c >= 0x20 && c < 0x7f) ? c : '?';
  }
  return out;
}

HttpLimits limits_of(const ServerOptions& options) {
  HttpLimits limits;
  limits.max_body_bytes = options.max_body_bytes;
  limits.workers = std::max<std::size_t>(options.threads, 1);
  limits.max_queue = options.max_queue;
  return limits;
}

}  // namespace

struct Server::Impl {
  explicit Impl(const ServerOptions& options) : http(limits_of(options)) {}
  HttpServer http;
  bool bound = false;
};

Server::Server(ServerOptions options)
    : options_(std::move(options)),
      registry_(options_.models_dir),
      impl_(std::make_unique<Impl>(options_)) {
  for (const auto& adapter : options_.adapters) registry_.add_adapter(adapter);
  auto& http = impl_->http;
  const auto route = [&](const char* method, const char* path, ErrorWriter error, Route handler) {
    http.route(method, path, guarded(std::move(handler), error));
  };
  using Request = const IncomingRequest&;
  using Response = OutgoingResponse&;

  http.route("GET", "/", [](Request, Response response) {
    response.set_content("g2c-serve is running (Ollama's and OpenAI's protocols)\n", "text/plain");
  });
  http.route("GET", "/api/version", [](Request, Response response) {
    answer_json(response, {{"version", "0.6.0"}});
  });
  route("GET", "/api/tags", ollama_error, [this](Request, Response r) { answer_tags(r); });
  route("GET", "/api/ps", ollama_error, [this](Request, Response r) { answer_ps(r); });
  route("POST", "/api/show", ollama_error, [this](Request q, Response r) { answer_show(q, r); });
  route("POST", "/api/generate", ollama_error,
        [this](Request q, Response r) { answer_ollama(q, r, false); });
  route("POST", "/api/chat", ollama_error,
        [this](Request q, Response r) { answer_ollama(q, r, true); });
  route("POST", "/api/embed", ollama_error,
        [this](Request q, Response r) { answer_embed(q, r, false); });
  route("POST", "/api/embeddings", ollama_error,
        [this](Request q, Response r) { answer_embed(q, r, true); });
  route("GET", "/v1/models", openai_error,
        [this](Request, Response r) { answer_openai_models(r); });
  route("POST", "/v1/chat/completions", openai_error,
        [this](Request q, Response r) { answer_openai_chat(q, r); });
  route("POST", "/v1/embeddings", openai_error,
        [this](Request q, Response r) { answer_openai_embeddings(q, r); });

  // Answers the HTTP layer gives itself (no route, a request over a limit, a full queue, a refused
  // origin) are JSON errors in the protocol of the path asked for.
  http.set_error_answer([](const IncomingRequest& request, OutgoingResponse& response, int status,
                           const std::string& message) {
    (request.path.starts_with("/v1/") ? openai_error : ollama_error)(response, status, message);
  });
  http.set_head_check([this](const IncomingRequest& head) { return check_head(head); });
  http.set_answer_headers([this](const IncomingRequest& request, OutgoingResponse& response) {
    add_cors_headers(request, response);
  });
  http.set_on_answered([this](const IncomingRequest& request, int status) {
    const auto answered = ++answered_;
    if (options_.log_requests) {
      std::cerr << fmt::format("g2c-serve: {} {} -> {}\n", printable(request.method),
                               printable(request.path), status);
    }
    if (options_.max_requests > 0 && answered >= options_.max_requests) impl_->http.stop();
  });
}

// --- generating
// -----------------------------------------------------------------------------------

std::shared_ptr<ServedModel> Server::model_for(const std::string& name, double& load_ms) {
  auto model = registry_.get(name, &load_ms);
  if (!model) {
    const auto names = registry_.names();
    throw BadRequest{404,
                     fmt::format("model {} not found; this server has: {}", excerpt(json(name)),
                                 names.empty() ? std::string("none (run scripts/setup.sh, or "
                                                             "train a course model)")
                                               : fmt::format("{}", fmt::join(names, ", ")))};
  }
  return model;
}

std::shared_ptr<ServedModel> Server::model_with_embeddings(const std::string& name,
                                                           double& load_ms) {
  auto model = model_for(name, load_ms);
  if (!model->embeddings) {
    throw ValueError(
        fmt::format("{} is a course model, which has no embedding interface; embed "
                    "with SmolLM2-135M-Instruct",
                    model->name));
  }
  return model;
}

ServeResult Server::generate(ServeRequest request, const IncomingRequest& http,
                             const std::function<bool(const std::string&)>& on_piece) {
  auto& model = *request.model;
  auto& options = request.options;
  options.max_new_tokens =
      request.max_new_tokens < 0 ? model.unlimited_reply_tokens : request.max_new_tokens;
  const auto started = Clock::now();
  std::optional<Clock::time_point> first_piece;  // the end of the prompt's evaluation
  bool gone = false;
  options.on_text = [&](std::string_view piece) {
    if (!first_piece) first_piece = Clock::now();
    if (on_piece && !gone && !on_piece(std::string(piece))) gone = true;
  };
  // Asked as each token is drawn: a client that left (streamed: a write failed; whole: the socket
  // says so) or a server that stops ends the generation there.
  options.extras.keep_going = [&] {
    if (!gone && !on_piece && !http.client_connected()) gone = true;
    return !gone && !stopping_;
  };
  ServeResult result;
  const auto chat = [&](const std::shared_ptr<ChatBackend>& backend, const json& messages,
                        const json& tools) {
    const auto reply =
        backend->chat_with_tools(messages, tools, ChatOptions::from_sampling(options));
    result.text = reply.content;
    result.tool_calls = reply.tool_calls;
    result.prompt_tokens = reply.prompt_tokens.value_or(0);
    result.completion_tokens = reply.completion_tokens.value_or(0);
    result.stopped = reply.metadata.value("stopped", true) || !reply.tool_calls.empty();
    result.dropped_messages = reply.metadata.value("dropped_messages", std::int64_t{0});
    if (result.dropped_messages > 0 && options_.log_requests) {
      fmt::print(stderr, "g2c-serve: {} oldest message(s) left out to fit the context\n",
                 result.dropped_messages);
    }
  };
  if (request.tools.is_array() && !request.tools.empty()) {
    if (!model.tools) {
      throw ValueError(
          fmt::format("/api/chat: {} takes no tools (a course model has no "
                      "tool-calling turn); send tools to SmolLM2-135M-Instruct, or "
                      "leave them out",
                      model.name));
    }
    chat(model.tools, request.messages, request.tools);
  } else if (!request.messages.is_null()) {
    chat(model.chat, request.messages, json::array());
  } else if (request.raw || !model.prompt_in_template) {
    const auto completion = model.raw->complete(request.prompt, options);
    result.text = completion.completion;
    result.prompt_tokens = completion.prompt_tokens.value_or(0);
    result.completion_tokens = completion.completion_tokens.value_or(0);
    result.stopped = completion.metadata.value("stopped", true);
  } else {
    // /api/generate's prompt as a user turn under `system`, as Ollama does.
    json messages = json::array();
    if (request.system) messages.push_back({{"role", "system"}, {"content", *request.system}});
    messages.push_back({{"role", "user"}, {"content", request.prompt}});
    chat(model.chat, messages, json::array());
  }
  if (stopping_) throw EndGeneration{};
  if (gone) {
    ++abandoned_;
    throw ClientGone{};
  }
  const auto first = first_piece.value_or(Clock::now());
  result.prompt_eval_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(first - started).count();
  result.eval_ns = nanoseconds_since(first);
  return result;
}

void Server::stream(OutgoingResponse& response, const std::string& content_type,
                    ServeRequest request, const IncomingRequest& http, std::string start,
                    std::function<std::string(const std::string&)> line,
                    std::function<std::string(const ServeResult&)> done,
                    std::function<std::string(const std::string&)> error_line, ErrorWriter error) {
  response.on_failure = [error](const std::exception& failure, OutgoingResponse& answer) {
    answer_failure(failure, answer, error);
  };
  response.set_stream(
      content_type,
      [this, request = std::move(request), &http, start = std::move(start), line = std::move(line),
       done = std::move(done), error_line = std::move(error_line)](const StreamWriter& write) {
        bool written = false;
        const auto send = [&](const std::string& text) {
          written = true;
          return write(text);
        };
        // The first piece carries `start` with it: a request that fails before any text is still
        // answered with its proper status.
        auto pending = start;
        const auto piece = [&](const std::string& text) {
          return send(std::exchange(pending, std::string()) + line(text));
        };
        try {
          const auto result = generate(request, http, piece);
          send(std::exchange(pending, std::string()) + done(result));
          return true;
        } catch (const ClientGone&) {
          return false;
        } catch (const EndGeneration&) {
          return false;
        } catch (const std::exception& failure) {
          if (!written) throw;  // the layer answers with on_failure's status
          send(error_line(g2c::describe_error(failure)));
          return true;
        }
      });
}

Server::~Server() {
  stop();
}

void Server::bind() {
  if (impl_->bound) return;
  try {
    port_ = impl_->http.bind(options_.host, options_.port);
  } catch (const ValueError& error) {
    throw ValueError(fmt::format(
        "g2c-serve: something already listens on {}:{}, or the address cannot be used ({}): stop "
        "the other server (Ollama also uses 11434) or give another --port",
        options_.host, options_.port, error.what()));
  }
  impl_->bound = true;
}

void Server::listen() {
  bind();
  impl_->http.listen();
}

void Server::stop() {
  stopping_ = true;  // generations in progress end at their next token
  impl_->http.stop();
}

}  // namespace g2c::inference
