#include "g2c/inference/server.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <iostream>
#include <random>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "g2c/core/cli.h"
#include "g2c/core/clock.h"
#include "g2c/core/errors.h"
#include "g2c/inference/pretrained_backend.h"
#include "g2c/pretrained/catalog.h"
#include "g2c/pretrained/generation.h"
#include "g2c/pretraining/artifact_names.h"
#include "g2c/sampling/text_generation.h"
#include "g2c/sft/chat.h"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace g2c::inference {

namespace {

using Clock = std::chrono::steady_clock;

/// Thrown from a token callback to end a generation early: the client went away, or a stop
/// string appeared. Caught in this file only.
struct EndGeneration {};

std::int64_t nanoseconds_since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
}

std::string lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

/// Ollama's timestamps: RFC 3339 in UTC with nanoseconds.
std::string timestamp_now() {
  return g2c::utc_timestamp(std::chrono::system_clock::now(), true);
}

/// A file's modification time, as /api/tags reports it.
std::string timestamp_of(const fs::path& path) {
  std::error_code error;
  const auto written = fs::last_write_time(path, error);
  if (error) return g2c::utc_timestamp();
  return g2c::utc_timestamp(std::chrono::time_point_cast<std::chrono::system_clock::duration>(
      written - fs::file_time_type::clock::now() + std::chrono::system_clock::now()));
}

g2c::sampling::GenerateOptions sampling_of(const ServedRequest& request) {
  const auto seed = request.seed ? *request.seed : std::random_device{}();
  return g2c::sampling::GenerateOptions()
      .temperature(request.temperature)
      .top_k(request.top_k)
      .top_p(request.top_p)
      .generator(at::make_generator<at::CPUGeneratorImpl>(seed));
}

/// The tokens a request may still generate after a prompt of `prompt_tokens`.
std::int64_t room_for(const ServedRequest& request, std::int64_t prompt_tokens,
                      std::int64_t context, const std::string& model) {
  if (prompt_tokens >= context) {
    throw ValueError(
        fmt::format("the prompt is {} tokens and {}'s context is {}: shorten the prompt",
                    prompt_tokens, model, context));
  }
  const auto room = context - prompt_tokens;
  return request.max_new_tokens < 0 ? room : std::min(request.max_new_tokens, room);
}

/// Text pieces of one generation on their way to the client, through the stop strings.
class TextSink {
 public:
  TextSink(const ServedRequest& request, const std::function<bool(const std::string&)>& on_text)
      : stops_(request.stop), on_text_(on_text) {}
  /// Sends what may be shown; throws EndGeneration once a stop string appears or the client is
  /// gone.
  void push(const std::string& piece) {
    send(stops_.push(piece));
    if (stops_.stopped()) throw EndGeneration{};
  }
  void finish(const std::string& tail) {
    if (!stops_.stopped()) send(stops_.push(tail));
    if (!stops_.stopped()) send(stops_.finish());
  }
  bool stopped() const { return stops_.stopped(); }
  bool client_gone() const { return client_gone_; }
  const std::string& text() const { return text_; }
  /// Marks the time of the first new token (the end of the prompt's evaluation).
  void token_drawn() {
    if (!first_) first_ = Clock::now();
  }
  /// The text, why it ended (`ended`: the model wrote its end token) and the durations.
  void complete(ServedGeneration& result, bool ended) const {
    result.text = text_;
    result.done_reason = ended || stopped() ? "stop" : "length";
    const auto first = first_.value_or(Clock::now());
    result.prompt_eval_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(first - start_).count();
    result.eval_ns = nanoseconds_since(first);
  }

 private:
  void send(const std::string& text) {
    if (text.empty()) return;
    text_ += text;
    if (on_text_ && !on_text_(text)) {
      client_gone_ = true;
      throw EndGeneration{};
    }
  }
  StopStrings stops_;
  const std::function<bool(const std::string&)>& on_text_;
  std::string text_;
  bool client_gone_ = false;
  Clock::time_point start_ = Clock::now();
  std::optional<Clock::time_point> first_;
};

// --- the pretrained model ---------------------------------------------------------------------

class PretrainedServed : public ServedModel {
 public:
  explicit PretrainedServed(const std::string& name)
      : shared_(std::make_shared<g2c::pretrained::PretrainedModel>(
            g2c::pretrained::load_pretrained_model(name,
                                                   g2c::pretrained::LoadOptions().packed(true)))),
        pretrained_(*shared_),
        name_(pretrained_.name),
        tool_backend_(shared_, PretrainedBackendOptions().with_tool_choice(ToolChoice::Required)) {}

  const std::string& name() const override { return name_; }
  std::int64_t context_length() const override { return pretrained_.model->options.max_seq_len(); }

  void check(const ServedRequest& request) const override {
    room_for(request, static_cast<std::int64_t>(encode(request).size()), context_length(), name_);
  }

  ServedGeneration generate(const ServedRequest& request,
                            const std::function<bool(const std::string&)>& on_text) override {
    const auto& tokenizer = pretrained_.tokenizer;
    const auto ids = encode(request);
    ServedGeneration result;
    result.prompt_tokens = static_cast<std::int64_t>(ids.size());
    const auto room = room_for(request, result.prompt_tokens, context_length(), name_);

    torch::NoGradGuard no_grad;
    TextSink sink(request, on_text);
    g2c::pretrained::PretrainedTextStream stream(tokenizer);
    bool ended = false;
    try {
      const auto generation = g2c::pretrained::generate_pretrained(
          pretrained_, ids, room, sampling_of(request), [&](std::int64_t id) {
            sink.token_drawn();
            if (id == tokenizer.eos_id()) return;
            ++result.completion_tokens;
            sink.push(stream.push(id));
          });
      ended = generation.stopped;
      sink.finish(stream.finish());
    } catch (const EndGeneration&) {
      if (sink.client_gone()) throw;
    }
    sink.complete(result, ended);
    return result;
  }

