// g2c-serve's OpenAI protocol: chat completions, embeddings and the model list, translated to and
// from the server's one request value (server.h lists the routes).
#include <cstdint>
#include <vector>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/inference/serve_json.h"
#include "g2c/inference/server.h"

namespace g2c::inference {

using namespace serve;

namespace {

json openai_chunk(const std::string& id, std::int64_t created, const std::string& model,
                  const json& delta, const json& finish_reason) {
  return {{"id", id},
          {"object", "chat.completion.chunk"},
          {"created", created},
          {"model", model},
          {"system_fingerprint", "g2c"},
          {"choices", {{{"index", 0}, {"delta", delta}, {"finish_reason", finish_reason}}}}};
}

const char* finish_reason(const ServeResult& result) {
  return result.stopped ? "stop" : "length";
}

/// `numbers`' bytes (float32, this machine's order: little-endian on every machine the course
/// runs on) in base64.
std::string base64_of(const std::vector<float>& numbers) {
  static constexpr char kDigits[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const auto* bytes = reinterpret_cast<const unsigned char*>(numbers.data());
  const std::size_t size = numbers.size() * sizeof(float);
  std::string out;
  out.reserve((size + 2) / 3 * 4);
  for (std::size_t i = 0; i < size; i += 3) {
    const std::uint32_t group = (std::uint32_t{bytes[i]} << 16) |
                                (i + 1 < size ? std::uint32_t{bytes[i + 1]} << 8 : 0) |
                                (i + 2 < size ? std::uint32_t{bytes[i + 2]} : 0);
    out += kDigits[(group >> 18) & 63];
    out += kDigits[(group >> 12) & 63];
    out += i + 1 < size ? kDigits[(group >> 6) & 63] : '=';
    out += i + 2 < size ? kDigits[group & 63] : '=';
  }
  return out;
}

/// A server-sent event carrying `data`.
std::string event(const std::string& data) {
  return "data: " + data + "\n\n";
}

}  // namespace

void Server::answer_openai_models(OutgoingResponse& response) {
  json data = json::array();
  for (const auto& name : registry_.names()) {
    data.push_back(
        {{"id", name}, {"object", "model"}, {"created", unix_now()}, {"owned_by", "g2c"}});
  }
  answer_json(response, {{"object", "list"}, {"data", data}});
}

/// OpenAI's chat completions, with OpenAI's defaults: temperature 1, top_p 1, no top-k, no
/// repetition penalty, frequency and presence penalties 0.
void Server::answer_openai_chat(const IncomingRequest& request, OutgoingResponse& response) {
  const auto body = parse_body(request);
  const auto model_name = string_field(body, "model", true);
  ServeRequest served;
  served.messages = read_messages(body);
  if (served.messages.empty()) throw BadRequest{400, "\"messages\" is empty"};
  auto& options = served.options;
  options.temperature = number_field(body, "temperature", 1.0);
  options.top_k = std::nullopt;
  options.top_p = number_field(body, "top_p", 1.0);
  options.extras.repeat_penalty = 1.0;
  options.extras.repeat_last_n = -1;  // the penalties below look at everything so far
  options.extras.frequency_penalty = number_field(body, "frequency_penalty", 0.0);
  options.extras.presence_penalty = number_field(body, "presence_penalty", 0.0);
  auto max_tokens = integer_field(body, "max_completion_tokens");
  if (!max_tokens) max_tokens = integer_field(body, "max_tokens");
  if (max_tokens && *max_tokens < 1) {
    throw BadRequest{400, fmt::format("max_tokens must be >= 1, got {}", *max_tokens)};
  }
  served.max_new_tokens = max_tokens.value_or(-1);
  options.extras.seed = seed_field(body, "seed");
  options.extras.stop = stop_field(body, "stop");
  check_sampling(options);
  const bool stream_it = stream_field(body, false);
  served.model = model_for(model_name, served.load_ms);
  const auto id = fmt::format("chatcmpl-g2c{}", ++completions_);
  const auto created = unix_now();
  if (!stream_it) {
    const auto result = generate(served, request);
    answer_json(response, {{"id", id},
                           {"object", "chat.completion"},
                           {"created", created},
                           {"model", model_name},
                           {"system_fingerprint", "g2c"},
                           {"choices",
                            {{{"index", 0},
                              {"message", {{"role", "assistant"}, {"content", result.text}}},
                              {"finish_reason", finish_reason(result)}}}},
                           {"usage",
                            {{"prompt_tokens", result.prompt_tokens},
                             {"completion_tokens", result.completion_tokens},
                             {"total_tokens", result.prompt_tokens + result.completion_tokens}}}});
    return;
  }
  const auto chunk = [id, created, model_name](const json& delta, const json& reason) {
    return event(to_text(openai_chunk(id, created, model_name, delta, reason)));
  };
  stream(
      response, "text/event-stream", std::move(served), request,
      chunk({{"role", "assistant"}, {"content", ""}}, nullptr),
      [chunk](const std::string& piece) {
        return chunk({{"content", piece}}, nullptr);
      },
      [chunk](const ServeResult& result) {
        return chunk(json::object(), finish_reason(result)) + event("[DONE]");
      },
      [](const std::string& message) {
        return event(to_text({{"error", {{"message", message}}}}));
      },
      openai_error);
}

/// OpenAI's embeddings: {"model", "input": text or [texts]} -> {"object": "list", "data":
/// [{"object": "embedding", "index", "embedding"}], "model", "usage"}.
void Server::answer_openai_embeddings(const IncomingRequest& request, OutgoingResponse& response) {
  const auto body = parse_body(request);
  const auto model_name = string_field(body, "model", true);
  std::vector<std::string> texts;
  if (body.contains("input") && body["input"].is_string()) {
    texts.push_back(body["input"].get<std::string>());
  } else if (body.contains("input") && body["input"].is_array() && !body["input"].empty()) {
    for (const auto& text : body["input"]) {
      if (!text.is_string()) {
        throw BadRequest{400,
                         "\"input\" must be a string or a list of strings (token ids are "
                         "not taken)"};
      }
      texts.push_back(text.get<std::string>());
    }
  } else {
    throw BadRequest{400, "\"input\" must be a string or a non-empty list of strings"};
  }
  const auto format = string_field(body, "encoding_format", false);
  if (!format.empty() && format != "float" && format != "base64") {
    throw BadRequest{400, "\"encoding_format\" must be \"float\" or \"base64\""};
  }
  double load_ms = 0;
  const auto model = model_with_embeddings(model_name, load_ms);
  std::int64_t tokens = 0;
  const auto vectors = embed_texts(*model->embeddings, texts, true, tokens);
  json data = json::array();
  for (std::size_t i = 0; i < vectors.size(); ++i) {
    // OpenAI's own client asks for base64: the float32 numbers' bytes, little-endian.
    const json embedding = format == "base64" ? json(base64_of(vectors[i])) : json(vectors[i]);
    data.push_back({{"object", "embedding"}, {"index", i}, {"embedding", embedding}});
  }
  answer_json(response, {{"object", "list"},
                         {"data", data},
                         {"model", model_name},
                         {"usage", {{"prompt_tokens", tokens}, {"total_tokens", tokens}}}});
}

}  // namespace g2c::inference
