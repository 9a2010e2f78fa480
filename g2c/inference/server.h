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
//            GET  /api/version
//   OpenAI   POST /v1/chat/completions  {"model", "messages", "max_tokens"?, "temperature"?,
//                                        "top_p"?, "seed"?, "stop"?, "stream"?}
//            GET  /v1/models
//
// Streaming answers are NDJSON (Ollama: "stream" defaults to true) or server-sent events (OpenAI:
// "stream": true), one piece of text per token as it is generated. Options as Ollama documents
// them: temperature (0.8), top_k (40), top_p (0.9), num_predict (-1: until the end token or the
// context is full), seed, stop. A bad request gets a 4xx answer with a JSON error that says what
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
// tool's result; one such request runs at a time. Course artifacts take no tools.
//
// Models by name (compared without case; an Ollama tag such as ":latest" is ignored): the
// pretrained models whose files setup fetched ("SmolLM2-135M-Instruct", packed weights) and every
// course artifact saved under artifacts/models (raw continuation for /api/generate; module 13's
// chat template for /api/chat).
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "g2c/inference/backend.h"
#include "g2c/inference/http_server.h"
#include "g2c/pretraining/model_artifact.h"

namespace g2c::inference {

/// One chat turn as the protocols send it.
struct ServedMessage {
  std::string role;  // "system", "user" or "assistant"
  std::string content;
};

/// What one generation is asked to do, whichever protocol asked.
struct ServedRequest {
  std::vector<ServedMessage> messages;  // a chat: rendered in the model's template
  std::string prompt;                   // or a prompt (when messages is empty)
  bool raw = false;                     // the prompt as it is, no template
  std::optional<std::string> system;    // /api/generate's system turn
  std::int64_t max_new_tokens = -1;     // -1: until the end token or the context is full
  double temperature = 0.8;
  std::optional<std::int64_t> top_k = 40;
  std::optional<double> top_p = 0.9;
  std::optional<std::uint64_t> seed;
  std::vector<std::string> stop;  // the text ends before the first of these
};

/// What one generation did; durations in nanoseconds, as Ollama reports them.
struct ServedGeneration {
  std::string text;
  std::int64_t prompt_tokens = 0;
  std::int64_t completion_tokens = 0;
  std::string done_reason = "stop";  // "stop": the end token or a stop string; "length"
  std::int64_t prompt_eval_ns = 0;   // up to the first new token
  std::int64_t eval_ns = 0;          // the rest
};

/// A model the server can run. Implementations must allow generate() and embed() from several
/// threads at once.
class ServedModel {
 public:
  virtual ~ServedModel() = default;
  virtual const std::string& name() const = 0;
  virtual std::int64_t context_length() const = 0;
  /// ValueError for a request the model cannot serve (a prompt longer than the context, a chat
  /// without a user turn), before anything is sent.
  virtual void check(const ServedRequest& request) const = 0;
  /// Generates for `request`; `on_text` sees the text as it comes (whole UTF-8 characters, stop
  /// strings held back) and returns false to stop early (the client has gone). ValueError for a
  /// request the model cannot serve (a prompt longer than the context, an empty prompt).
  virtual ServedGeneration generate(const ServedRequest& request,
                                    const std::function<bool(const std::string&)>& on_text) = 0;
  /// One L2-normalised vector per text (the mean of the final hidden states over its tokens), and
  /// the number of tokens read. ValueError for a model without embeddings or a text longer than
  /// the context when `truncate` is false.
  virtual std::vector<std::vector<float>> embed(const std::vector<std::string>& texts,
                                                bool truncate, std::int64_t& tokens) = 0;
  /// /api/chat with "tools": one turn of a conversation with tools (module 18's native channel),
  /// the messages and tool specs as Ollama sends them. ValueError for a model without tools (the
  /// default).
  virtual ChatResult chat_with_tools(const nlohmann::json& messages, const nlohmann::json& tools,
                                     const ChatOptions& options);
};

/// The models a server offers, loaded on first use (once, even when several requests ask at
/// once) and kept.
class ModelRegistry {
 public:
  explicit ModelRegistry(std::filesystem::path models_dir = g2c::pretraining::models_root());
  /// The served names: the pretrained models present, then the saved course artifacts.
  std::vector<std::string> names() const;
  /// The model called `name` (without case, without an ":tag"; a tier's alias such as
  /// "ShakespeareLM" means its model), or nullptr when there is none.
  /// `load_ms` is how long loading took now (0 when it was loaded before). ValueError when its
  /// files are there but cannot be loaded.
  std::shared_ptr<ServedModel> get(const std::string& name, double* load_ms = nullptr);
  /// The canonical spelling of `name`, or "" when the server has no such model.
  std::string resolve(const std::string& name) const;
  const std::filesystem::path& models_dir() const { return models_dir_; }