  std::vector<std::vector<float>> embed(const std::vector<std::string>& texts, bool truncate,
                                        std::int64_t& tokens) override {
    std::vector<std::vector<std::int64_t>> all_ids;
    for (const auto& text : texts) {
      auto ids = pretrained_.tokenizer.encode(text);
      if (ids.empty()) throw ValueError("/api/embed: an input is empty; give text to embed");
      if (static_cast<std::int64_t>(ids.size()) > context_length()) {
        if (!truncate) {
          throw ValueError(
              fmt::format("/api/embed: an input is {} tokens, longer than {}'s context of {} (send "
                          "\"truncate\": true to embed its start)",
                          ids.size(), name_, context_length()));
        }
        ids.resize(static_cast<std::size_t>(context_length()));
      }
      tokens += static_cast<std::int64_t>(ids.size());
      all_ids.push_back(std::move(ids));
    }
    const auto pooled = g2c::pretrained::mean_pooled_embeddings(pretrained_, all_ids).contiguous();
    std::vector<std::vector<float>> vectors;
    for (std::int64_t i = 0; i < pooled.size(0); ++i) {
      const auto* row = pooled[i].data_ptr<float>();
      vectors.emplace_back(row, row + pooled.size(1));
    }
    return vectors;
  }

  ChatResult chat_with_tools(const nlohmann::json& messages, const nlohmann::json& tools,
                             const ChatOptions& options) override {
    // The backend keeps the grammar's masks across calls: one tool request at a time.
    std::lock_guard lock(tool_mutex_);
    return tool_backend_.chat_with_tools(messages, tools, options);
  }

 private:
  /// The prompt's ids: a chat in the file's template; /api/generate's prompt as a user turn
  /// (under `system` when given), as Ollama does, or as it is when raw.
  std::vector<std::int64_t> encode(const ServedRequest& request) const {
    const auto& tokenizer = pretrained_.tokenizer;
    if (request.messages.empty() && request.raw) return tokenizer.encode(request.prompt);
    std::vector<g2c::pretrained::ChatMessage> messages;
    if (request.messages.empty()) {
      if (request.system) messages.push_back({"system", *request.system});
      messages.push_back({"user", request.prompt});
    }
    for (const auto& m : request.messages) messages.push_back({m.role, m.content});
    return tokenizer.encode(tokenizer.format_chat(messages, true));
  }

  std::shared_ptr<g2c::pretrained::PretrainedModel> shared_;
  g2c::pretrained::PretrainedModel& pretrained_;
  std::string name_;
  std::mutex tool_mutex_;
  PretrainedBackend tool_backend_;
};

// --- a course artifact ------------------------------------------------------------------------

class CourseServed : public ServedModel {
 public:
  CourseServed(std::string name, const fs::path& dir)
      : text_model_(g2c::sampling::load_text_model(dir.string())), name_(std::move(name)) {}

  const std::string& name() const override { return name_; }
  std::int64_t context_length() const override { return text_model_.artifact.model->max_seq_len; }

  void check(const ServedRequest& request) const override {
    if (request.messages.empty()) {
      room_for(request,
               static_cast<std::int64_t>(text_model_.tokenizer.encode(request.prompt).size()),
               context_length(), name_);
    } else {
      chat_messages(request);
    }
  }

  ServedGeneration generate(const ServedRequest& request,
                            const std::function<bool(const std::string&)>& on_text) override {
    return request.messages.empty() ? continue_prompt(request, on_text) : reply(request, on_text);
  }

  std::vector<std::vector<float>> embed(const std::vector<std::string>&, bool,
                                        std::int64_t&) override {
    throw ValueError(fmt::format(
        "/api/embed: {} is a course model, which has no embedding interface; embed with "
        "SmolLM2-135M-Instruct",
        name_));
  }

 private:
  /// /api/generate: the prompt continued as text, until <|end|> when the tokenizer has it.
  ServedGeneration continue_prompt(const ServedRequest& request,
                                   const std::function<bool(const std::string&)>& on_text) {
    auto& model = *text_model_.artifact.model;
    const auto& tokenizer = text_model_.tokenizer;
    const auto ids = tokenizer.encode(request.prompt);
    ServedGeneration result;
    result.prompt_tokens = static_cast<std::int64_t>(ids.size());
    const auto room = room_for(request, result.prompt_tokens, context_length(), name_);
    auto sampling = sampling_of(request);
    std::optional<std::int64_t> end;
    try {
      end = g2c::sft::end_token_id(tokenizer);
      sampling.eos_id(end);
    } catch (const ValueError&) {
      // A tokenizer without <|end|> (a base model's): generate until the length.
    }
    torch::NoGradGuard no_grad;
    TextSink sink(request, on_text);
    g2c::sampling::TextStream stream(tokenizer);
    bool ended = false;
    try {
      g2c::sampling::generate_long_cached(model, torch::tensor(ids, torch::kLong), room, sampling,
                                          [&](std::int64_t id) {
                                            sink.token_drawn();
                                            if (end && id == *end) {
                                              ended = true;
                                              return;
                                            }
                                            ++result.completion_tokens;
                                            sink.push(stream.push(id));
                                          });
      sink.finish(stream.finish());
    } catch (const EndGeneration&) {
      if (sink.client_gone()) throw;
    }
    sink.complete(result, ended);
    return result;
  }

