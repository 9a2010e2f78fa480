// LoRA on a Llama model's raw projections: the adapters, and the adapted weights put into the
// model for one call at a time.
#include "g2c/pretrained/lora.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "g2c/core/archive.h"
#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"

namespace g2c::pretrained {

namespace {

/// The member of `block` a target names; nullptr for an unknown name.
torch::Tensor* projection(LlamaBlockImpl& block, const std::string& target) {
  if (target == "q") return &block.attention->Wq;
  if (target == "k") return &block.attention->Wk;
  if (target == "v") return &block.attention->Wv;
  if (target == "o") return &block.attention->Wo;
  if (target == "gate") return &block.ffn->W_gate;
  if (target == "up") return &block.ffn->W_up;
  if (target == "down") return &block.ffn->W_down;
  return nullptr;
}

/// The packed weight of `block` a target names (the block must hold packed weights).
PackedWeight* packed_projection(LlamaBlockImpl& block, const std::string& target) {
  auto& attention = *block.attention->packed;
  auto& ffn = *block.ffn->packed;
  if (target == "q") return &attention.q;
  if (target == "k") return &attention.k;
  if (target == "v") return &attention.v;
  if (target == "o") return &attention.o;
  if (target == "gate") return &ffn.gate;
  if (target == "up") return &ffn.up;
  if (target == "down") return &ffn.down;
  return nullptr;
}

/// Saved whole, once, at the end of a run: no .bak.
const g2c::ArchiveKind kLlamaAdapterFile{
    .what = "LoRA adapter",
    .format = "g2c.llama_lora_adapter",
    .version = 1,
    .remedy = "train one again (18b_tool_tuning) or pass another file",
    .keeps_backup = false};

nlohmann::json sizes_json(const LlamaOptions& options) {
  return {{"vocab_size", options.vocab_size()},     {"embedding_dim", options.embedding_dim()},
          {"num_layers", options.num_layers()},     {"num_heads", options.num_heads()},
          {"num_kv_heads", options.num_kv_heads()}, {"hidden_dim", options.hidden_dim()}};
}

/// ValueError unless `model`'s sizes are the ones the adapter was trained on.
void check_base_sizes(const LlamaAdapter& adapter, const LlamaOptions& model,
                      std::string_view what) {
  const auto saved = sizes_json(adapter.base_sizes), own = sizes_json(model);
  if (saved != own) {
    throw ValueError(fmt::format(
        "{}: adapter '{}' was trained on a base of sizes {} ({}), this model's are {}; load the "
        "adapter on its base",
        what, adapter.name, saved.dump(), adapter.base, own.dump()));
  }
}

/// The adapter's tensor names in the order a LlamaLoRA of these settings registers them.
std::vector<std::string> expected_names(const LlamaLoRAOptions& options, std::int64_t layers) {
  std::vector<std::string> names;
  for (std::int64_t l = 0; l < layers; ++l) {
    for (const auto& target : options.targets()) {
      names.push_back(fmt::format("blocks.{}.{}_lora_A", l, target));
      names.push_back(fmt::format("blocks.{}.{}_lora_B", l, target));
    }
  }
  return names;
}

/// (in, out) of a target's weight x @ W in a model of these sizes; nullopt for an unknown target.
std::optional<std::pair<std::int64_t, std::int64_t>> target_shape(const LlamaOptions& sizes,
                                                                  const std::string& target) {
  const auto D = sizes.embedding_dim(), F = sizes.hidden_dim();
  const auto kv = sizes.num_kv_heads() * (D / sizes.num_heads());
  if (target == "q" || target == "o") return std::pair{D, D};
  if (target == "k" || target == "v") return std::pair{D, kv};
  if (target == "gate" || target == "up") return std::pair{D, F};
  if (target == "down") return std::pair{F, D};
  return std::nullopt;
}

}  // namespace

LlamaLoRAImpl::LlamaLoRAImpl(LlamaModel model_, const LlamaLoRAOptions& options_)
    : model(std::move(model_)), options(options_) {
  if (!model) throw ValueError("LlamaLoRA: an empty model handle");
  if (options.rank() < 1) {
    throw ValueError(fmt::format("LlamaLoRA: rank must be >= 1; got {}", options.rank()));
  }
  if (model->packed() || model->block_list.front()->attention->packed) {
    throw ValueError(
        "LlamaLoRA: the model holds packed weights; LoRA adds to the float32 projections, so load "
        "it with LoadOptions().packed(false)");
  }
  const std::set<std::string> unique(options.targets().begin(), options.targets().end());
  if (options.targets().empty() || unique.size() != options.targets().size()) {
    throw ValueError(
        fmt::format("LlamaLoRA: targets must name each projection once, at least one; got [{}]",
                    fmt::join(options.targets(), ", ")));
  }
  scaling = options.scaling();
  for (auto& parameter : model->parameters()) parameter.set_requires_grad(false);
  // Names as the model nests them: "blocks.3.q_lora_A" (a parameter name holds no dot).
  const auto blocks = register_module("blocks", std::make_shared<torch::nn::Module>());
  for (std::size_t l = 0; l < model->block_list.size(); ++l) {
    const auto block =
        blocks->register_module(std::to_string(l), std::make_shared<torch::nn::Module>());
    for (const auto& target : options.targets()) {
      auto* member = projection(*model->block_list[l], target);
      if (member == nullptr) {
        throw ValueError(fmt::format(
            "LlamaLoRA: unknown target '{}'; use q, k, v, o (attention) or gate, up, down "
            "(feed-forward)",
            target));
      }
      const auto in = member->size(0), out = member->size(1);
      Adapter adapter{member, *member, {}, {}};
      adapter.A = block->register_parameter(target + "_lora_A", torch::zeros({in, options.rank()}));
      adapter.B =
          block->register_parameter(target + "_lora_B", torch::zeros({options.rank(), out}));
      adapters_.push_back(std::move(adapter));
    }
  }
  reset_parameters();
  to(model->device());
}

void LlamaLoRAImpl::reset_parameters() {
  torch::NoGradGuard no_grad;
  for (auto& adapter : adapters_) {
    const double bound = 1.0 / std::sqrt(static_cast<double>(adapter.A.size(0)));
    adapter.A.uniform_(-bound, bound);
    adapter.B.zero_();
  }
}

torch::Tensor LlamaLoRAImpl::forward(const torch::Tensor& ids) {
  return with_adapters([&] { return model->forward(ids); });  // (B, T, V)
}

torch::Tensor LlamaLoRAImpl::forward(const torch::Tensor& ids, g2c::transformer::KVCache& cache) {
  return with_adapters([&] { return model->forward(ids, cache); });  // (B, T_new, V)
}

std::int64_t LlamaLoRAImpl::adapter_parameters() const {
  std::int64_t count = 0;
  for (const auto& parameter : parameters()) count += parameter.numel();
  return count;
}

std::int64_t LlamaLoRAImpl::base_parameters() const {
  std::int64_t count = 0;
  for (const auto& parameter : model->parameters()) count += parameter.numel();
  return count;
}

LlamaAdapter adapter_of(const LlamaLoRAImpl& lora, const std::string& name, const std::string& base,
                        const nlohmann::json& lineage) {
  if (name.empty() || base.empty()) {
    throw ValueError("adapter_of: an adapter needs a name and its base model's name");
  }
  LlamaAdapter adapter;
  adapter.name = name;
  adapter.base = base;
  adapter.options = lora.options;
  adapter.base_sizes = lora.model->options;
  adapter.lineage = lineage;
  for (const auto& item : lora.named_parameters()) {
    adapter.tensors.insert(item.key(), item.value().detach().to(torch::kCPU).clone());
  }
  return adapter;
}

void save_llama_adapter(const std::filesystem::path& path, const LlamaAdapter& adapter) {
  std::vector<std::string> names;
  std::vector<torch::Tensor> tensors;
  for (const auto& item : adapter.tensors) {
    names.push_back(item.key());
    tensors.push_back(item.value());
  }
  auto dict = g2c::archive_dict();
  dict.insert("name", adapter.name);
  dict.insert("base", adapter.base);
  dict.insert("lora", g2c::to_archive_value({{"rank", adapter.options.rank()},
                                             {"alpha", adapter.scaling() * adapter.options.rank()},
                                             {"targets", adapter.options.targets()}}));
  dict.insert("base_sizes", g2c::to_archive_value(sizes_json(adapter.base_sizes)));
  dict.insert("lineage", g2c::to_archive_value(adapter.lineage));
  dict.insert("names", g2c::to_archive_value(names));
  dict.insert("tensors", g2c::archive_tensors(tensors));
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  g2c::write_archive(path, dict, kLlamaAdapterFile);
}

LlamaAdapter read_llama_adapter(const std::filesystem::path& path) {
  const auto file = g2c::read_archive(path, kLlamaAdapterFile);
  const std::string where = file.path().string();
  const auto damaged = [&](const std::string& why) {
    return ValueError(
        fmt::format("{}: {}; the adapter file is damaged, train it again or pass "
                    "another file",
                    where, why));
  };
  LlamaAdapter adapter;
  adapter.name = file.string("name");
  adapter.base = file.string("base");
  adapter.lineage = file.json("lineage");
  try {
    const auto lora = file.json("lora");
    adapter.options = LlamaLoRAOptions(lora.at("rank").get<std::int64_t>())
                          .alpha(lora.at("alpha").get<double>())
                          .targets(lora.at("targets").get<std::vector<std::string>>());
    const auto sizes = file.json("base_sizes");
    adapter.base_sizes.vocab_size(sizes.at("vocab_size").get<std::int64_t>())
        .embedding_dim(sizes.at("embedding_dim").get<std::int64_t>())
        .num_layers(sizes.at("num_layers").get<std::int64_t>())
        .num_heads(sizes.at("num_heads").get<std::int64_t>())
        .num_kv_heads(sizes.at("num_kv_heads").get<std::int64_t>())
        .hidden_dim(sizes.at("hidden_dim").get<std::int64_t>());
  } catch (const nlohmann::json::exception& error) {
    throw damaged(fmt::format("its settings cannot be read ({})", error.what()));
  }
  const auto& sizes = adapter.base_sizes;
  if (adapter.name.empty() || adapter.base.empty()) throw damaged("it has no name or no base");
  if (adapter.options.rank() < 1 || sizes.num_layers() < 1 || sizes.num_heads() < 1 ||
      sizes.num_kv_heads() < 1 || sizes.embedding_dim() % sizes.num_heads() != 0) {
    throw damaged("its rank or base sizes are impossible");
  }
  for (const auto& target : adapter.options.targets()) {
    if (!target_shape(sizes, target)) throw damaged(fmt::format("unknown target '{}'", target));
  }
  const auto names = file.json("names");
  const auto tensors = file.tensors("tensors");
  const auto expected = expected_names(adapter.options, sizes.num_layers());
  if (names != nlohmann::json(expected) || tensors.size() != expected.size()) {
    throw damaged(fmt::format(
        "its tensors ({} names, {} tensors) are not the {} of rank {} on [{}] over {} layers",
        names.is_array() ? names.size() : 0, tensors.size(), expected.size(),
        adapter.options.rank(), fmt::join(adapter.options.targets(), ", "), sizes.num_layers()));
  }
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const auto& target = adapter.options.targets()[(i / 2) % adapter.options.targets().size()];
    const auto [in, out] = *target_shape(sizes, target);
    const std::vector<std::int64_t> shape =
        i % 2 == 0 ? std::vector<std::int64_t>{in, adapter.options.rank()}
                   : std::vector<std::int64_t>{adapter.options.rank(), out};
    const auto& tensor = tensors[i];
    if (tensor.sizes().vec() != shape || tensor.scalar_type() != torch::kFloat) {
      throw damaged(fmt::format("{} is {} {}, expected ({}) float32", expected[i],
                                describe_shape(tensor), c10::toString(tensor.scalar_type()),
                                fmt::join(shape, ", ")));
    }
    if (!torch::isfinite(tensor).all().item<bool>()) {
      throw damaged(fmt::format("{} holds values that are not finite", expected[i]));
    }
    adapter.tensors.insert(expected[i], tensor.contiguous());
  }
  return adapter;
}

