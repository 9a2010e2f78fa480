#include "g2c/lora/adapter.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "g2c/core/archive.h"
#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"
#include "g2c/lora/layer.h"

namespace g2c::lora {

namespace {

/// One file written whole (atomically), with no .bak: an adapter is saved once, at the end of a
/// run.
const g2c::ArchiveKind kAdapterFile{.what = "LoRA adapter",
                                    .format = "g2c.lora_adapter",
                                    .version = 1,
                                    .remedy = "write one with save_lora_adapter",
                                    .keeps_backup = false};

bool is_adapter_name(const std::string& name) {
  for (const std::string suffix : {"lora_A", "lora_B"}) {
    if (name == suffix) return true;
    if (name.size() > suffix.size() &&
        name.compare(name.size() - suffix.size() - 1, std::string::npos, "." + suffix) == 0) {
      return true;
    }
  }
  return false;
}

/// The model's adapter parameters themselves (not copies), by name.
LoRAState own_adapters(const torch::nn::Module& model) {
  LoRAState own;
  for (const auto& item : model.named_parameters(/*recurse=*/true)) {
    if (is_adapter_name(item.key())) own.insert(item.key(), item.value());
  }
  return own;
}

/// Every LoRA layer by its dotted name ("" for a model that is one).
std::map<std::string, const LoRALinearImpl*> named_lora_layers(const torch::nn::Module& model) {
  std::map<std::string, const LoRALinearImpl*> layers;
  if (const auto* root = dynamic_cast<const LoRALinearImpl*>(&model)) layers[""] = root;
  // include_self = false: the root need not live in a shared_ptr.
  for (const auto& item : model.named_modules(/*name_prefix=*/"", /*include_self=*/false)) {
    if (const auto* lora = dynamic_cast<const LoRALinearImpl*>(item.value().get())) {
      layers[item.key()] = lora;
    }
  }
  return layers;
}

/// At most `limit` names, then how many more: "a, b, c, d and 4 more".
std::string some(const std::vector<std::string>& names, std::size_t limit = 4) {
  if (names.empty()) return "none";
  const std::vector<std::string> shown(names.begin(),
                                       names.begin() + std::min(limit, names.size()));
  std::string text = fmt::format("{}", fmt::join(shown, ", "));
  if (names.size() > limit) text += fmt::format(" and {} more", names.size() - limit);
  return text;
}

std::vector<std::string> difference(const std::set<std::string>& a,
                                    const std::set<std::string>& b) {
  std::vector<std::string> out;
  for (const auto& name : a) {
    if (b.count(name) == 0) out.push_back(name);
  }
  return out;
}

}  // namespace

LoRAState lora_state_dict(const torch::nn::Module& model) {
  LoRAState state;
  for (const auto& item : own_adapters(model)) {
    state.insert(item.key(),
                 item.value().detach().to(torch::kCPU, /*non_blocking=*/false, /*copy=*/true));
  }
  return state;
}

void load_lora_state_dict(torch::nn::Module& model, const LoRAState& state) {
  const LoRAState own = own_adapters(model);
  std::set<std::string> own_names, state_names;
  for (const auto& item : own) own_names.insert(item.key());
  for (const auto& item : state) state_names.insert(item.key());
  const auto missing = difference(own_names, state_names);
  const auto unexpected = difference(state_names, own_names);
  if (!missing.empty() || !unexpected.empty()) {
    throw ValueError(fmt::format(
        "adapter/model mismatch: was the model injected with the same targets as the adapter? "
        "missing from the adapter: {}; in the adapter but not in the model: {}",
        some(missing), some(unexpected)));
  }
  // Everything is checked before anything is copied: a rejected adapter leaves the model as it was.
  for (const auto& item : own) {
    const auto& source = state[item.key()];
    if (!source.defined() || !source.is_floating_point()) {
      throw ValueError(fmt::format(
          "adapter tensor {} must be a floating-point tensor, got {}", item.key(),
          source.defined() ? c10::toString(source.scalar_type()) : "an undefined tensor"));
    }
    if (source.sizes() != item.value().sizes()) {
      throw ValueError(fmt::format(
          "adapter tensor {} has shape {}, but this model's has shape {}: was it injected with "
          "another rank, or is its base another width?",
          item.key(), describe_shape(source), describe_shape(item.value())));
    }
  }
  torch::NoGradGuard no_grad;
  for (const auto& item : own) {
    item.value().copy_(state[item.key()].to(item.value().device(), item.value().scalar_type()));
  }
}

void save_lora_adapter(const std::filesystem::path& path, const torch::nn::Module& model,
                       const nlohmann::json& info) {
  const auto layers = named_lora_layers(model);
  if (layers.empty()) {
    throw ValueError(fmt::format(
        "save_lora_adapter({}): the model has no LoRA layer; inject_lora first", path.string()));
  }
  auto layer_list = nlohmann::json::array();
  for (const auto& [name, layer] : layers) {
    layer_list.push_back({{"name", name},
                          {"in_features", layer->options.in_features()},
                          {"out_features", layer->options.out_features()},
                          {"rank", layer->rank},
                          {"alpha", layer->alpha}});
  }
  const LoRAState state = lora_state_dict(model);
  auto names = nlohmann::json::array();
  std::vector<torch::Tensor> tensors;
  for (const auto& item : state) {
    names.push_back(item.key());
    tensors.push_back(item.value());
  }
  auto dict = g2c::archive_dict();
  dict.insert("layers", g2c::to_archive_value(layer_list));
  dict.insert("names", g2c::to_archive_value(names));
  dict.insert("tensors", g2c::archive_tensors(tensors));
  dict.insert("info", g2c::to_archive_value(info));
  g2c::write_archive(path, dict, kAdapterFile);
}

LoadedAdapter load_lora_adapter(const std::filesystem::path& path, torch::nn::Module& model) {
  const auto file = g2c::read_archive(path, kAdapterFile);
  const std::string where = file.path().string();
  const auto names = file.json("names");
  const auto tensors = file.tensors("tensors");
  if (!names.is_array() || names.size() != tensors.size()) {
    throw ValueError(
        fmt::format("{}: 'names' must list one name per tensor ({} tensors); the file "
                    "is damaged, save the adapter again",
                    where, tensors.size()));
  }

  // The layers first: a wrong alpha changes no shape, and the names alone say less than this.
  struct SavedLayer {
    std::string name;
    std::int64_t in, out, rank;
    double alpha;
  };
  std::vector<SavedLayer> saved_layers;
  try {
    for (const auto& saved : file.json("layers")) {
      saved_layers.push_back(
          {saved.at("name").get<std::string>(), saved.at("in_features").get<std::int64_t>(),
           saved.at("out_features").get<std::int64_t>(), saved.at("rank").get<std::int64_t>(),
           saved.at("alpha").get<double>()});
    }
  } catch (const nlohmann::json::exception& error) {
    throw ValueError(fmt::format("{}: its 'layers' list is damaged ({}); save the adapter again",
                                 where, error.what()));
  }
  const auto own_layers = named_lora_layers(model);
  std::set<std::string> own_names, saved_names;
  for (const auto& [name, layer] : own_layers) own_names.insert(name);
  for (const auto& saved : saved_layers) saved_names.insert(saved.name);
  if (own_names != saved_names) {
    throw ValueError(fmt::format(
        "{} does not fit this model: its LoRA layers are {}, the model's are {}; inject the model "
        "with the targets the adapter was trained with",
        where, some({saved_names.begin(), saved_names.end()}),
        some({own_names.begin(), own_names.end()})));
  }
  for (const auto& saved : saved_layers) {
    const auto& layer = *own_layers.at(saved.name);
    if (saved.in != layer.options.in_features() || saved.out != layer.options.out_features() ||
        saved.rank != layer.rank) {
      throw ValueError(fmt::format(
          "{} does not fit this model: its layer {} is {} -> {} at rank {}, the model's is {} -> "
          "{} at rank {}; inject with the adapter's rank, on a base of the same sizes",
          where, saved.name, saved.in, saved.out, saved.rank, layer.options.in_features(),
          layer.options.out_features(), layer.rank));
    }
    if (saved.alpha != layer.alpha) {
      throw ValueError(fmt::format(
          "{} does not fit this model: its layer {} was trained with alpha={} (scaling {}), the "
          "model's has alpha={} (scaling {}); inject with alpha={}",
          where, saved.name, saved.alpha, saved.alpha / static_cast<double>(saved.rank),
          layer.alpha, layer.scaling, saved.alpha));
    }
  }
  std::vector<std::string> tensor_names;
  for (const auto& name : names) {
    if (!name.is_string()) {
      throw ValueError(fmt::format("{}: 'names' must hold strings, got {}; save the adapter again",
                                   where, name.dump()));
    }
    tensor_names.push_back(name.get<std::string>());
  }

  LoRAState state;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    if (state.contains(tensor_names[i])) {
      throw ValueError(fmt::format("{}: the tensor name {} appears twice; save the adapter again",
                                   where, tensor_names[i]));
    }
    state.insert(tensor_names[i], tensors[i]);
  }
  load_lora_state_dict(model, state);
  return {file.contains("info") ? file.json("info") : nlohmann::json::object()};
}

LoRAModel::LoRAModel(std::shared_ptr<g2c::nn::Module> model) : model_(std::move(model)) {
  if (!model_) {
    throw ValueError("LoRAModel needs a model, got a null pointer");
  }
}

std::vector<torch::Tensor> LoRAModel::trainable_parameters() const {
  std::vector<torch::Tensor> trainable;
  for (const auto& p : model_->parameters()) {
    if (p.requires_grad()) trainable.push_back(p);
  }
  return trainable;
}

torch::OrderedDict<std::string, torch::Tensor> LoRAModel::named_trainable_parameters() const {
  torch::OrderedDict<std::string, torch::Tensor> trainable;
  for (const auto& item : model_->named_parameters()) {
    if (item.value().requires_grad()) trainable.insert(item.key(), item.value());
  }
  return trainable;
}

LoRAModel& LoRAModel::to(torch::Device device) {
  model_->to(device);
  return *this;
}

LoRAModel& LoRAModel::train(bool on) {
  model_->train(on);
  return *this;
}

}  // namespace g2c::lora