  /// /api/chat: module 13's chat template and chat_reply (system turns are left out: the course's
  /// template has none).
  ServedGeneration reply(const ServedRequest& request,
                         const std::function<bool(const std::string&)>& on_text) {
    const auto messages = chat_messages(request);
    const auto context = context_length();
    const auto max_new =
        request.max_new_tokens < 0 ? context / 2 : std::min(request.max_new_tokens, context - 1);
    const auto& tokenizer = text_model_.tokenizer;
    ServedGeneration result;
    result.prompt_tokens = std::min<std::int64_t>(
        static_cast<std::int64_t>(
            tokenizer.encode(g2c::sft::ChatTemplate().generation_prompt(messages)).size()),
        context - max_new);
    TextSink sink(request, on_text);
    bool ended = false;
    try {
      const auto answer = g2c::sft::chat_reply(
          *text_model_.artifact.model, tokenizer, messages,
          g2c::sft::ChatReplyOptions().max_new_tokens(max_new).sampling(sampling_of(request)),
          [&](const std::string& piece) {
            sink.token_drawn();
            sink.push(piece);
          });
      ended = answer.stopped;
      result.completion_tokens = static_cast<std::int64_t>(answer.ids.size());
      sink.finish("");
    } catch (const EndGeneration&) {
      if (sink.client_gone()) throw;
      // Ended at a stop string: count what was kept.
      result.completion_tokens = static_cast<std::int64_t>(tokenizer.encode(sink.text()).size());
    }
    sink.complete(result, ended);
    return result;
  }

  /// The conversation in module 13's roles: system turns left out (its template has none).
  std::vector<g2c::sft::Message> chat_messages(const ServedRequest& request) const {
    std::vector<g2c::sft::Message> messages;
    for (const auto& m : request.messages) {
      if (m.role != "system") messages.push_back({m.role, m.content});
    }
    if (messages.empty() || messages.back().role != "user") {
      throw ValueError(fmt::format(
          "{} (a course model) answers a conversation that ends with a user turn", name_));
    }
    return messages;
  }

  g2c::sampling::TextModel text_model_;
  std::string name_;
};

}  // namespace

// --- stop strings -------------------------------------------------------------------------------

StopStrings::StopStrings(std::vector<std::string> stops) : stops_(std::move(stops)) {
  std::erase_if(stops_, [](const std::string& stop) { return stop.empty(); });
}

std::string StopStrings::push(const std::string& piece) {
  if (stopped_) return "";
  pending_ += piece;
  std::size_t earliest = std::string::npos;
  for (const auto& stop : stops_) earliest = std::min(earliest, pending_.find(stop));
  if (earliest != std::string::npos) {
    stopped_ = true;
    auto shown = pending_.substr(0, earliest);
    pending_.clear();
    return shown;
  }
  // Hold back the longest tail that could be the start of a stop string.
  std::size_t held = 0;
  for (const auto& stop : stops_) {
    for (std::size_t n = std::min(stop.size() - 1, pending_.size()); n > held; --n) {
      if (pending_.compare(pending_.size() - n, n, stop, 0, n) == 0) {
        held = n;
        break;
      }
    }
  }
  auto shown = pending_.substr(0, pending_.size() - held);
  pending_.erase(0, pending_.size() - held);
  return shown;
}

std::string StopStrings::finish() {
  if (stopped_) return "";
  return std::exchange(pending_, std::string());
}

// --- the registry -------------------------------------------------------------------------------

ModelRegistry::ModelRegistry(fs::path models_dir) : models_dir_(std::move(models_dir)) {}

std::vector<std::string> ModelRegistry::names() const {
  std::vector<std::string> names;
  for (const auto& name : g2c::pretrained::pretrained_model_names()) {
    try {
      g2c::pretrained::pretrained_model_file(name);
      names.push_back(name);
    } catch (const ValueError&) {
      // Not fetched: scripts/setup.sh puts it there.
    }
  }
  std::vector<std::string> course;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(models_dir_, error)) {
    const auto name = entry.path().filename().string();
    if (g2c::pretraining::model_artifact_exists(name, models_dir_)) course.push_back(name);
  }
  std::sort(course.begin(), course.end());
  names.insert(names.end(), course.begin(), course.end());
  return names;
}

ChatResult ServedModel::chat_with_tools(const nlohmann::json&, const nlohmann::json&,
                                        const ChatOptions&) {
  throw ValueError(
      fmt::format("/api/chat: {} takes no tools (a course model has no tool-calling "
                  "turn); send tools to SmolLM2-135M-Instruct, or leave them out",
                  name()));
}

namespace {

/// Whether a request's `asked` names the served model `known`: without case, without an Ollama
/// tag (":latest"), or by a tier's alias ("ShakespeareLM" for "ShakespeareLM-1M").
bool names_model(const std::string& asked, const std::string& known) {
  auto wanted = asked;
  if (const auto colon = wanted.rfind(':'); colon != std::string::npos) wanted.resize(colon);
  const auto served = lowercase(known);
  return served == lowercase(wanted) ||
         served == lowercase(g2c::pretraining::canonical_model_name(wanted));
}

}  // namespace

std::string ModelRegistry::resolve(const std::string& name) const {
  for (const auto& known : names()) {
    if (names_model(name, known)) return known;
  }
  return "";
}

std::shared_ptr<ServedModel> ModelRegistry::get(const std::string& name, double* load_ms) {
  if (load_ms) *load_ms = 0;
  std::shared_ptr<Slot> slot;
  {
    // A model asked for before is found without looking at the disk again.
    std::lock_guard lock(mutex_);
    for (const auto& [known, existing] : slots_) {
      if (names_model(name, known)) slot = existing;
    }
  }
  if (!slot) {
    const auto canonical = resolve(name);
    if (canonical.empty()) return nullptr;
    std::lock_guard lock(mutex_);
    auto& entry = slots_[canonical];
    if (!entry) entry = std::make_shared<Slot>(canonical);
    slot = entry;
  }
  // Loaded outside the lock: another model's requests go on meanwhile; the same model's wait here.
  // A load that throws leaves the slot empty, and the next request tries again.
  std::call_once(slot->once, [&] {
    const auto start = Clock::now();
    const auto& canonical = slot->name;
    if (!g2c::pretrained::pretrained_model_name(canonical).empty()) {
      slot->model = std::make_shared<PretrainedServed>(canonical);
    } else {
      slot->model = std::make_shared<CourseServed>(canonical, models_dir_ / canonical);
    }
    if (load_ms) *load_ms = nanoseconds_since(start) / 1e6;
  });
  return slot->model;
}

