#include "g2c/inference/pretrained_backend.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/inference/stop_strings.h"
#include "g2c/pretrained/logits_model.h"

namespace g2c::inference {

namespace {

BackendInfo info_of(const g2c::pretrained::PretrainedModel& model) {
  if (model.model.is_empty()) throw ValueError("PretrainedBackend needs a loaded model");
  const auto& options = model.model->options;
  return BackendInfo("pretrained", model.name,
                     {{"weights", model.model->packed() ? "packed" : "float32"},
                      {"parameters", options.num_parameters()},
                      {"context", options.max_seq_len()}});
}

/// JSON as text, a client's invalid UTF-8 replaced rather than thrown.
std::string as_text(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

/// The system turn's paragraph about the tools: each tool's name, description and parameters, and
/// how to call one.
std::string describe_tools(const nlohmann::json& tools) {
  std::ostringstream out;
  out << "You can call these tools:\n";
  for (const auto& spec : tools) {
    const auto& function = spec.contains("function") ? spec["function"] : spec;
    out << "- " << function.value("name", std::string("?")) << ": "
        << function.value("description", std::string())
        << " Parameters: " << as_text(function.value("parameters", nlohmann::json::object()))
        << "\n";
  }
  out << "To call a tool, reply with only a JSON object: {\"name\": \"<tool>\", \"arguments\": "
         "{...}}. When a tool's result comes back, answer the user in plain text.";
  return out.str();
}

}  // namespace

std::vector<g2c::pretrained::ChatMessage> render_tool_chat(
    const nlohmann::json& messages, const nlohmann::json& tools,
    const std::optional<std::string>& system) {
  if (!messages.is_array() || messages.empty()) {
    throw ValueError(
        "PretrainedBackend::chat_with_tools: messages must be a non-empty list of "
        "{\"role\", \"content\"} objects");
  }
  std::optional<std::string> system_text = system;
  std::vector<g2c::pretrained::ChatMessage> turns;
  for (const auto& message : messages) {
    if (!message.is_object() || !message.contains("role") || !message["role"].is_string() ||
        !message.value("content", nlohmann::json("")).is_string()) {
      throw ValueError(
          fmt::format("PretrainedBackend::chat_with_tools: each message must be an "
                      "object with a string role and content, got {}",
                      as_text(message).substr(0, 200)));
    }
    const std::string role = message["role"];
    std::string content = message.value("content", std::string());
    if (role == "system") {
      system_text = content;
    } else if (role == "tool") {
      // Ollama names the tool in "tool_name", OpenAI-style clients in "name".
      const auto tool = message.value("tool_name", message.value("name", std::string()));
      turns.push_back({"user", fmt::format("The {} tool returned: {}\nAnswer my question with it.",
                                           tool, content)});
    } else if (role == "assistant" && message.contains("tool_calls") &&
               !message["tool_calls"].empty()) {
      std::string text = content;  // any words before the calls, then each call as its JSON
      for (const auto& call : message["tool_calls"]) {
        const auto& function = call.contains("function") ? call["function"] : call;
        if (!text.empty()) text += "\n";
        text += as_text({{"name", function.value("name", std::string())},
                         {"arguments", function.value("arguments", nlohmann::json::object())}});
      }
      turns.push_back({"assistant", text});
    } else {
      turns.push_back({role, content});
    }
  }
  if (tools.is_array() && !tools.empty()) {
    system_text = (system_text ? *system_text + "\n\n" : std::string()) + describe_tools(tools);
  }
  if (system_text) turns.insert(turns.begin(), {"system", *system_text});
  return turns;
}

namespace {

/// Each tool's name is one a model can write between quotes and a mask can spell: a name with a
/// quote in it would end the spelling early, naming no tool.
void check_tool_names(const nlohmann::json& tools) {
  if (!tools.is_array()) return;
  for (const auto& spec : tools) {
    const auto& function = spec.is_object() && spec.contains("function") ? spec["function"] : spec;
    const auto name =
        function.is_object() && function.contains("name") ? function["name"] : nlohmann::json();
    if (!name.is_string() || !is_valid_tool_name(name.get<std::string>())) {
      throw ValueError(fmt::format(
          "PretrainedBackend::chat_with_tools: a tool's name must be 1 to 64 letters, digits, "
          "'_' or '-', got {}",
          as_text(name).substr(0, 80)));
    }
  }
}

/// The reply as a call when it is one and nothing else: a JSON object (spaces around it allowed)
/// {"name": <an offered tool>, "arguments": {…}} — what a model trained to call tools writes (an
/// adapter of exercise 18b). Anything else, a call among words included, stays text (module 18's
/// rescue_tool_call is the client's to apply).
std::optional<nlohmann::json> whole_reply_call(const std::string& content,
                                               const nlohmann::json& tools) {
  const auto call = nlohmann::json::parse(content, nullptr, false);
  if (!call.is_object() || call.size() != 2 || !call.contains("name") ||
      !call["name"].is_string() || !call.contains("arguments") || !call["arguments"].is_object()) {
    return std::nullopt;
  }
  for (const auto& spec : tools) {
    const auto& function = spec.contains("function") ? spec["function"] : spec;
    if (function.value("name", std::string()) == call["name"].get<std::string>()) return call;
  }
  return std::nullopt;
}

/// A tool call decoded under its tool's schema (ToolChoice::Required): the JSON around the values
/// is written for the model — {"name": "<tool>", "arguments": {"<key>": "...", ...}} — and the
/// model chooses only what a schema leaves open: the tool among several (its name spelled under a
/// mask of the names) and each required string argument's text (under module 18's grammar, so it
/// is a JSON string body, and closed by the model's own '"'). Returns nullopt when a required
/// argument is not a string: the caller decodes under the general JSON grammar instead.
struct GuidedCall {
  std::string text;          // the call's JSON
  std::int64_t sampled = 0;  // tokens the model chose (the forced ones not counted)
  bool complete = true;      // false when a value ran out of budget and was closed for it
};

std::optional<GuidedCall> decode_guided_call(g2c::pretrained::PretrainedModel& pretrained,
                                             std::vector<std::int64_t> ids,
                                             const nlohmann::json& tools,
                                             const std::vector<std::string>& pieces,
                                             g2c::sampling::MaskCache& masks,
                                             g2c::sampling::MaskCache& string_masks,
                                             const ChatOptions& options) {
  const auto function_of = [](const nlohmann::json& spec) -> const nlohmann::json& {
    return spec.contains("function") ? spec["function"] : spec;
  };
  for (const auto& spec : tools) {
    const auto schema = function_of(spec).value("parameters", nlohmann::json::object());
    for (const auto& key : schema.value("required", nlohmann::json::array())) {
      const auto type = schema.value("properties", nlohmann::json::object())
                            .value(key.get<std::string>(), nlohmann::json::object())
                            .value("type", std::string("string"));
      if (type != "string") return std::nullopt;
    }
  }
  auto& tokenizer = pretrained.tokenizer;
  g2c::pretrained::LlamaLogitsModel model(*pretrained.model);
  const g2c::sampling::JsonPrefixAutomaton automaton;
  auto state = automaton.initial();
  const auto sampling =
      generate_options_of(options.temperature, options.top_k, options.top_p, options.extras);
  GuidedCall call;
  const auto force = [&](const std::string& text) {
    const auto forced = tokenizer.encode(text);
    ids.insert(ids.end(), forced.begin(), forced.end());
    state = automaton.advance(state, text).value();
    call.text += text;
  };
  // One token under `allowed` (V) bool; nullopt when the mask allows nothing.
  const auto sample = [&](const torch::Tensor& allowed) -> std::optional<std::int64_t> {
    if (!allowed.any().item<bool>()) return std::nullopt;
    const auto context = torch::tensor(ids, torch::kLong).unsqueeze(0);        // (1, T)
    const auto logits = model.forward(context).select(1, -1).to(torch::kCPU);  // (1, V)
    const auto masked =
        logits.masked_fill(allowed.logical_not(), -std::numeric_limits<double>::infinity());
    const auto next = g2c::sampling::sample_next_token(masked, torch::tensor(ids), sampling);
    const auto id = next.item<std::int64_t>();
    ids.push_back(id);
    ++call.sampled;
    return id;
  };

  // The tool: forced when there is one, else spelled by the model under a mask of the names.
  std::vector<std::string> names;
  for (const auto& spec : tools) names.push_back(function_of(spec).value("name", std::string()));
  std::string name = names.front();
  if (names.size() == 1) {
    force("{\"name\": \"" + name + "\", \"arguments\": {");
  } else {
    force("{\"name\": \"");
    std::string spelled;
    while (true) {
      auto allowed = torch::zeros({static_cast<std::int64_t>(pieces.size())}, torch::kBool);
      auto flags = allowed.accessor<bool, 1>();
      for (std::size_t i = 0; i < pieces.size(); ++i) {
        if (pieces[i].empty()) continue;
        const auto candidate = spelled + pieces[i];
        flags[static_cast<std::int64_t>(i)] =
            std::any_of(names.begin(), names.end(),
                        [&](const std::string& n) { return (n + "\"").starts_with(candidate); });
      }
      const auto id = sample(allowed);
      if (!id) break;
      spelled += pieces[static_cast<std::size_t>(*id)];
      if (spelled.ends_with("\"")) break;
    }
    name = spelled.ends_with("\"") ? spelled.substr(0, spelled.size() - 1) : names.front();
    call.text += name + "\"";
    state = automaton.advance(automaton.initial(), call.text).value();
    force(", \"arguments\": {");
  }

  // Each required argument: the key forced, the string's text chosen by the model.
  const auto chosen = std::find_if(tools.begin(), tools.end(), [&](const nlohmann::json& spec) {
    return function_of(spec).value("name", std::string()) == name;
  });
  if (chosen == tools.end()) {
    // Names are checked before decoding (check_tool_names), so the mask spells one of them.
    throw std::logic_error("decode_guided_call: the spelled name \"" + name + "\" is no tool's");
  }
  const auto schema = function_of(*chosen).value("parameters", nlohmann::json::object());
  bool first = true;
  for (const auto& key : schema.value("required", nlohmann::json::array())) {
    force(std::string(first ? "" : ", ") + nlohmann::json(key).dump() + ": \"");
    first = false;
    for (std::int64_t step = 0;; ++step) {
      if (step == options.max_new_tokens) {  // out of budget: close the string for the model
        force("\"");
        call.complete = false;
        break;
      }
      // Inside the string the grammar also allows a piece that closes it and goes on ('"}'):
      // only a piece that ends exactly at the closing quote may leave the string. That mask
      // depends on the state alone, so it is memoised beside the grammar's.
      auto string_mask = string_masks.find(state);
      if (string_mask == string_masks.end()) {
        auto found = masks.find(state);
        if (found == masks.end()) {
          found = masks.emplace(state, g2c::sampling::allowed_token_mask(automaton, state, pieces))
                      .first;
        }
        auto allowed = found->second.clone();
        auto flags = allowed.accessor<bool, 1>();
        for (std::size_t i = 0; i < pieces.size(); ++i) {
          if (!flags[static_cast<std::int64_t>(i)]) continue;
          const auto after = automaton.advance(state, pieces[i]);
          const bool in_string = after->mode == g2c::sampling::JsonMode::kString ||
                                 after->mode == g2c::sampling::JsonMode::kStringEscape;
          flags[static_cast<std::int64_t>(i)] =
              in_string ||
              (after->mode == g2c::sampling::JsonMode::kPostValue && pieces[i].back() == '"');
        }
        string_mask = string_masks.emplace(state, allowed).first;
      }
      const auto& allowed = string_mask->second;
      const auto id = sample(allowed);
      if (!id) {
        force("\"");
        call.complete = false;
        break;
      }
      const auto& piece = pieces[static_cast<std::size_t>(*id)];
      state = automaton.advance(state, piece).value();
      call.text += piece;
      if (state.mode == g2c::sampling::JsonMode::kPostValue) break;
    }
  }
  call.text += "}}";
  return call;
}

/// The tokens a prompt and its reply may take together: the model's context, or less when the
/// extras ask (Ollama's num_ctx).
std::int64_t context_of(const g2c::pretrained::PretrainedModel& model,
                        const GenerationExtras& extras) {
  const auto whole = model.model->options.max_seq_len();
  return extras.context ? std::clamp<std::int64_t>(*extras.context, 1, whole) : whole;
}

/// What generate_reply made: the text shown (stop strings cut), the ids drawn, and how it ended.
struct Reply {
  std::string text;
  std::int64_t tokens = 0;
  bool stopped = false;    // the end token or a stop string
  bool cancelled = false;  // options' keep_going said no
};

/// A free-text reply to `ids` under the settings and extras: the one way this backend generates
/// text, through the pretrained model's one streamed decode (generate_pretrained_text). Pieces go
/// through the stop strings to `on_text` while they come.
Reply generate_reply(g2c::pretrained::PretrainedModel& model, const std::vector<std::int64_t>& ids,
                     std::int64_t max_new_tokens, const g2c::sampling::GenerateOptions& sampling,
                     const GenerationExtras& extras, const TextSink& on_text) {
  StopStrings stops(extras.stop);
  Reply reply;
  const auto show = [&](const std::string& text) {
    if (text.empty()) return;
    reply.text += text;
    if (on_text) on_text(text);
  };
  const auto generation = g2c::pretrained::generate_pretrained_text(
      model, ids, max_new_tokens, sampling,
      [&](const std::string& piece) {
        show(stops.push(piece));
        return !stops.stopped();
      },
      g2c::pretrained::PretrainedDecoding()
          .repeat_last_n(extras.repeat_last_n)
          .min_p(extras.min_p)
          .frequency_penalty(extras.frequency_penalty)
          .presence_penalty(extras.presence_penalty),
      extras.keep_going);
  show(stops.finish());
  reply.tokens = static_cast<std::int64_t>(generation.ids.size());
  reply.stopped = generation.stopped || stops.stopped();
  reply.cancelled = generation.cancelled && !stops.stopped();
  return reply;
}

}  // namespace

nlohmann::json sampling_json(const ChatOptions& options) {
  return CompletionOptions()
      .with_max_new_tokens(options.max_new_tokens)
      .with_temperature(options.temperature)
      .with_top_k(options.top_k)
      .with_top_p(options.top_p)
      .to_json();
}

g2c::sampling::GenerateOptions generate_options_of(double temperature,
                                                   std::optional<std::int64_t> top_k,
                                                   std::optional<double> top_p,
                                                   const GenerationExtras& extras) {
  auto options = g2c::sampling::GenerateOptions()
                     .temperature(temperature)
                     .top_k(top_k)
                     .top_p(top_p)
                     .repetition_penalty(extras.repeat_last_n == 0 ? 1.0 : extras.repeat_penalty);
  if (extras.seed) options.generator(at::make_generator<at::CPUGeneratorImpl>(*extras.seed));
  return options;
}

namespace {}  // namespace

PretrainedBackend::PretrainedBackend(std::shared_ptr<g2c::pretrained::PretrainedModel> model,
                                     PretrainedBackendOptions options)
    : model_(model ? std::move(model)
                   : throw ValueError("PretrainedBackend needs a model, got none")),
      options_(std::move(options)),
      info_(info_of(*model_)) {}

PretrainedBackend PretrainedBackend::load(const std::string& name,
                                          const g2c::pretrained::LoadOptions& load,
                                          PretrainedBackendOptions options,
                                          const std::optional<std::filesystem::path>& adapter) {
  return PretrainedBackend(std::make_shared<g2c::pretrained::PretrainedModel>(
                               g2c::pretrained::load_pretrained_model(name, load, adapter)),
                           std::move(options));
}

InferenceResult PretrainedBackend::complete(const std::string& prompt,
                                            const CompletionOptions& options) {
  if (prompt.empty()) throw ValueError("PretrainedBackend::complete: the prompt is empty");
  if (options.max_new_tokens <= 0) {
    throw ValueError(fmt::format("PretrainedBackend::complete: max_new_tokens must be > 0, got {}",
                                 options.max_new_tokens));
  }
  auto& tokenizer = model_->tokenizer;
  std::vector<g2c::pretrained::ChatMessage> messages;
  if (options_.system) messages.push_back({"system", *options_.system});
  messages.push_back({"user", prompt});
  const auto ids = tokenizer.encode(options_.raw ? prompt : tokenizer.format_chat(messages, true));
  const auto context = context_of(*model_, options.extras);
  if (static_cast<std::int64_t>(ids.size()) >= context) {
    throw ValueError(fmt::format(
        "PretrainedBackend::complete: the prompt is {} tokens, {}'s context {}; shorten it",
        ids.size(), model_->name, context));
  }
  const auto max_new_tokens =
      std::min(options.max_new_tokens, context - static_cast<std::int64_t>(ids.size()));
  torch::NoGradGuard no_grad;
  const auto start = std::chrono::steady_clock::now();
  const auto reply = generate_reply(
      *model_, ids, max_new_tokens,
      generate_options_of(options.temperature, options.top_k, options.top_p, options.extras),
      options.extras, options.on_text);
  const double latency_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return InferenceResult(prompt, reply.text, static_cast<std::int64_t>(ids.size()), reply.tokens,
                         latency_ms, info_,
                         {{"sampling", options.to_json()},
                          {"template", options_.raw ? "raw" : "chatml"},
                          {"stopped", reply.stopped},
                          {"cancelled", reply.cancelled}});
}

ChatResult PretrainedBackend::chat_with_tools(const nlohmann::json& messages,
                                              const nlohmann::json& tools,
                                              const ChatOptions& options) {
  if (options.max_new_tokens <= 0) {
    throw ValueError(
        fmt::format("PretrainedBackend::chat_with_tools: max_new_tokens must be > 0, got {}",
                    options.max_new_tokens));
  }
  check_tool_names(tools);
  auto turns = render_tool_chat(messages, tools, options_.system);
  auto& tokenizer = model_->tokenizer;
  const auto context = context_of(*model_, options.extras);
  // Ollama leaves out one message at a time; without drop_oldest_to_fit nothing is left out.
  auto fitted = g2c::pretrained::fit_chat(tokenizer, turns, 1, [&](std::int64_t length) {
    return !options.extras.drop_oldest_to_fit || length < context;
  });
  const auto ids = std::move(fitted.ids);
  const auto dropped = fitted.dropped_messages;
  if (static_cast<std::int64_t>(ids.size()) >= context) {
    throw ValueError(fmt::format(
        "PretrainedBackend::chat_with_tools: the conversation is {} tokens{}, {}'s context {}; "
        "{}",
        ids.size(), dropped > 0 ? " with only its system and last message left" : "", model_->name,
        context, dropped > 0 ? "shorten the last message" : "start a shorter one"));
  }
  const auto max_new_tokens =
      std::min(options.max_new_tokens, context - static_cast<std::int64_t>(ids.size()));
  const bool constrained = options_.tool_choice == ToolChoice::Required && tools.is_array() &&
                           !tools.empty() && messages.back().value("role", "") == "user";
  torch::NoGradGuard no_grad;
  const auto start = std::chrono::steady_clock::now();
  std::string content;
  std::int64_t reply_tokens = 0;
  bool stopped = false;
  bool cancelled = false;
  if (constrained) {
    // The vocabulary's pieces and the grammar's masks are shared by every constrained call.
    std::lock_guard lock(*constrained_mutex_);
    if (pieces_.empty()) {
      pieces_ = g2c::pretrained::vocab_pieces(tokenizer, model_->model->options.vocab_size());
    }
    if (auto guided =
            decode_guided_call(*model_, ids, tools, pieces_, masks_, string_masks_, options)) {
      content = guided->text;
      reply_tokens = guided->sampled;
      stopped = guided->complete;
    } else {
      g2c::pretrained::LlamaLogitsModel logits(*model_->model);
      const auto prompt = torch::tensor(ids, torch::kLong);
      auto json_options = g2c::sampling::GenerateJsonOptions()
                              .max_new_tokens(options.max_new_tokens)
                              .temperature(options.temperature)
                              .top_k(options.top_k)
                              .top_p(options.top_p)
                              .mask_cache(&masks_);
      json_options.generator(
          generate_options_of(options.temperature, options.top_k, options.top_p, options.extras)
              .generator());
      const auto out = g2c::sampling::generate_json(logits, prompt, pieces_, json_options);
      const auto continuation = out.narrow(0, prompt.size(0), out.size(0) - prompt.size(0));
      content = tokenizer.decode(
          std::vector<std::int64_t>(continuation.data_ptr<std::int64_t>(),
                                    continuation.data_ptr<std::int64_t>() + continuation.numel()));
      reply_tokens = continuation.numel();
    }
  } else {
    const auto reply = generate_reply(
        *model_, ids, max_new_tokens,
        generate_options_of(options.temperature, options.top_k, options.top_p, options.extras),
        options.extras, options.on_text);
    content = reply.text;
    reply_tokens = reply.tokens;
    stopped = reply.stopped;
    cancelled = reply.cancelled;
  }
  const double latency_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  auto tool_calls = nlohmann::json::array();
  if (constrained) {
    // The grammar guarantees JSON (or, when the budget ran out, a prefix of it); whether it is a
    // call is the model's doing.
    const auto call = nlohmann::json::parse(content, nullptr, false);
    if (call.is_object() && call.contains("name") && call["name"].is_string() &&
        call.value("arguments", nlohmann::json::object()).is_object()) {
      stopped = true;
      tool_calls.push_back({{"name", call["name"]},
                            {"arguments", call.value("arguments", nlohmann::json::object())},
                            {"call_id", fresh_call_id()}});
      content.clear();
    }
  } else if (tools.is_array() && !tools.empty()) {
    if (const auto call = whole_reply_call(content, tools)) {
      tool_calls.push_back({{"name", (*call)["name"]},
                            {"arguments", (*call)["arguments"]},
                            {"call_id", fresh_call_id()}});
      content.clear();
    }
  }
  return ChatResult(messages, content, tool_calls, static_cast<std::int64_t>(ids.size()),
                    reply_tokens, latency_ms, info_,
                    {{"sampling", sampling_json(options)},
                     {"constrained", constrained},
                     {"stopped", stopped},
                     {"cancelled", cancelled},
                     {"dropped_messages", dropped}});
}

}  // namespace g2c::inference
