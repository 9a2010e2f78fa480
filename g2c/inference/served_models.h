// Module 16, implemented for you — the models g2c-serve offers, as the course's own backends: the
// pretrained model as PretrainedBackend (its template, its tools, its raw continuation) and each
// saved course model as ArtifactChatBackend. The server calls them through the Backend and
// ChatBackend interfaces every other program uses; this file only says which backend answers what.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "g2c/inference/backend.h"
#include "g2c/pretrained/generation.h"
#include "g2c/pretraining/model_artifact.h"

namespace g2c::inference {

/// One served model: which backend answers each kind of request.
struct ServedModel {
  std::string name;          // canonical: "SmolLM2-135M-Instruct", "ShakespeareLM-1M-SFT"
  std::int64_t context = 0;  // tokens a prompt and its reply may take together
  bool pretrained = false;
  /// A conversation (/api/chat, /v1/chat/completions), and /api/generate's prompt when
  /// prompt_in_template: the model's chat template, free text.
  std::shared_ptr<ChatBackend> chat;
  bool prompt_in_template = false;
  /// /api/generate's prompt continued as text ("raw", or a model whose template is for chats).
  std::shared_ptr<Backend> raw;
  /// A turn with tools (nullptr: the model takes none): a call decoded under the tools' schemas.
  std::shared_ptr<ChatBackend> tools;
  /// Reply tokens when a request sets no limit (Ollama's num_predict -1): the whole context for
  /// the pretrained model (it ends its turn itself), half of it for a course model's chat.
  std::int64_t unlimited_reply_tokens = 0;
  /// /api/embed (nullptr: no embeddings).
  std::shared_ptr<g2c::pretrained::PretrainedModel> embeddings;
  double load_ms = 0;     // how long loading took
  std::string loaded_at;  // RFC 3339
};

/// One L2-normalised vector per text (the mean of the pretrained model's final hidden states over
/// its tokens), and in `tokens` the number of tokens read. ValueError for an empty text, or one
/// longer than the context when `truncate` is false.
std::vector<std::vector<float>> embed_texts(g2c::pretrained::PretrainedModel& model,
                                            const std::vector<std::string>& texts, bool truncate,
                                            std::int64_t& tokens);

/// A LoRA adapter served beside its base (ModelRegistry::add_adapter).
struct ServedAdapter {
  std::string base;  // the pretrained model it adapts
  std::filesystem::path path;
};

/// The models a server offers, loaded on first use (once, even when several requests ask at
/// once) and kept.
class ModelRegistry {
 public:
  explicit ModelRegistry(std::filesystem::path models_dir = g2c::pretraining::models_root());
  /// Serves the pretrained base plus the LoRA adapter file at `path` under the adapter's own name
  /// (as Ollama serves a Modelfile's FROM and ADAPTER): checked now, loaded on first use, its
  /// calls written by the model itself (ToolChoice::Auto: it was trained to call). ValueError for
  /// a file read_llama_adapter refuses, a base this server does not have, or a name it already
  /// serves. Called before the server answers its first request (g2c-serve's --adapter).
  void add_adapter(const std::filesystem::path& path);
  /// The adapter served as `canonical`, or nullptr when that name is not an adapter's.
  const ServedAdapter* adapter(const std::string& canonical) const;
  /// The served names: the pretrained models present, the adapters added, then the saved course
  /// artifacts.
  std::vector<std::string> names() const;
  /// The model called `name` (without case, without an ":tag"; a tier's alias such as
  /// "ShakespeareLM" means its model), or nullptr when there is none. `load_ms` is how long
  /// loading took now (0 when it was loaded before). ValueError when its files are there but
  /// cannot be loaded.
  std::shared_ptr<ServedModel> get(const std::string& name, double* load_ms = nullptr);
  /// The canonical spelling of `name`, or "" when the server has no such model.
  std::string resolve(const std::string& name) const;
  /// The models loaded so far (Ollama's /api/ps).
  std::vector<std::shared_ptr<ServedModel>> loaded();
  const std::filesystem::path& models_dir() const { return models_dir_; }

 private:
  /// One served model: loaded once, by the first request that asks for it.
  struct Slot {
    explicit Slot(std::string name_) : name(std::move(name_)) {}
    std::string name;  // canonical
    std::once_flag once;
    std::shared_ptr<ServedModel> model;
    std::atomic<bool> ready{false};  // model is set (for loaded(), which does not wait)
  };
  /// The served model `canonical`, loaded now.
  std::shared_ptr<ServedModel> load_served(const std::string& canonical) const;

  std::filesystem::path models_dir_;
  std::map<std::string, ServedAdapter> adapters_;  // by the adapter's name
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<Slot>> slots_;  // by Slot::name
};

}  // namespace g2c::inference