// --- reading requests
// -----------------------------------------------------------------------------

namespace {

/// A request the client got wrong: answered with `status` and a JSON error.
struct BadRequest {
  int status;
  std::string message;
};

/// How deeply a request body may nest JSON: Ollama's requests need four levels, a tool's
/// parameters a few more. Checked on the text, before anything parses, copies or prints the value.
constexpr int kMaxBodyDepth = 64;
/// A tool's parameters schema: how deep and how long it may be, and how many tools one request
/// may name.
constexpr int kMaxSchemaDepth = 16;
constexpr std::size_t kMaxSchemaBytes = 16 << 10;
constexpr std::size_t kMaxTools = 64;

/// JSON as text. Invalid UTF-8 — a client's bytes echoed in a message, a model's reply cut in the
/// middle of a character — becomes U+FFFD instead of an exception.
std::string to_text(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

/// A client's value quoted in an error message: at most 80 characters of it.
std::string excerpt(const json& value) {
  const auto text = to_text(value);
  return text.size() <= 80 ? text : text.substr(0, 77) + "...";
}

/// How deeply the brackets of the JSON text `text` nest (strings skipped); counting stops once it
/// passes `limit`.
int nesting_depth(std::string_view text, int limit) {
  int depth = 0;
  int deepest = 0;
  bool in_string = false;
  bool escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > limit) break;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

/// How deeply a parsed value nests (a scalar: 0). Only called on values whose text was bounded.
int nesting_depth(const json& value) {
  int deepest = 0;
  if (value.is_structured()) {
    for (const auto& item : value) deepest = std::max(deepest, nesting_depth(item));
    return deepest + 1;
  }
  return 0;
}

json parse_body(const IncomingRequest& request) {
  if (const auto depth = nesting_depth(request.body, kMaxBodyDepth); depth > kMaxBodyDepth) {
    throw BadRequest{400, fmt::format("the body nests JSON more than {} levels deep; no request "
                                      "needs that many",
                                      kMaxBodyDepth)};
  }
  json body;
  try {
    body = json::parse(request.body);
  } catch (const json::exception& error) {
    // Invalid UTF-8, a number too large for a double (1e400), a syntax error.
    throw BadRequest{400, fmt::format("the body is not valid JSON: {}", error.what())};
  }
  if (!body.is_object()) throw BadRequest{400, "the body must be a JSON object"};
  return body;
}

std::string string_field(const json& body, const char* key, bool required) {
  if (!body.contains(key) || body[key].is_null()) {
    if (required) throw BadRequest{400, fmt::format("\"{}\" is required", key)};
    return "";
  }
  if (!body[key].is_string()) {
    throw BadRequest{400, fmt::format("\"{}\" must be a string, got {}", key, excerpt(body[key]))};
  }
  return body[key].get<std::string>();
}

double number_field(const json& object, const char* key, double fallback) {
  if (!object.contains(key) || object[key].is_null()) return fallback;
  if (!object[key].is_number()) {
    throw BadRequest{400,
                     fmt::format("\"{}\" must be a number, got {}", key, excerpt(object[key]))};
  }
  return object[key].get<double>();
}

std::optional<std::int64_t> integer_field(const json& object, const char* key) {
  if (!object.contains(key) || object[key].is_null()) return std::nullopt;
  const auto& value = object[key];
  if (!value.is_number_integer()) {
    throw BadRequest{400, fmt::format("\"{}\" must be an integer, got {}", key, excerpt(value))};
  }
  if (value.is_number_unsigned() &&
      value.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) {
    throw BadRequest{400, fmt::format("\"{}\" is {}, larger than any this server takes ({})", key,
                                      excerpt(value), INT64_MAX)};
  }
  return value.get<std::int64_t>();
}

/// A seed: 0 to 2^63 - 1, or -1 (Ollama's "any"): nullopt.
std::optional<std::uint64_t> seed_field(const json& object, const char* key) {
  const auto seed = integer_field(object, key);
  if (!seed || *seed == -1) return std::nullopt;
  if (*seed < 0) {
    throw BadRequest{
        400, fmt::format("\"{}\" must be 0 or more (or -1 for a random one), got {}", key, *seed)};
  }
  return static_cast<std::uint64_t>(*seed);
}

std::vector<std::string> stop_field(const json& object, const char* key) {
  if (!object.contains(key) || object[key].is_null()) return {};
  const auto& value = object[key];
  if (value.is_string()) return {value.get<std::string>()};
  std::vector<std::string> stops;
  if (value.is_array()) {
    for (const auto& stop : value) {
      if (!stop.is_string()) break;
      stops.push_back(stop.get<std::string>());
    }
    if (stops.size() == value.size()) return stops;
  }
  throw BadRequest{400, fmt::format("\"{}\" must be a string or a list of strings", key)};
}

/// The sampling settings' ranges. A positive temperature below 0.001 divides the logits into
/// infinities (float32 overflows past 3.4e38), so it is refused with the way to say greedy.
void check_sampling(const ServedRequest& request) {
  if (!(request.temperature >= 0 && request.temperature <= 100)) {
    throw BadRequest{
        400, fmt::format("temperature must be between 0 and 100, got {}", request.temperature)};
  }
  if (request.temperature > 0 && request.temperature < 1e-3) {
    throw BadRequest{400, fmt::format("temperature {} is too small to sample with: use 0 for "
                                      "greedy decoding, or at least 0.001",
                                      request.temperature)};
  }
  if (request.top_k && *request.top_k < 0) {
    throw BadRequest{400, fmt::format("top_k must be >= 0, got {}", *request.top_k)};
  }
  if (request.top_p && !(*request.top_p > 0 && *request.top_p <= 1)) {
    throw BadRequest{400, fmt::format("top_p must be in (0, 1], got {}", *request.top_p)};
  }
}

/// Ollama's "options" object into the request.
void read_ollama_options(const json& body, ServedRequest& request) {
  if (!body.contains("options") || body["options"].is_null()) return;
  const auto& options = body["options"];
  if (!options.is_object()) throw BadRequest{400, "\"options\" must be a JSON object"};
  request.temperature = number_field(options, "temperature", request.temperature);
  if (const auto top_k = integer_field(options, "top_k")) {
    request.top_k = *top_k == 0 ? std::nullopt : std::optional(*top_k);
  }
  if (options.contains("top_p") && !options["top_p"].is_null()) {
    request.top_p = number_field(options, "top_p", 1.0);
  }
  if (const auto n = integer_field(options, "num_predict")) {
    if (*n < -2) {
      throw BadRequest{400, fmt::format("num_predict must be >= 0, or -1 (until the end token "
                                        "or the context is full), got {}",
                                        *n)};
    }
    request.max_new_tokens = *n < 0 ? -1 : *n;
  }
  request.seed = seed_field(options, "seed");
  request.stop = stop_field(options, "stop");
  check_sampling(request);
}

std::vector<ServedMessage> read_messages(const json& body) {
  if (!body.contains("messages") || !body["messages"].is_array()) {
    throw BadRequest{400, "\"messages\" must be a list of {\"role\", \"content\"} objects"};
  }
  std::vector<ServedMessage> messages;
  for (const auto& message : body["messages"]) {
    if (!message.is_object() || !message.contains("role") || !message["role"].is_string()) {
      throw BadRequest{400, "each message needs a \"role\" string and a \"content\" string"};
    }
    const auto role = message["role"].get<std::string>();
    if (role != "system" && role != "user" && role != "assistant" && role != "tool") {
      throw BadRequest{400, fmt::format("unknown role {} (expected system, user, assistant or "
                                        "tool)",
                                        excerpt(message["role"]))};
    }
    std::string content;
    if (message.contains("content") && message["content"].is_string()) {
      content = message["content"].get<std::string>();
    } else if (message.contains("content") && !message["content"].is_null()) {
      throw BadRequest{400, "a message's \"content\" must be a string"};
    }
    messages.push_back({role == "tool" ? "user" : role, content});
  }
  return messages;
}

/// /api/chat's "tools", checked before a model reads them: a list of at most 64 {"type":
/// "function", "function": {"name", "parameters"?}} specs, names a model can spell and no two
/// alike, parameters a bounded schema object.
void check_tools(const json& tools) {
  const auto shape =
      "\"tools\" must be a list of {\"type\": \"function\", \"function\": {\"name\", "
      "\"description\", \"parameters\"}} specs";
  if (!tools.is_array()) throw BadRequest{400, shape};
  if (tools.size() > kMaxTools) {
    throw BadRequest{400,
                     fmt::format("{} tools in one request; at most {}", tools.size(), kMaxTools)};
  }
  std::vector<std::string> names;
  for (const auto& spec : tools) {
    if (!spec.is_object() || !spec.contains("function") || !spec["function"].is_object()) {
      throw BadRequest{400, shape};
    }
    const auto& function = spec["function"];
    if (!function.contains("name") || !function["name"].is_string() ||
        !is_valid_tool_name(function["name"].get<std::string>())) {
      throw BadRequest{400, fmt::format("a tool's name must be 1 to 64 letters, digits, '_' or "
                                        "'-', got {}",
                                        excerpt(function.value("name", json())))};
    }
    const auto name = function["name"].get<std::string>();
    if (std::find(names.begin(), names.end(), name) != names.end()) {
      throw BadRequest{400,
                       fmt::format("two tools are called \"{}\"; give each its own name", name)};
    }
    names.push_back(name);
    if (!function.contains("parameters") || function["parameters"].is_null()) continue;
    const auto& parameters = function["parameters"];
    if (!parameters.is_object()) {
      throw BadRequest{
          400, fmt::format("tool \"{}\": \"parameters\" must be a JSON schema object", name)};
    }
    if (nesting_depth(parameters) > kMaxSchemaDepth ||
        to_text(parameters).size() > kMaxSchemaBytes) {
      throw BadRequest{400, fmt::format("tool \"{}\": its parameters schema is over {} levels "
                                        "deep or {} bytes; describe the arguments more simply",
                                        name, kMaxSchemaDepth, kMaxSchemaBytes)};
    }
  }
}

bool stream_field(const json& body, bool fallback) {
  if (!body.contains("stream") || body["stream"].is_null()) return fallback;
  if (!body["stream"].is_boolean()) throw BadRequest{400, "\"stream\" must be true or false"};
  return body["stream"].get<bool>();
}

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
  return lowercase(host);
}

/// Whether `host` names this machine: localhost, a 127.x.y.z address or ::1.
bool is_loopback_name(const std::string& host) {
  return host == "localhost" || host.ends_with(".localhost") || host.starts_with("127.") ||
         host == "::1";
}

/// Whether the server was told to listen on this machine only.
bool listens_on_loopback(const std::string& host) {
  return is_loopback_name(lowercase(host));
}

}  // namespace

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
    const auto scheme_end = origin.find("://");
    const bool local = scheme_end != std::string::npos &&
                       (origin.starts_with("http://") || origin.starts_with("https://")) &&
                       is_loopback_name(host_name(std::string_view(origin).substr(scheme_end + 3)));
    const bool listed = std::any_of(
        options_.allowed_origins.begin(), options_.allowed_origins.end(),
        [&](const std::string& allowed) { return allowed == "*" || allowed == origin; });
    if (!local && !listed) {
      return Refusal{403, fmt::format("requests from web pages at {} are refused; start g2c-serve "
                                      "with --allow-origin {} to accept them",
                                      excerpt(json(origin)), excerpt(json(origin)))};
    }
  }
  if (!options_.api_key.empty()) {
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

// --- the answers
// ----------------------------------------------------------------------------------

namespace {

void answer_json(OutgoingResponse& response, const json& value, int status = 200) {
  response.status = status;
  response.set_content(to_text(value), "application/json; charset=utf-8");
}

/// Ollama's errors: {"error": "..."}.
void ollama_error(OutgoingResponse& response, int status, const std::string& message) {
  answer_json(response, {{"error", message}}, status);
}

/// OpenAI's errors: {"error": {"message", "type", "param", "code"}}.
void openai_error(OutgoingResponse& response, int status, const std::string& message) {
  answer_json(response,
              {{"error",
                {{"message", message},
                 {"type", status == 404   ? "not_found_error"
                          : status == 401 ? "authentication_error"
                          : status >= 500 ? "server_error"
                                          : "invalid_request_error"},
                 {"param", nullptr},
                 {"code", nullptr}}}},
              status);
}

using ErrorWriter = void (*)(OutgoingResponse&, int, const std::string&);
using Route = std::function<void(const IncomingRequest&, OutgoingResponse&)>;

/// A route whose failures become the protocol's error answers: the client's mistakes 4xx, the
/// server's 500 — whatever was thrown, worded without a library's stack trace.
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
    } catch (const BadRequest& bad) {
      error(response, bad.status, bad.message);
    } catch (const NotImplementedError& todo) {
      // A course function on the model's path is still a TODO: the message names it.
      error(response, 501, todo.what());
    } catch (const ValueError& bad) {
      error(response, 400, bad.what());
    } catch (const std::exception& failure) {
      error(response, 500, fmt::format("the server failed: {}", g2c::describe_error(failure)));
    } catch (...) {
      error(response, 500, "the server failed with an unknown error");
    }
  };
}

