// Module 16 — g2c-serve: the course's models over HTTP, in Ollama's protocol and OpenAI's, so that
// OllamaBackend, the official `ollama` and `openai` Python clients and modules 17-20 have a real
// server on this machine. Implemented for you.
//
//   Ollama   GET  /api/tags             the models it serves
//            POST /api/generate         {"model", "prompt", "system"?, "raw"?, "stream"?,
//                                        "options"?}
//            POST /api/chat             {"model", "messages", "tools"?, "stream"?, "options"?}
//            POST /api/embed            {"model", "input": text or [texts]} -> L2-normalised
//                                       mean-pooled final hidden states (the pretrained model)
//            POST /api/show             {"model"} -> its template, parameters, details and
//                                       capabilities ("completion", "tools", "embedding")
//            GET  /api/ps               the models loaded now
//            GET  /api/version
//   OpenAI   POST /v1/chat/completions  {"model", "messages", "max_tokens"?, "temperature"?,
//                                        "top_p"?, "seed"?, "stop"?, "frequency_penalty"?,
//                                        "presence_penalty"?, "stream"?}
//            POST /v1/embeddings        {"model", "input": text or [texts]}
//            GET  /v1/models
//
// Streaming answers are NDJSON (Ollama: "stream" defaults to true) or server-sent events (OpenAI:
// "stream": true), one piece of text per token as it is generated. Options as Ollama documents
// them, with its defaults: temperature (0.8), top_k (40), top_p (0.9), min_p (0), repeat_penalty
// (1.1) over repeat_last_n (64) tokens, num_predict (-1: until the end token or the context is
// full), num_ctx (the model's whole context here; Ollama's own default is smaller to save memory),
// seed, stop. An option Ollama documents that the course's models do not use (mirostat, num_gpu, …)
// is named in the answer's X-G2C-Ignored-Options header and the log; one Ollama does not know is a
// 400 naming it. A bad request gets a 4xx answer with a JSON error that says what
// was wrong; a client that goes away stops its generation at the next token, streamed or not.
// Requests run at once on a pool of threads, each with its own KV cache and random generator;
// requests still arriving are read by one thread beside them (http_server.h), so a slow client
// holds up no one else. Models are loaded on first use and kept.
//
// Who may ask: a server listening on this machine answers requests addressed to it (Host:
// localhost, 127.0.0.1, [::1]) from programs or from pages of local origins, and refuses other
// web pages (403) unless --allow-origin names them, as Ollama does against DNS rebinding;
// --api-key makes every request show the key.
//
// Tools (module 18): /api/chat with "tools" answers as Ollama does, with "tool_calls" in its
// message. The pretrained model decodes a call under the tools' schemas (PretrainedBackend's
// ToolChoice::Required) whenever the last message is the user's, and answers in text after a
// tool's result. Course artifacts take no tools.
//
// Models by name (compared without case; an Ollama tag such as ":latest" is ignored): the
// pretrained models whose files setup fetched ("SmolLM2-135M-Instruct", packed weights) and every
// course artifact saved under artifacts/models (raw continuation for /api/generate; module 13's
// chat template for /api/chat). The server holds no model code of its own: it calls the course's
// backends (served_models.h), and the protocols are translations (server_ollama_provided.cpp,
// server_openai_provided.cpp) to and from one request value.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "g2c/inference/backend.h"
#include "g2c/inference/http_server.h"
#include "g2c/inference/served_models.h"
#include "g2c/pretraining/model_artifact.h"

namespace g2c::inference {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 11434;  // 0: any free port (port() says which)
  std::size_t max_body_bytes = 1 << 20;
  std::size_t threads = 16;    // requests generated at once
  std::size_t max_queue = 64;  // requests waiting for a thread; past it 503 (OLLAMA_MAX_QUEUE)
  /// Stop by itself after answering this many requests (tests, demos); 0: never.
  std::size_t max_requests = 0;
  std::filesystem::path models_dir = g2c::pretraining::models_root();
  /// LoRA adapter files served beside their base model, each under its own name
  /// (ModelRegistry::add_adapter).
  std::vector<std::filesystem::path> adapters;
  bool log_requests = true;  // one line per request on stderr
  /// Web pages whose requests are answered besides this machine's own ("http://host:port", or
  /// "*" for any). A request with another Origin header gets 403.
  std::vector<std::string> allowed_origins;
  /// When set, every request must carry "Authorization: Bearer <api_key>" (401 otherwise).
  std::string api_key;
};