void load_llama_adapter(LlamaLoRAImpl& lora, const LlamaAdapter& adapter) {
  check_base_sizes(adapter, lora.model->options, "load_llama_adapter");
  const auto& own = lora.options;
  if (own.rank() != adapter.options.rank() || own.targets() != adapter.options.targets() ||
      lora.scaling != adapter.scaling()) {
    throw ValueError(fmt::format(
        "load_llama_adapter: adapter '{}' is rank {} on [{}] with scaling {}, this LlamaLoRA rank "
        "{} on [{}] with scaling {}; build the LlamaLoRA with the adapter's options",
        adapter.name, adapter.options.rank(), fmt::join(adapter.options.targets(), ", "),
        adapter.scaling(), own.rank(), fmt::join(own.targets(), ", "), lora.scaling));
  }
  torch::NoGradGuard no_grad;
  for (auto& item : lora.named_parameters()) item.value().copy_(adapter.tensors[item.key()]);
}

void merge_llama_adapter(LlamaModelImpl& model, const LlamaAdapter& adapter) {
  check_base_sizes(adapter, model.options, "merge_llama_adapter");
  torch::NoGradGuard no_grad;
  const double scaling = adapter.scaling();
  for (std::size_t l = 0; l < model.block_list.size(); ++l) {
    auto& block = *model.block_list[l];
    for (const auto& target : adapter.options.targets()) {
      const auto& A = adapter.tensors[fmt::format("blocks.{}.{}_lora_A", l, target)];
      const auto& B = adapter.tensors[fmt::format("blocks.{}.{}_lora_B", l, target)];
      if (block.attention->packed) {
        auto* weight = packed_projection(block, target);
        *weight = weight->with_low_rank(A, scaling * B);  // x @ W + (x @ A)(s·B)
      } else {
        auto* weight = projection(block, target);
        const auto delta = (scaling * A.matmul(B)).to(weight->device(), weight->scalar_type());
        *weight = *weight + delta;  // (in, out), a new tensor
      }
    }
  }
}

LlamaAdapter apply_llama_adapter(PretrainedModel& pretrained, const std::filesystem::path& path) {
  auto adapter = read_llama_adapter(path);
  if (adapter.base != pretrained.name) {
    throw ValueError(fmt::format("{}: adapter '{}' was trained on {}, not on {}; load {} to use it",
                                 path.string(), adapter.name, adapter.base, pretrained.name,
                                 adapter.base));
  }
  merge_llama_adapter(*pretrained.model, adapter);
  pretrained.name = adapter.name;
  return adapter;
}

}  // namespace g2c::pretrained