/// One line of an Ollama answer; `done` lines carry the counts and durations as well.
json ollama_line(bool chat, const std::string& model, const std::string& text) {
  json line = {{"model", model}, {"created_at", timestamp_now()}, {"done", false}};
  if (chat) {
    line["message"] = {{"role", "assistant"}, {"content", text}};
  } else {
    line["response"] = text;
  }
  return line;
}

json ollama_done(bool chat, const std::string& model, const std::string& text,
                 const ServedGeneration& generation, std::int64_t total_ns, double load_ms) {
  auto line = ollama_line(chat, model, text);
  line["done"] = true;
  line["done_reason"] = generation.done_reason;
  line["total_duration"] = total_ns;
  line["load_duration"] = static_cast<std::int64_t>(load_ms * 1e6);
  line["prompt_eval_count"] = generation.prompt_tokens;
  line["prompt_eval_duration"] = generation.prompt_eval_ns;
  line["eval_count"] = generation.completion_tokens;
  line["eval_duration"] = generation.eval_ns;
  return line;
}

json openai_chunk(const std::string& id, std::int64_t created, const std::string& model,
                  const json& delta, const json& finish_reason) {
  return {{"id", id},
          {"object", "chat.completion.chunk"},
          {"created", created},
          {"model", model},
          {"system_fingerprint", "g2c"},
          {"choices", {{{"index", 0}, {"delta", delta}, {"finish_reason", finish_reason}}}}};
}

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
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
  std::atomic<std::uint64_t> completions{0};
};

