#include "g2c/inference/serve_json.h"

#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

#include "g2c/core/cli.h"
#include "g2c/core/clock.h"
#include "g2c/core/errors.h"

namespace g2c::inference::serve {

namespace {

/// How deeply a request body may nest JSON: Ollama's requests need four levels, a tool's
/// parameters a few more. Checked on the text, before anything parses, copies or prints the value.
constexpr int kMaxBodyDepth = 64;
/// A tool's parameters schema: how deep and how long it may be, and how many tools one request
/// may name.
constexpr int kMaxSchemaDepth = 16;
constexpr std::size_t kMaxSchemaBytes = 16 << 10;
constexpr std::size_t kMaxTools = 64;

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

}  // namespace

std::string to_text(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string excerpt(const json& value) {
  const auto text = to_text(value);
  return text.size() <= 80 ? text : text.substr(0, 77) + "...";
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

json read_messages(const json& body) {
  if (!body.contains("messages") || !body["messages"].is_array()) {
    throw BadRequest{400, "\"messages\" must be a list of {\"role\", \"content\"} objects"};
  }
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
    if (message.contains("content") && !message["content"].is_string() &&
        !message["content"].is_null()) {
      throw BadRequest{400, "a message's \"content\" must be a string"};
    }
  }
  return body["messages"];
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

void check_sampling(const CompletionOptions& options) {
  // A positive temperature below 0.001 divides the logits into infinities (float32 overflows
  // past 3.4e38), so it is refused with the way to say greedy.
  if (!(options.temperature >= 0 && options.temperature <= 100)) {
    throw BadRequest{
        400, fmt::format("temperature must be between 0 and 100, got {}", options.temperature)};
  }
  if (options.temperature > 0 && options.temperature < 1e-3) {
    throw BadRequest{400, fmt::format("temperature {} is too small to sample with: use 0 for "
                                      "greedy decoding, or at least 0.001",
                                      options.temperature)};
  }
  if (options.top_k && *options.top_k < 0) {
    throw BadRequest{400, fmt::format("top_k must be >= 0, got {}", *options.top_k)};
  }
  if (options.top_p && !(*options.top_p > 0 && *options.top_p <= 1)) {
    throw BadRequest{400, fmt::format("top_p must be in (0, 1], got {}", *options.top_p)};
  }
  const auto& extras = options.extras;
  if (!(extras.min_p >= 0 && extras.min_p <= 1)) {
    throw BadRequest{400, fmt::format("min_p must be in [0, 1], got {}", extras.min_p)};
  }
  if (!(extras.repeat_penalty > 0 && extras.repeat_penalty <= 10)) {
    throw BadRequest{400, fmt::format("repeat_penalty must be in (0, 10], got {} (1: none)",
                                      extras.repeat_penalty)};
  }
  if (extras.repeat_last_n < -1) {
    throw BadRequest{400, fmt::format("repeat_last_n must be -1 (all), 0 (none) or more, got {}",
                                      extras.repeat_last_n)};
  }
  for (const auto& [name, value] : {std::pair{"frequency_penalty", extras.frequency_penalty},
                                    std::pair{"presence_penalty", extras.presence_penalty}}) {
    if (!(value >= -2 && value <= 2)) {
      throw BadRequest{400, fmt::format("{} must be between -2 and 2, got {}", name, value)};
    }
  }
  if (extras.context && *extras.context < 1) {
    throw BadRequest{400, fmt::format("num_ctx must be >= 1, got {}", *extras.context)};
  }
}

void answer_json(OutgoingResponse& response, const json& value, int status) {
  response.status = status;
  response.set_content(to_text(value), "application/json; charset=utf-8");
}

void ollama_error(OutgoingResponse& response, int status, const std::string& message) {
  answer_json(response, {{"error", message}}, status);
}

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

void answer_failure(const std::exception& failure, OutgoingResponse& response, ErrorWriter error) {
  if (const auto* bad = dynamic_cast<const ValueError*>(&failure)) {
    error(response, 400, bad->what());
  } else if (const auto* todo = dynamic_cast<const NotImplementedError*>(&failure)) {
    error(response, 501, todo->what());  // the message names the function
  } else {
    error(response, 500, fmt::format("the server failed: {}", g2c::describe_error(failure)));
  }
}

std::int64_t nanoseconds_since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
}

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string timestamp_now() {
  return g2c::utc_timestamp(std::chrono::system_clock::now(), true);
}

}  // namespace g2c::inference::serve
