// g2c-serve's Ollama protocol: its JSON in, one ServeRequest to the server's generation driver, and
// Ollama's JSON out (server.h lists the routes).
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "g2c/core/clock.h"
#include "g2c/core/errors.h"
#include "g2c/inference/serve_json.h"
#include "g2c/inference/server.h"
#include "g2c/pretrained/catalog.h"
#include "g2c/sft/chat_template.h"

namespace fs = std::filesystem;

namespace g2c::inference {

using namespace serve;

namespace {

/// Ollama's documented options that the course's models do not use: accepted, and named in the
/// answer's X-G2C-Ignored-Options header.
constexpr std::string_view kIgnoredOptions[] = {
    "num_keep", "typical_p", "penalize_newline", "numa", "num_batch", "num_gpu", "main_gpu",
    "use_mmap", "num_thread", "mirostat", "mirostat_tau", "mirostat_eta", "tfs_z", "low_vram",
    "f16_kv", "vocab_only", "use_mlock", "logits_all", "embedding_only",
    // Older clients still send these three, which Ollama's API accepted before the model file
    // came to decide them; a course model's attention and rotary settings are its own too.
    "num_gqa", "rope_frequency_base", "rope_frequency_scale"};
constexpr std::string_view kHonouredOptions[] = {
    "temperature",   "top_k", "top_p", "min_p",   "num_predict",      "repeat_penalty",
    "repeat_last_n", "seed",  "stop",  "num_ctx", "presence_penalty", "frequency_penalty"};

/// Ollama's "options" into `request`, over Ollama's defaults; the names of options that were
/// accepted but not used. BadRequest for a name Ollama does not document (a typo is not dropped
/// without a word) and for values out of range.
std::vector<std::string> read_ollama_options(const json& body, ServeRequest& request) {
  auto& options = request.options;
  options.temperature = 0.8;
  options.top_k = 40;
  options.top_p = 0.9;
  options.extras = GenerationExtras::ollama_defaults();
  // Ollama's way with a conversation longer than num_ctx: its oldest turns are left out.
  options.extras.drop_oldest_to_fit = true;
  std::vector<std::string> ignored;
  if (body.contains("options") && !body["options"].is_null()) {
    const auto& given = body["options"];
    if (!given.is_object()) throw BadRequest{400, "\"options\" must be a JSON object"};
    for (const auto& [name, value] : given.items()) {
      const auto known = [&](const auto& names) {
        return std::ranges::find(names, name) != std::end(names);
      };
      if (known(kIgnoredOptions)) {
        ignored.push_back(name);
      } else if (!known(kHonouredOptions)) {
        throw BadRequest{400, fmt::format("unknown option {}; the options are {}",
                                          excerpt(json(name)), fmt::join(kHonouredOptions, ", "))};
      }
    }
    options.temperature = number_field(given, "temperature", options.temperature);
    if (const auto top_k = integer_field(given, "top_k")) {
      options.top_k = *top_k == 0 ? std::nullopt : std::optional(*top_k);
    }
    if (given.contains("top_p") && !given["top_p"].is_null()) {
      options.top_p = number_field(given, "top_p", 1.0);
    }
    options.extras.min_p = number_field(given, "min_p", 0.0);
    options.extras.repeat_penalty =
        number_field(given, "repeat_penalty", options.extras.repeat_penalty);
    options.extras.repeat_last_n =
        integer_field(given, "repeat_last_n").value_or(options.extras.repeat_last_n);
    options.extras.presence_penalty = number_field(given, "presence_penalty", 0.0);
    options.extras.frequency_penalty = number_field(given, "frequency_penalty", 0.0);
    if (const auto n = integer_field(given, "num_predict")) {
      if (*n < -2) {
        // Ollama's two special values: -1 until the end token, -2 until the context is full.
        // Both stop at whichever comes first here (the model ends its turn, or the room runs out).
        throw BadRequest{400, fmt::format("num_predict must be >= 0, -1 (no limit) or -2 (fill "
                                          "the context), got {}",
                                          *n)};
      }
      request.max_new_tokens = *n < 0 ? -1 : *n;
    }
    options.extras.context = integer_field(given, "num_ctx");
    options.extras.seed = seed_field(given, "seed");
    options.extras.stop = stop_field(given, "stop");
  }
  check_sampling(options);
  return ignored;
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
                 const ServeResult& result, std::int64_t total_ns, double load_ms) {
  auto line = ollama_line(chat, model, text);
  line["done"] = true;
  line["done_reason"] = result.stopped ? "stop" : "length";
  line["total_duration"] = total_ns;
  line["load_duration"] = static_cast<std::int64_t>(load_ms * 1e6);
  line["prompt_eval_count"] = result.prompt_tokens;
  line["prompt_eval_duration"] = result.prompt_eval_ns;
  line["eval_count"] = result.completion_tokens;
  line["eval_duration"] = result.eval_ns;
  return line;
}

/// Ollama's tool calls: [{"id", "function": {"name", "arguments"}}].
json ollama_calls(const json& calls) {
  auto out = json::array();
  for (const auto& call : calls) {
    out.push_back({{"id", call.value("call_id", std::string())},
                   {"function", {{"name", call["name"]}, {"arguments", call["arguments"]}}}});
  }
  return out;
}

/// A file's modification time, as /api/tags reports it.
std::string timestamp_of(const fs::path& path) {
  std::error_code error;
  const auto written = fs::last_write_time(path, error);
  if (error) return g2c::utc_timestamp();
  return g2c::utc_timestamp(std::chrono::time_point_cast<std::chrono::system_clock::duration>(
      written - fs::file_time_type::clock::now() + std::chrono::system_clock::now()));
}

}  // namespace

void Server::answer_ollama(const IncomingRequest& request, OutgoingResponse& response, bool chat) {
  const auto body = parse_body(request);
  const auto model_name = string_field(body, "model", true);
  ServeRequest served;
  if (chat) {
    served.messages = read_messages(body);
    if (body.contains("tools") && !body["tools"].is_null()) {
      check_tools(body["tools"]);
      served.tools = body["tools"];
    }
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
  const auto ignored = read_ollama_options(body, served);
  if (!ignored.empty()) {
    response.headers.emplace_back("X-G2C-Ignored-Options",
                                  fmt::format("{}", fmt::join(ignored, ", ")));
    if (options_.log_requests) {
      fmt::print(stderr, "g2c-serve: options not used by the course's models: {}\n",
                 fmt::join(ignored, ", "));
    }
  }
  const bool stream_it = stream_field(body, true);
  served.model = model_for(model_name, served.load_ms);

  // Nothing to generate: Ollama's answer to "load the model".
  if (chat ? served.messages.empty() : served.prompt.empty()) {
    auto done = ollama_line(chat, model_name, "");
    done["done"] = true;
    done["done_reason"] = "load";
    answer_json(response, done);
    return;
  }
  const auto started = Clock::now();
  const double load_ms = served.load_ms;
  if (!served.tools.is_null() && !served.tools.empty()) {
    // A tool turn is answered whole (a call, not words); streamed, Ollama sends it as one message
    // line, then the done line.
    const auto result = generate(served, request);
    const auto calls = ollama_calls(result.tool_calls);
    auto done =
        ollama_done(true, model_name, result.text, result, nanoseconds_since(started), load_ms);
    if (!calls.empty()) done["message"]["tool_calls"] = calls;
    if (!stream_it) {
      answer_json(response, done);
      return;
    }
    auto line = ollama_line(true, model_name, result.text);
    if (!calls.empty()) line["message"]["tool_calls"] = calls;
    done["message"] = {{"role", "assistant"}, {"content", ""}};
    response.set_content(to_text(line) + "\n" + to_text(done) + "\n", "application/x-ndjson");
    return;
  }
  if (!stream_it) {
    const auto result = generate(served, request);
    answer_json(response, ollama_done(chat, model_name, result.text, result,
                                      nanoseconds_since(started), load_ms));
    return;
  }
  stream(
      response, "application/x-ndjson", std::move(served), request, "",
      [chat, model_name](const std::string& piece) {
        return to_text(ollama_line(chat, model_name, piece)) + "\n";
      },
      [chat, model_name, started, load_ms](const ServeResult& result) {
        return to_text(
                   ollama_done(chat, model_name, "", result, nanoseconds_since(started), load_ms)) +
               "\n";
      },
      [](const std::string& message) {
        return to_text({{"error", message}}) + "\n";
      },
      ollama_error);
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
  const auto model = model_with_embeddings(model_name, load_ms);
  const auto started = Clock::now();
  std::int64_t tokens = 0;
  const auto vectors = embed_texts(*model->embeddings, texts, body.value("truncate", true), tokens);
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

nlohmann::json Server::details_of(const std::string& name) {
  const auto* adapter = registry_.adapter(name);
  const bool pretrained = adapter || !g2c::pretrained::pretrained_model_name(name).empty();
  return {{"parent_model", adapter ? adapter->base + ":latest" : ""},
          {"format", pretrained ? "gguf" : "g2c"},
          {"family", pretrained ? "llama" : "gpt"},
          {"families", {pretrained ? "llama" : "gpt"}},
          {"parameter_size", pretrained ? "135M" : ""},
          {"quantization_level", pretrained ? "Q4_1" : "F32"}};
}

nlohmann::json Server::tag_of(const std::string& name) {
  const auto* adapter = registry_.adapter(name);
  const bool pretrained = !g2c::pretrained::pretrained_model_name(name).empty();
  const auto file = adapter      ? adapter->path
                    : pretrained ? g2c::pretrained::pretrained_model_file(name)
                                 : registry_.models_dir() / name / "model.pt";
  std::error_code error;
  auto size = fs::file_size(file, error);
  if (adapter && !error) {  // the base's weights and the adapter's, as Ollama counts both
    size += fs::file_size(g2c::pretrained::pretrained_model_file(adapter->base), error);
  }
  return {{"name", name + ":latest"},
          {"model", name + ":latest"},
          {"modified_at", timestamp_of(file)},
          {"size", error ? 0 : size},
          {"digest", ""},
          {"details", details_of(name)}};
}

void Server::answer_tags(OutgoingResponse& response) {
  json models = json::array();
  for (const auto& name : registry_.names()) models.push_back(tag_of(name));
  answer_json(response, {{"models", models}});
}

/// /api/ps: the models loaded now. They stay loaded while the server runs.
void Server::answer_ps(OutgoingResponse& response) {
  json models = json::array();
  for (const auto& model : registry_.loaded()) {
    auto entry = tag_of(model->name);
    entry.erase("modified_at");
    entry["expires_at"] = "0001-01-01T00:00:00Z";  // never unloaded
    entry["size_vram"] = 0;
    entry["context_length"] = model->context;
    models.push_back(entry);
  }
  answer_json(response, {{"models", models}});
}

/// /api/show {"model"}: how the model is asked (its template), its default parameters, details,
/// and what it can do — what clients read before they use a model.
void Server::answer_show(const IncomingRequest& request, OutgoingResponse& response) {
  const auto body = parse_body(request);
  auto name = string_field(body, "model", false);
  if (name.empty()) name = string_field(body, "name", true);  // the older field
  double load_ms = 0;
  const auto model = model_for(name, load_ms);
  json capabilities = {"completion"};
  if (model->tools) capabilities.push_back("tools");
  if (model->embeddings) capabilities.push_back("embedding");
  std::string template_text;
  if (model->embeddings) {
    // The template as the model renders it, with Ollama's placeholders in the turns.
    template_text = model->embeddings->tokenizer.format_chat(
        {{"system", "{{ .System }}"}, {"user", "{{ .Prompt }}"}}, true);
  } else {
    template_text = g2c::sft::ChatTemplate().generation_prompt({{"user", "{{ .Prompt }}"}});
  }
  const auto parameters = fmt::format(
      "temperature 0.8\ntop_k 40\ntop_p 0.9\nrepeat_penalty 1.1\nrepeat_last_n 64\nnum_ctx {}",
      model->context);
  answer_json(response, {{"modelfile", fmt::format("FROM {}\n{}", model->name, parameters)},
                         {"parameters", parameters},
                         {"template", template_text},
                         {"details", details_of(model->name)},
                         {"model_info",
                          {{"general.architecture", model->pretrained ? "llama" : "gpt"},
                           {"general.name", model->name},
                           {"context_length", model->context}}},
                         {"capabilities", capabilities},
                         {"modified_at", tag_of(model->name)["modified_at"]}});
}

}  // namespace g2c::inference