/// What a generation answered at once hears after each piece: go on while the server serves and
/// the client waits. A client that has gone ends the generation at its next piece.
std::function<bool(const std::string&)> Server::while_wanted(const IncomingRequest& request) {
  return [this, &request](const std::string&) {
    return !stopping_.load() && request.client_connected();
  };
}

/// The model a request names, loaded; 404 naming the served models when there is none.
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

Server::Server(ServerOptions options)
    : options_(std::move(options)),
      registry_(options_.models_dir),
      impl_(std::make_unique<Impl>(options_)) {
  auto& http = impl_->http;

  http.route("GET", "/", [](const IncomingRequest&, OutgoingResponse& response) {
    response.set_content("g2c-serve is running (Ollama's and OpenAI's protocols)\n", "text/plain");
  });
  http.route("GET", "/api/version", [](const IncomingRequest&, OutgoingResponse& response) {
    answer_json(response, {{"version", "0.6.0"}});
  });
  http.route(
      "GET", "/api/tags",
      guarded([this](const IncomingRequest&, OutgoingResponse& response) { answer_tags(response); },
              ollama_error));
  http.route(
      "POST", "/api/generate",
      guarded([this](const IncomingRequest& request,
                     OutgoingResponse& response) { answer_ollama(request, response, false); },
              ollama_error));
  http.route("POST", "/api/chat",
             guarded([this](const IncomingRequest& request,
                            OutgoingResponse& response) { answer_ollama(request, response, true); },
                     ollama_error));
  http.route("POST", "/api/embed",
             guarded([this](const IncomingRequest& request,
                            OutgoingResponse& response) { answer_embed(request, response, false); },
                     ollama_error));
  http.route("POST", "/api/embeddings",
             guarded([this](const IncomingRequest& request,
                            OutgoingResponse& response) { answer_embed(request, response, true); },
                     ollama_error));
  http.route("GET", "/v1/models",
             guarded([this](const IncomingRequest&,
                            OutgoingResponse& response) { answer_openai_models(response); },
                     openai_error));
  http.route("POST", "/v1/chat/completions",
             guarded([this](const IncomingRequest& request,
                            OutgoingResponse& response) { answer_openai_chat(request, response); },
                     openai_error));

  // Answers the HTTP layer gives itself (no route, a request over a limit, a full queue, a refused
  // origin) are JSON errors in the protocol of the path asked for.
  http.set_error_answer([](const IncomingRequest& request, OutgoingResponse& response, int status,
                           const std::string& message) {
    (request.path.starts_with("/v1/") ? openai_error : ollama_error)(response, status, message);
  });
  http.set_head_check([this](const IncomingRequest& head) { return check_head(head); });
  http.set_on_answered([this](const IncomingRequest& request, int status) {
    const auto answered = ++answered_;
    if (options_.log_requests) {
      std::cerr << fmt::format("g2c-serve: {} {} -> {}\n", printable(request.method),
                               printable(request.path), status);
    }
    if (options_.max_requests > 0 && answered >= options_.max_requests) impl_->http.stop();
  });
}

