#include "g2c/inference/served_models.h"

#include <algorithm>
#include <cctype>
#include <chrono>

#include <fmt/format.h>

#include "g2c/core/clock.h"
#include "g2c/core/errors.h"
#include "g2c/core/strip.h"
#include "g2c/inference/artifact_chat_backend.h"
#include "g2c/inference/pretrained_backend.h"
#include "g2c/pretrained/catalog.h"
#include "g2c/pretrained/lora.h"
#include "g2c/pretraining/artifact_names.h"

namespace fs = std::filesystem;

namespace g2c::inference {

namespace {

/// The pretrained model `name`, with an adapter merged when given: one copy of its weights behind
/// three backends. The base's calls are decoded under the tools' schemas (it calls none
/// otherwise); an adapter's model writes its own.
std::shared_ptr<ServedModel> load_pretrained(
    const std::string& name, const std::optional<std::filesystem::path>& adapter = std::nullopt) {
  auto shared =
      std::make_shared<g2c::pretrained::PretrainedModel>(g2c::pretrained::load_pretrained_model(
          name, g2c::pretrained::LoadOptions().packed(true), adapter));
  auto served = std::make_shared<ServedModel>();
  served->name = shared->name;
  served->context = shared->model->options.max_seq_len();
  served->pretrained = true;
  served->chat = std::make_shared<PretrainedBackend>(shared);
  served->prompt_in_template = true;
  served->raw =
      std::make_shared<PretrainedBackend>(shared, PretrainedBackendOptions().with_raw(true));
  served->tools = std::make_shared<PretrainedBackend>(
      shared, PretrainedBackendOptions().with_tool_choice(adapter ? ToolChoice::Auto
                                                                  : ToolChoice::Required));
  served->unlimited_reply_tokens = served->context;
  served->embeddings = shared;
  return served;
}

/// The course model saved under models_dir/name: continuation for a prompt, module 13's template
/// for a chat, no tools, no embeddings.
std::shared_ptr<ServedModel> load_course_model(const std::string& name, const fs::path& dir) {
  auto backend = std::make_shared<ArtifactChatBackend>(name, dir);
  auto served = std::make_shared<ServedModel>();
  served->name = name;
  served->context = backend->context_length();
  served->chat = backend;
  served->raw = backend;
  served->unlimited_reply_tokens = served->context / 2;
  return served;
}

}  // namespace

std::shared_ptr<ServedModel> ModelRegistry::load_served(const std::string& canonical) const {
  std::shared_ptr<ServedModel> served;
  if (const auto adapter = adapters_.find(canonical); adapter != adapters_.end()) {
    served = load_pretrained(adapter->second.base, adapter->second.path);
  } else if (!g2c::pretrained::pretrained_model_name(canonical).empty()) {
    served = load_pretrained(canonical);
  } else {
    served = load_course_model(canonical, models_dir_ / canonical);
  }
  served->loaded_at = g2c::utc_timestamp(std::chrono::system_clock::now(), true);
  return served;
}

std::vector<std::vector<float>> embed_texts(g2c::pretrained::PretrainedModel& model,
                                            const std::vector<std::string>& texts, bool truncate,
                                            std::int64_t& tokens) {
  const auto context = model.model->options.max_seq_len();

  std::vector<std::vector<std::int64_t>> all_ids;
  for (const auto& text : texts) {
    auto ids = model.tokenizer.encode(text);
    if (ids.empty()) throw ValueError("/api/embed: an input is empty; give text to embed");
    if (static_cast<std::int64_t>(ids.size()) > context) {
      if (!truncate) {
        throw ValueError(
            fmt::format("/api/embed: an input is {} tokens, longer than {}'s context of {} (send "
                        "\"truncate\": true to embed its start)",
                        ids.size(), model.name, context));
      }
      ids.resize(static_cast<std::size_t>(context));
    }
    tokens += static_cast<std::int64_t>(ids.size());
    all_ids.push_back(std::move(ids));
  }
  const auto pooled = g2c::pretrained::mean_pooled_embeddings(model, all_ids).contiguous();
  std::vector<std::vector<float>> vectors;
  for (std::int64_t i = 0; i < pooled.size(0); ++i) {
    const auto* row = pooled[i].data_ptr<float>();
    vectors.emplace_back(row, row + pooled.size(1));
  }
  return vectors;
}

ModelRegistry::ModelRegistry(fs::path models_dir) : models_dir_(std::move(models_dir)) {}

void ModelRegistry::add_adapter(const fs::path& path) {
  const auto adapter = g2c::pretrained::read_llama_adapter(path);
  const auto present = names();
  if (std::find(present.begin(), present.end(), adapter.base) == present.end()) {
    throw ValueError(fmt::format("{}: adapter '{}' adapts {}, which this server does not have{}",
                                 path.string(), adapter.name, adapter.base,
                                 g2c::pretrained::pretrained_model_name(adapter.base).empty()
                                     ? ""
                                     : " (scripts/setup.sh fetches it)"));
  }
  if (!resolve(adapter.name).empty()) {
    throw ValueError(
        fmt::format("{}: this server already serves a model called '{}'; rename the "
                    "adapter when you train it",
                    path.string(), adapter.name));
  }
  std::lock_guard lock(mutex_);
  adapters_[adapter.name] = {adapter.base, path};
}

const ServedAdapter* ModelRegistry::adapter(const std::string& canonical) const {
  const auto found = adapters_.find(canonical);
  return found == adapters_.end() ? nullptr : &found->second;
}

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
  for (const auto& [name, adapter] : adapters_) names.push_back(name);
  std::sort(course.begin(), course.end());
  names.insert(names.end(), course.begin(), course.end());
  return names;
}

namespace {

/// Whether a request's `asked` names the served model `known`: without case, without an Ollama
/// tag (":latest"), or by a tier's alias ("ShakespeareLM" for "ShakespeareLM-1M").
bool names_model(const std::string& asked, const std::string& known) {
  auto wanted = asked;
  if (const auto colon = wanted.rfind(':'); colon != std::string::npos) wanted.resize(colon);
  const auto served = ascii_lowercase(known);
  return served == ascii_lowercase(wanted) ||
         served == ascii_lowercase(g2c::pretraining::canonical_model_name(wanted));
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
    const auto start = std::chrono::steady_clock::now();
    slot->model = load_served(slot->name);
    slot->model->load_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (load_ms) *load_ms = slot->model->load_ms;
    slot->ready = true;
  });
  return slot->model;
}

std::vector<std::shared_ptr<ServedModel>> ModelRegistry::loaded() {
  std::vector<std::shared_ptr<ServedModel>> models;
  std::lock_guard lock(mutex_);
  for (const auto& [name, slot] : slots_) {
    if (slot->ready) models.push_back(slot->model);
  }
  return models;
}

}  // namespace g2c::inference