 private:
  /// One served model: loaded once, by the first request that asks for it.
  struct Slot {
    explicit Slot(std::string name_) : name(std::move(name_)) {}
    std::string name;  // canonical
    std::once_flag once;
    std::shared_ptr<ServedModel> model;
  };
  std::filesystem::path models_dir_;
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<Slot>> slots_;  // by Slot::name
};

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 11434;  // 0: any free port (port() says which)
  std::size_t max_body_bytes = 1 << 20;
  std::size_t threads = 16;    // requests generated at once
  std::size_t max_queue = 64;  // requests waiting for a thread; past it 503 (OLLAMA_MAX_QUEUE)
  /// Stop by itself after answering this many requests (tests, demos); 0: never.
  std::size_t max_requests = 0;
  std::filesystem::path models_dir = g2c::pretraining::models_root();
  bool log_requests = true;  // one line per request on stderr
  /// Web pages whose requests are answered besides this machine's own ("http://host:port", or
  /// "*" for any). A request with another Origin header gets 403.
  std::vector<std::string> allowed_origins;
  /// When set, every request must carry "Authorization: Bearer <api_key>" (401 otherwise).
  std::string api_key;
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
  /// Generations ended early because their client went away mid-stream.
  std::size_t generations_abandoned() const { return abandoned_.load(); }
  ModelRegistry& registry() { return registry_; }

 private:
  /// Ollama's /api/tags entry for a served model.
  nlohmann::json tag_of(const std::string& name);
  /// A request's Host, Origin and API key, before its body is read; why it is refused, if it is.
  std::optional<Refusal> check_head(const IncomingRequest& head) const;
  std::shared_ptr<ServedModel> model_for(const std::string& name, double& load_ms);
  std::function<bool(const std::string&)> while_wanted(const IncomingRequest& request);
  /// A generation answered at once; nullopt when its client left before it was done.
  std::optional<ServedGeneration> generate_whole(ServedModel& model, const ServedRequest& served,
                                                 const IncomingRequest& request);
  /// A generation streamed: each piece through `piece` (false: the client has gone), then
  /// `finish`, or `fail` with the message of what went wrong. false: cut the connection.
  bool stream_generation(ServedModel& model, const ServedRequest& served,
                         const std::function<bool(const std::string&)>& piece,
                         const std::function<void(const ServedGeneration&)>& finish,
                         const std::function<void(const std::string&)>& fail);
  void answer_tags(OutgoingResponse& response);
  void answer_ollama(const IncomingRequest& request, OutgoingResponse& response, bool chat);
  void answer_embed(const IncomingRequest& request, OutgoingResponse& response, bool legacy);
  void answer_openai_models(OutgoingResponse& response);
  void answer_openai_chat(const IncomingRequest& request, OutgoingResponse& response);

  struct Impl;
  ServerOptions options_;
  ModelRegistry registry_;
  std::unique_ptr<Impl> impl_;
  int port_ = -1;
  std::atomic<std::size_t> answered_{0};
  std::atomic<std::size_t> abandoned_{0};
  std::atomic<bool> stopping_{false};
};

/// Text pieces with stop strings taken out: push() returns what is safe to show (holding back a
/// tail that could begin a stop string), and once a stop string appears, the text before it and
/// stopped() == true. Example: stops {"\n\n"}: push("a\n") -> "a", push("\nb") -> "" and stopped.
class StopStrings {
 public:
  explicit StopStrings(std::vector<std::string> stops);
  std::string push(const std::string& piece);
  /// What was held back, when no stop string came.
  std::string finish();
  bool stopped() const { return stopped_; }

 private:
  std::vector<std::string> stops_;
  std::string pending_;
  bool stopped_ = false;
};

}  // namespace g2c::inference