void Server::answer_tags(OutgoingResponse& response) {
  json models = json::array();
  for (const auto& name : registry_.names()) models.push_back(tag_of(name));
  answer_json(response, {{"models", models}});
}

/// /api/generate and /api/chat: the same but for the request's shape and the answer's field.
void Server::answer_ollama(const IncomingRequest& request, OutgoingResponse& response, bool chat) {
  const auto body = parse_body(request);
  const auto model_name = string_field(body, "model", true);
  ServedRequest served;
  if (chat) {
    served.messages = read_messages(body);
  } else {
    served.prompt = string_field(body, "prompt", false);
    if (body.contains("raw") && !body["raw"].is_boolean()) {
      throw BadRequest{400, "\"raw\" must be true or false"};
    }
    served.raw = body.value("raw", false);
    if (auto system = string_field(body, "system", false); !system.empty()) {
      served.system = std::move(system);
    }
  }
  read_ollama_options(body, served);
  const bool stream = stream_field(body, true);
  const bool with_tools = chat && body.contains("tools") && !body["tools"].is_null();
  if (with_tools) check_tools(body["tools"]);
  double load_ms = 0;
  const auto model = model_for(model_name, load_ms);

  // Tools (module 18): one turn of the native channel, answered whole.
  if (with_tools && !body["tools"].empty() && !served.messages.empty()) {
    ChatOptions options;
    options.max_new_tokens = served.max_new_tokens < 0 ? 512 : served.max_new_tokens;
    options.temperature = served.temperature;
    options.top_k = served.top_k;
    options.top_p = served.top_p;
    const auto started = Clock::now();
    const auto reply = model->chat_with_tools(body["messages"], body["tools"], options);
    ServedGeneration generation;
    generation.prompt_tokens = reply.prompt_tokens.value_or(0);
    generation.completion_tokens = reply.completion_tokens.value_or(0);
    generation.eval_ns = nanoseconds_since(started);
    auto calls = json::array();
    for (const auto& call : reply.tool_calls) {
      calls.push_back({{"id", call.value("call_id", std::string())},
                       {"function", {{"name", call["name"]}, {"arguments", call["arguments"]}}}});
    }
    auto done = ollama_done(true, model_name, reply.content, generation, nanoseconds_since(started),
                            load_ms);
    if (!calls.empty()) done["message"]["tool_calls"] = calls;
    if (stream) {
      // Ollama streams a call as one message line, then the done line.
      auto line = ollama_line(true, model_name, reply.content);
      if (!calls.empty()) line["message"]["tool_calls"] = calls;
      done["message"] = {{"role", "assistant"}, {"content", ""}};
      response.set_content(to_text(line) + "\n" + to_text(done) + "\n", "application/x-ndjson");
    } else {
      answer_json(response, done);
    }
    return;
  }

  // Nothing to generate: Ollama's answer to "load the model".
  if (chat ? served.messages.empty() : served.prompt.empty()) {
    auto done = ollama_line(chat, model_name, "");
    done["done"] = true;
    done["done_reason"] = "load";
    answer_json(response, done);
    return;
  }
  model->check(served);  // a prompt too long is a 400, before any answer starts
  const auto started = Clock::now();
  if (!stream) {
    const auto generation = generate_whole(*model, served, request);
    if (!generation) return;  // nobody is waiting for it
    answer_json(response, ollama_done(chat, model_name, generation->text, *generation,
                                      nanoseconds_since(started), load_ms));
    return;
  }
  response.set_stream("application/x-ndjson", [this, model, served, chat, model_name, started,
                                               load_ms](const StreamWriter& write) {
    const auto send = [&write](const json& line) { return write(to_text(line) + "\n"); };
    return stream_generation(
        *model, served,
        [&](const std::string& piece) { return send(ollama_line(chat, model_name, piece)); },
        [&](const ServedGeneration& generation) {
          send(ollama_done(chat, model_name, "", generation, nanoseconds_since(started), load_ms));
        },
        [&](const std::string& message) {
          send({{"error", message}});
        });
  });
}

std::optional<ServedGeneration> Server::generate_whole(ServedModel& model,
                                                       const ServedRequest& served,
                                                       const IncomingRequest& request) {
  try {
    return model.generate(served, while_wanted(request));
  } catch (const EndGeneration&) {
    if (stopping_) throw;
    ++abandoned_;
    return std::nullopt;
  }
}

bool Server::stream_generation(ServedModel& model, const ServedRequest& served,
                               const std::function<bool(const std::string&)>& piece,
                               const std::function<void(const ServedGeneration&)>& finish,
                               const std::function<void(const std::string&)>& fail) {
  try {
    const auto generation =
        model.generate(served, [&](const std::string& text) { return !stopping_ && piece(text); });
    finish(generation);
    return true;
  } catch (const EndGeneration&) {
    if (!stopping_) ++abandoned_;
    return false;  // the client has gone, or the server is stopping
  } catch (const std::exception& failure) {
    fail(g2c::describe_error(failure));
    return true;
  } catch (...) {
    return false;
  }
}