/// One generation, whichever protocol asked for it: a prompt or a conversation for a model.
struct ServeRequest {
  std::shared_ptr<ServedModel> model;
  double load_ms = 0;       // spent loading the model for this request
  nlohmann::json messages;  // a conversation, as the client sent it; null for a prompt
  std::string prompt;       // /api/generate's
  bool raw = false;         // the prompt continued as text, no template
  std::optional<std::string> system;
  nlohmann::json tools;              // non-empty: a turn with tools
  std::int64_t max_new_tokens = -1;  // -1: the model's unlimited_reply_tokens
  CompletionOptions options;         // sampling and extras (max_new_tokens set from the above)
};

/// What a generation gave, in the units the protocols report.
struct ServeResult {
  std::string text;
  nlohmann::json tool_calls = nlohmann::json::array();  // [{"name", "arguments", "call_id"}]
  std::int64_t prompt_tokens = 0;
  std::int64_t completion_tokens = 0;
  bool stopped = true;                // the end token or a stop string (else the length ran out)
  std::int64_t prompt_eval_ns = 0;    // up to the first piece of text
  std::int64_t eval_ns = 0;           // the rest
  std::int64_t dropped_messages = 0;  // the oldest turns left out to fit the context (Ollama's)
};

/// The HTTP server, on the HTTP layer of http_server.h. listen() blocks until stop() (from any
/// thread, or a signal handler thread) or max_requests answers; generations in progress then end
/// at their next token, streams close, and answers not yet sent get 503.
class Server {
 public:
  explicit Server(ServerOptions options = {});
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  /// Binds host:port. ValueError saying so when the port is taken or the host cannot be bound.
  void bind();
  /// The bound port (after bind()).
  int port() const { return port_; }
  /// Serves until stopped; binds first if bind() was not called.
  void listen();
  void stop();
  std::size_t requests_answered() const { return answered_.load(); }
  /// Generations ended early because their client went away.
  std::size_t generations_abandoned() const { return abandoned_.load(); }
  ModelRegistry& registry() { return registry_; }

 private:
  struct Impl;

  // server.cpp: admission, models, the one generation driver and the one streaming helper.
  std::optional<Refusal> check_head(const IncomingRequest& head) const;
  /// A local page (http(s)://localhost, 127.x, [::1]) or one --allow-origin names.
  bool origin_allowed(const std::string& origin) const;
  /// CORS: an allowed page may read the answer; a preflight learns the methods and headers.
  void add_cors_headers(const IncomingRequest& request, OutgoingResponse& response) const;
  std::shared_ptr<ServedModel> model_for(const std::string& name, double& load_ms);
  /// model_for, and ValueError naming the model that can embed when this one cannot.
  std::shared_ptr<ServedModel> model_with_embeddings(const std::string& name, double& load_ms);
  /// Runs `request` on its model's backend. `on_piece` (streaming) sees the text while it comes
  /// and returns false once the client has gone. Throws ClientGone when the client left, and
  /// EndGeneration when the server is stopping.
  ServeResult generate(ServeRequest request, const IncomingRequest& http,
                       const std::function<bool(const std::string&)>& on_piece = {});
  /// A streamed answer: `start` written first (may be empty), each piece through `line`, then
  /// `done`'s lines; a failure after the first write becomes `error_line`, one before it the
  /// protocol's error answer. `error` writes that answer.
  void stream(OutgoingResponse& response, const std::string& content_type, ServeRequest request,
              const IncomingRequest& http, std::string start,
              std::function<std::string(const std::string& piece)> line,
              std::function<std::string(const ServeResult& result)> done,
              std::function<std::string(const std::string& message)> error_line,
              void (*error)(OutgoingResponse&, int, const std::string&));

  // server_ollama_provided.cpp
  void answer_tags(OutgoingResponse& response);
  void answer_ollama(const IncomingRequest& request, OutgoingResponse& response, bool chat);
  void answer_embed(const IncomingRequest& request, OutgoingResponse& response, bool legacy);
  void answer_show(const IncomingRequest& request, OutgoingResponse& response);
  void answer_ps(OutgoingResponse& response);
  nlohmann::json details_of(const std::string& name);
  nlohmann::json tag_of(const std::string& name);

  // server_openai_provided.cpp
  void answer_openai_models(OutgoingResponse& response);
  void answer_openai_chat(const IncomingRequest& request, OutgoingResponse& response);
  void answer_openai_embeddings(const IncomingRequest& request, OutgoingResponse& response);

  ServerOptions options_;
  ModelRegistry registry_;
  std::unique_ptr<Impl> impl_;
  int port_ = -1;
  std::atomic<std::size_t> answered_{0};
  std::atomic<std::size_t> abandoned_{0};
  std::atomic<std::uint64_t> completions_{0};
  std::atomic<bool> stopping_{false};
};

}  // namespace g2c::inference
