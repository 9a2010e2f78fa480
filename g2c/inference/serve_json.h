// What g2c-serve's files share (server.cpp, server_ollama_provided.cpp,
// server_openai_provided.cpp): reading a client's JSON without trusting it, and writing JSON
// answers and errors. Internal to the server.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "g2c/inference/backend.h"
#include "g2c/inference/http_server.h"

namespace g2c::inference::serve {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

/// A request the client got wrong: answered with `status` and a JSON error.
struct BadRequest {
  int status;
  std::string message;
};

/// Thrown to end a generation whose client has gone; and when the server is stopping.
struct ClientGone {};
struct EndGeneration {};

/// JSON as text. Invalid UTF-8 — a client's bytes echoed in a message, a model's reply cut in the
/// middle of a character — becomes U+FFFD instead of an exception.
std::string to_text(const json& value);
/// A client's value quoted in an error message: at most 80 characters of it.
std::string excerpt(const json& value);

/// The body as a JSON object: its nesting checked on the text first (at most 64 levels), then
/// parsed. BadRequest (400) for anything else.
json parse_body(const IncomingRequest& request);
std::string string_field(const json& body, const char* key, bool required);
double number_field(const json& object, const char* key, double fallback);
std::optional<std::int64_t> integer_field(const json& object, const char* key);
/// A seed: 0 to 2^63 - 1, or -1 (Ollama's "any"): nullopt.
std::optional<std::uint64_t> seed_field(const json& object, const char* key);
std::vector<std::string> stop_field(const json& object, const char* key);
bool stream_field(const json& body, bool fallback);
/// "messages" checked: a list of objects with a known role and string (or null) content.
json read_messages(const json& body);
/// /api/chat's "tools" checked: at most 64 function specs with names a model can spell, no two
/// alike, parameters a bounded schema object.
void check_tools(const json& tools);
/// The sampling settings' ranges (temperature, top-k, top-p, min-p, penalties, num_ctx).
void check_sampling(const CompletionOptions& options);

void answer_json(OutgoingResponse& response, const json& value, int status = 200);
/// Ollama's errors: {"error": "..."}.
void ollama_error(OutgoingResponse& response, int status, const std::string& message);
/// OpenAI's errors: {"error": {"message", "type", "param", "code"}}.
void openai_error(OutgoingResponse& response, int status, const std::string& message);
using ErrorWriter = void (*)(OutgoingResponse&, int, const std::string&);
/// The protocol's error answer for what `failure` says: the client's mistakes 4xx, a course
/// function still to write 501, the server's own failures 500 (without a library's stack trace).
void answer_failure(const std::exception& failure, OutgoingResponse& response, ErrorWriter error);

std::int64_t nanoseconds_since(Clock::time_point start);
std::int64_t unix_now();
/// Ollama's timestamps: RFC 3339 in UTC with nanoseconds.
std::string timestamp_now();

}  // namespace g2c::inference::serve