/// /api/embed {"model", "input": text or [texts], "truncate"?}; /api/embeddings {"model",
/// "prompt"} is its older form, one vector as "embedding".
void Server::answer_embed(const IncomingRequest& request, OutgoingResponse& response, bool legacy) {
  const auto body = parse_body(request);
  const auto model_name = string_field(body, "model", true);
  std::vector<std::string> texts;
  const auto key = legacy ? "prompt" : "input";
  if (body.contains(key) && body[key].is_string()) {
    texts.push_back(body[key].get<std::string>());
  } else if (!legacy && body.contains(key) && body[key].is_array()) {
    for (const auto& text : body[key]) {
      if (!text.is_string()) throw BadRequest{400, "\"input\" must hold strings only"};
      texts.push_back(text.get<std::string>());
    }
  } else {
    throw BadRequest{400, fmt::format("\"{}\" must be {}", key,
                                      legacy ? "a string" : "a string or a list of strings")};
  }
  if (body.contains("truncate") && !body["truncate"].is_boolean()) {
    throw BadRequest{400, "\"truncate\" must be true or false"};
  }
  double load_ms = 0;
  const auto model = model_for(model_name, load_ms);
  const auto started = Clock::now();
  std::int64_t tokens = 0;
  const auto vectors = model->embed(texts, body.value("truncate", true), tokens);
  if (legacy) {
    answer_json(response, {{"embedding", vectors.front()}});
    return;
  }
  answer_json(response, {{"model", model_name},
                         {"embeddings", vectors},
                         {"total_duration", nanoseconds_since(started)},
                         {"load_duration", static_cast<std::int64_t>(load_ms * 1e6)},
                         {"prompt_eval_count", tokens}});
}

void Server::answer_openai_models(OutgoingResponse& response) {
  json data = json::array();
  for (const auto& name : registry_.names()) {
    data.push_back(
        {{"id", name}, {"object", "model"}, {"created", unix_now()}, {"owned_by", "g2c"}});
  }
  answer_json(response, {{"object", "list"}, {"data", data}});
}

/// OpenAI's chat completions.
void Server::answer_openai_chat(const IncomingRequest& request, OutgoingResponse& response) {
  const auto body = parse_body(request);
  const auto model_name = string_field(body, "model", true);
  ServedRequest served;
  served.messages = read_messages(body);
  if (served.messages.empty()) throw BadRequest{400, "\"messages\" is empty"};
  // OpenAI's defaults: temperature 1, no top-k, top_p 1.
  served.temperature = number_field(body, "temperature", 1.0);
  served.top_k = std::nullopt;
  served.top_p = number_field(body, "top_p", 1.0);
  auto max_tokens = integer_field(body, "max_completion_tokens");
  if (!max_tokens) max_tokens = integer_field(body, "max_tokens");
  if (max_tokens && *max_tokens < 1) {
    throw BadRequest{400, fmt::format("max_tokens must be >= 1, got {}", *max_tokens)};
  }
  served.max_new_tokens = max_tokens.value_or(-1);
  served.seed = seed_field(body, "seed");
  served.stop = stop_field(body, "stop");
  check_sampling(served);
  const bool stream = stream_field(body, false);
  double load_ms = 0;
  const auto model = model_for(model_name, load_ms);
  model->check(served);
  const auto id = fmt::format("chatcmpl-g2c{}", ++impl_->completions);
  const auto created = unix_now();
  const auto finish = [](const ServedGeneration& generation) {
    return generation.done_reason == "length" ? "length" : "stop";
  };
  if (!stream) {
    const auto generation = generate_whole(*model, served, request);
    if (!generation) return;  // nobody is waiting for it
    answer_json(response,
                {{"id", id},
                 {"object", "chat.completion"},
                 {"created", created},
                 {"model", model_name},
                 {"system_fingerprint", "g2c"},
                 {"choices",
                  {{{"index", 0},
                    {"message", {{"role", "assistant"}, {"content", generation->text}}},
                    {"finish_reason", finish(*generation)}}}},
                 {"usage",
                  {{"prompt_tokens", generation->prompt_tokens},
                   {"completion_tokens", generation->completion_tokens},
                   {"total_tokens", generation->prompt_tokens + generation->completion_tokens}}}});
    return;
  }
  response.set_stream("text/event-stream", [this, model, served, id, created, model_name,
                                            finish](const StreamWriter& write) {
    const auto event = [&write](const std::string& data) {
      return write("data: " + data + "\n\n");
    };
    const auto chunk = [&](const json& delta, const json& reason) {
      return event(to_text(openai_chunk(id, created, model_name, delta, reason)));
    };
    chunk({{"role", "assistant"}, {"content", ""}}, nullptr);
    return stream_generation(
        *model, served,
        [&](const std::string& piece) {
          return chunk({{"content", piece}}, nullptr);
        },
        [&](const ServedGeneration& generation) {
          chunk(json::object(), finish(generation));
          event("[DONE]");
        },
        [&](const std::string& message) {
          event(to_text({{"error", {{"message", message}}}}));
        });
  });
}

nlohmann::json Server::tag_of(const std::string& name) {
  const bool pretrained = !g2c::pretrained::pretrained_model_name(name).empty();
  const auto file = pretrained ? g2c::pretrained::pretrained_model_file(name)
                               : registry_.models_dir() / name / "model.pt";
  std::error_code error;
  const auto size = fs::file_size(file, error);
  return {{"name", name + ":latest"},
          {"model", name + ":latest"},
          {"modified_at", timestamp_of(file)},
          {"size", error ? 0 : size},
          {"digest", ""},
          {"details",
           {{"format", pretrained ? "gguf" : "g2c"},
            {"family", pretrained ? "llama" : "gpt"},
            {"families", {pretrained ? "llama" : "gpt"}},
            {"parameter_size", ""},
            {"quantization_level", pretrained ? "Q4_1" : "F32"}}}};
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
