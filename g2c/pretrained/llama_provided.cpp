#include <chrono>
#include <memory>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"
#include "g2c/embeddings/rotary.h"
#include "g2c/pretrained/internal.h"
#include "g2c/pretrained/llama.h"

namespace g2c::pretrained {

namespace {

// A size the file must state, as a positive integer.
std::int64_t positive(const GGUFFile& file, const std::string& key) {
  const auto value = file.integer(key);
  if (value <= 0) {
    throw ValueError(fmt::format("'{}': {} is {}; a llama model needs a positive value",
                                 file.path().string(), key, value));
  }
  return value;
}

GroupedQueryAttentionOptions attention_options(const LlamaOptions& options) {
  return GroupedQueryAttentionOptions(options.embedding_dim(), options.num_heads(),
                                      options.num_kv_heads())
      .max_seq_len(options.max_seq_len())
      .rope_base(options.rope_base());
}

}  // namespace

LlamaOptions LlamaOptions::from_gguf(const GGUFFile& file) {
  const auto& architecture = file.string("general.architecture");
  if (architecture != "llama") {
    throw ValueError(fmt::format(
        "'{}': general.architecture is '{}'; the course's model reads 'llama' files (SmolLM2, "
        "Llama, TinyLlama)",
        file.path().string(), architecture));
  }
  LlamaOptions options;
  options.embedding_dim(positive(file, "llama.embedding_length"))
      .num_layers(positive(file, "llama.block_count"))
      .num_heads(positive(file, "llama.attention.head_count"))
      .num_kv_heads(file.has("llama.attention.head_count_kv")
                        ? positive(file, "llama.attention.head_count_kv")
                        : positive(file, "llama.attention.head_count"))
      .hidden_dim(positive(file, "llama.feed_forward_length"))
      .max_seq_len(positive(file, "llama.context_length"))
      .rms_eps(file.real("llama.attention.layer_norm_rms_epsilon"))
      .rope_base(file.has("llama.rope.freq_base") ? file.real("llama.rope.freq_base") : 10000.0);
  options.vocab_size(file.has("llama.vocab_size")
                         ? positive(file, "llama.vocab_size")
                         : static_cast<std::int64_t>(file.strings("tokenizer.ggml.tokens").size()));
  const auto d = options.embedding_dim(), h = options.num_heads(), g = options.num_kv_heads();
  if (d % h != 0 || h % g != 0 || (d / h) % 2 != 0) {
    throw ValueError(fmt::format(
        "'{}': embedding {} over {} heads and {} key/value heads does not divide into even "
        "heads; the course's attention needs D % H == 0, H % G == 0 and an even head_dim",
        file.path().string(), d, h, g));
  }
  if (file.has("llama.rope.dimension_count") &&
      file.integer("llama.rope.dimension_count") != d / h) {
    throw ValueError(fmt::format(
        "'{}': llama.rope.dimension_count is {}, head_dim is {}; the course rotates whole heads",
        file.path().string(), file.integer("llama.rope.dimension_count"), d / h));
  }
  return options;
}

std::int64_t LlamaOptions::num_parameters() const {
  const auto d = embedding_dim(), kv = num_kv_heads() * head_dim();
  const auto attention = d * d + 2 * d * kv + d * d;  // Wq, Wk, Wv, Wo
  const auto ffn = 3 * d * hidden_dim();              // W_gate, W_up, W_down
  return vocab_size() * d + num_layers() * (attention + ffn + 2 * d) + d;
}

LlamaBlockImpl::LlamaBlockImpl(const LlamaOptions& options) {
  const auto norm = RMSNormOptions(options.embedding_dim()).eps(options.rms_eps());
  attention_norm = register_module("attention_norm", RMSNorm(norm));
  attention = register_module("attention", GroupedQueryAttention(attention_options(options)));
  ffn_norm = register_module("ffn_norm", RMSNorm(norm));
  ffn = register_module("ffn", SwiGLU(options.embedding_dim(), options.hidden_dim()));
}

torch::Tensor LlamaBlockImpl::feed_forward(const torch::Tensor& x) {
  return ffn->packed ? ffn->forward_packed(x) : ffn(x);
}

torch::Tensor LlamaBlockImpl::forward(const torch::Tensor& x) {
  const auto h = x + attention->forward(attention_norm(x));  // (B, T, D), pre-norm residual
  return h + feed_forward(ffn_norm(h));
}

torch::Tensor LlamaBlockImpl::forward(const torch::Tensor& x, g2c::attention::LayerKVCache& cache) {
  const auto h = x + attention->forward(attention_norm(x), cache);
  return h + feed_forward(ffn_norm(h));
}

LlamaModelImpl::LlamaModelImpl(const LlamaOptions& options_) : options(options_) {
  if (options.vocab_size() <= 0 || options.num_layers() <= 0) {
    throw ValueError(
        fmt::format("LlamaModel needs vocab_size > 0 and num_layers > 0, got {} and {}",
                    options.vocab_size(), options.num_layers()));
  }
  token_embedding = register_parameter(
      "token_embedding",
      internal::normal_weight(options.vocab_size(), options.embedding_dim(), 0.02));
  blocks = register_module("blocks", torch::nn::ModuleList());
  // One pair of rotary tables for the whole model: 4 MB instead of 4 MB per block.
  auto [cos_table, sin_table] = g2c::embeddings::RotaryEmbeddingImpl::build_cos_sin(
      options.max_seq_len(), options.head_dim(), options.rope_base());
  for (std::int64_t l = 0; l < options.num_layers(); ++l) {
    block_list.emplace_back(options);
    blocks->push_back(block_list.back());
    block_list.back()->attention->share_rotary_tables(cos_table, sin_table);
  }
  final_norm = register_module(
      "final_norm", RMSNorm(RMSNormOptions(options.embedding_dim()).eps(options.rms_eps())));
}

void LlamaModelImpl::check_ids(const torch::Tensor& ids, std::int64_t start) const {
  if (!ids.defined() || ids.dim() != 2 || ids.scalar_type() != torch::kLong || ids.size(1) == 0) {
    throw ValueError(fmt::format(
        "LlamaModel expects ids of shape (B, T) int64 with T >= 1, got {}",
        ids.defined() ? describe_shape(ids) + " " + std::string(c10::toString(ids.scalar_type()))
                      : "an undefined tensor"));
  }
  const auto low = ids.min().item<std::int64_t>(), high = ids.max().item<std::int64_t>();
  if (low < 0 || high >= options.vocab_size()) {
    throw ValueError(fmt::format("LlamaModel: token ids must be in [0, {}), got ids from {} to {}",
                                 options.vocab_size(), low, high));
  }
  if (start + ids.size(1) > options.max_seq_len()) {
    throw ValueError(fmt::format(
        "LlamaModel: {} positions after the {} cached do not fit its context of {} (max_seq_len)",
        ids.size(1), start, options.max_seq_len()));
  }
}

torch::Tensor LlamaModelImpl::hidden_states(const torch::Tensor& ids,
                                            g2c::transformer::KVCache* cache,
                                            std::optional<std::int64_t> num_blocks) {
  const auto start = cache != nullptr ? cache->length() : 0;
  check_ids(ids, start);
  const auto blocks_run = num_blocks.value_or(options.num_layers());
  if (blocks_run < 1 || blocks_run > options.num_layers()) {
    throw ValueError(fmt::format("LlamaModel: num_blocks must be 1..{} (its blocks); got {}",
                                 options.num_layers(), blocks_run));
  }
  if (cache != nullptr && cache->size() != blocks_run) {
    throw ValueError(
        fmt::format("LlamaModel: the KV cache has {} layers for {} blocks; use "
                    "model->empty_kv_cache(), or KVCache::empty(num_blocks, capacity) for the "
                    "first num_blocks",
                    cache->size(), blocks_run));
  }
  const auto rows = packed() ? packed_embedding->rows(ids.reshape(-1))
                             : token_embedding.index_select(
                                   0, ids.reshape(-1).to(token_embedding.device()));  // (B·T, D)
  auto h = rows.view({ids.size(0), ids.size(1), options.embedding_dim()});            // (B, T, D)
  for (std::size_t l = 0; l < static_cast<std::size_t>(blocks_run); ++l) {
    h = cache != nullptr ? block_list[l]->forward(h, cache->layers[l]) : block_list[l]->forward(h);
  }
  return final_norm(h);  // (B, T, D)
}

torch::Tensor LlamaModelImpl::head(const torch::Tensor& h) const {
  if (packed()) return packed_embedding->matmul(h);
  // A few rows (speculative decoding's verification pass): E (V, D) @ hᵀ, then transposed back.
  // On one thread MKL computes h @ Eᵀ for 2 to 8 rows row by row, reading the 113 MB embedding
  // once a row (2 rows 22 ms, 3 rows 34 ms); as E @ hᵀ it reads it once (5.5 and 8.5 ms).
  const auto rows = h.reshape({-1, h.size(-1)});  // (N, D)
  if (rows.size(0) >= 2 && rows.size(0) <= 8) {
    auto out_shape = h.sizes().vec();
    out_shape.back() = token_embedding.size(0);
    return token_embedding.mm(rows.t()).t().reshape(out_shape);  // (…, V)
  }
  return h.matmul(token_embedding.t());
}

torch::Tensor LlamaModelImpl::forward(const torch::Tensor& ids) {
  return head(hidden_states(ids));  // (B, T, V)
}

torch::Tensor LlamaModelImpl::forward(const torch::Tensor& ids, g2c::transformer::KVCache& cache) {
  return head(hidden_states(ids, &cache));  // (B, T, V)
}

g2c::transformer::KVCache LlamaModelImpl::empty_kv_cache(std::int64_t capacity) const {
  return g2c::transformer::KVCache::empty(options.num_layers(),
                                          capacity > 0 ? capacity : options.max_seq_len());
}

void LlamaModelImpl::pretty_print(std::ostream& stream) const {
  stream << "g2c::pretrained::LlamaModel(vocab_size=" << options.vocab_size()
         << ", embedding_dim=" << options.embedding_dim() << ", num_layers=" << options.num_layers()
         << ", num_heads=" << options.num_heads() << ", num_kv_heads=" << options.num_kv_heads()
         << ", hidden_dim=" << options.hidden_dim() << ", max_seq_len=" << options.max_seq_len()
         << ")";
}

torch::Tensor unpermute_rotary_rows(const torch::Tensor& weight, std::int64_t heads) {
  const auto out = weight.size(0), in = weight.size(1);
  if (heads <= 0 || out % (2 * heads) != 0) {
    throw ValueError(
        fmt::format("unpermute_rotary_rows: {} rows do not split into {} heads of "
                    "even size",
                    out, heads));
  }
  const auto half = out / heads / 2;
  // File rows of one head, in order: (i, p) for i < d/2, p in {0, 1}; the original order is (p, i).
  return weight.reshape({heads, half, 2, in}).transpose(1, 2).reshape({out, in});
}

namespace {

// The tensor's values as a float32 (rows, cols…) tensor that owns them: dequantized once, never
// copied again.
torch::Tensor read_tensor(const GGUFFile& file, const TensorInfo& info) {
  auto values = std::make_unique<std::vector<float>>(dequantize(file, info));
  auto* raw = values.release();
  return torch::from_blob(
      raw->data(), info.shape(), [raw](void*) { delete raw; }, torch::kFloat);
}

// One expected tensor: its name in the file and its row-major shape.
struct Expected {
  std::string name;
  std::vector<std::int64_t> shape;
};

std::vector<Expected> expected_tensors(const LlamaOptions& o) {
  const auto d = o.embedding_dim(), f = o.hidden_dim(), q = o.num_heads() * o.head_dim(),
             kv = o.num_kv_heads() * o.head_dim();
  std::vector<Expected> all = {{"token_embd.weight", {o.vocab_size(), d}},
                               {"output_norm.weight", {d}}};
  for (std::int64_t l = 0; l < o.num_layers(); ++l) {
    const auto blk = fmt::format("blk.{}.", l);
    // (out, in) as the file stores matrices; the model holds their (in, out) transposes.
    all.push_back({blk + "attn_norm.weight", {d}});
    all.push_back({blk + "attn_q.weight", {q, d}});
    all.push_back({blk + "attn_k.weight", {kv, d}});
    all.push_back({blk + "attn_v.weight", {kv, d}});
    all.push_back({blk + "attn_output.weight", {d, q}});
    all.push_back({blk + "ffn_norm.weight", {d}});
    all.push_back({blk + "ffn_gate.weight", {f, d}});
    all.push_back({blk + "ffn_up.weight", {f, d}});
    all.push_back({blk + "ffn_down.weight", {d, f}});
  }
  return all;
}

bool dequantizable(TensorType type) {
  return type == TensorType::kF32 || type == TensorType::kF16 || type == TensorType::kQ8_0 ||
         type == TensorType::kQ4_0 || type == TensorType::kQ4_1;
}

}  // namespace

LlamaModel load_llama(const GGUFFile& file, LoadReport* report, const LoadOptions& load) {
  const auto started = std::chrono::steady_clock::now();
  const auto options = LlamaOptions::from_gguf(file);
  // Everything is checked before anything is read: a bad file leaves nothing half-loaded.
  for (const auto& expected : expected_tensors(options)) {
    if (!file.has_tensor(expected.name)) {
      throw ValueError(
          fmt::format("'{}': tensor '{}' is missing; a llama model of {} blocks "
                      "needs it",
                      file.path().string(), expected.name, options.num_layers()));
    }
    const auto& info = file.tensor(expected.name);
    if (info.shape() != expected.shape) {
      throw ValueError(
          fmt::format("'{}': tensor '{}' has shape [{}], expected [{}] from the "
                      "file's own sizes",
                      file.path().string(), expected.name, fmt::join(info.shape(), ", "),
                      fmt::join(expected.shape, ", ")));
    }
    if (!dequantizable(info.type)) {
      throw ValueError(
          fmt::format("'{}': tensor '{}' is {}; the course dequantizes F32, F16, "
                      "Q8_0, Q4_0 and Q4_1",
                      file.path().string(), expected.name,
                      tensor_type_name(static_cast<std::uint32_t>(info.type))));
    }
  }
  torch::NoGradGuard no_grad;
  LlamaModel model = [&] {
    internal::SkipInitialization uninitialised;  // every weight is replaced below
    return LlamaModel(options);
  }();
  const auto load_dense = [&](torch::Tensor& parameter, const std::string& name, auto&& transform) {
    parameter.set_data(transform(read_tensor(file, file.tensor(name))));
  };
  const auto as_is = [](torch::Tensor t) { return t; };
  // (out, in) -> (in, out), laid out row-major: a token's x @ W then reads W in order, about
  // twice as fast as through a transposed view.
  const auto transposed = [](torch::Tensor t) { return t.t().contiguous(); };
  const auto unpermuted = [](std::int64_t heads) {
    return [heads](torch::Tensor t) { return unpermute_rotary_rows(t, heads).t().contiguous(); };
  };
  // The file's row order un-permuted, for the packed Wq and Wk: row r is file row order[r].
  const auto unpermuted_order = [](std::int64_t rows, std::int64_t heads) {
    const auto order = unpermute_rotary_rows(torch::arange(rows).unsqueeze(1), heads).view(-1);
    return std::vector<std::int64_t>(order.data_ptr<std::int64_t>(),
                                     order.data_ptr<std::int64_t>() + rows);
  };
  const auto pack = [&](const std::string& name, std::vector<std::int64_t> order = {}) {
    return PackedWeight::from_gguf(file, file.tensor(name), order);
  };
  const auto empty = torch::empty({0});  // a packed model's dense matrices hold nothing
  const auto q_rows = options.num_heads() * options.head_dim();
  const auto kv_rows = options.num_kv_heads() * options.head_dim();
  if (load.packed()) {
    model->packed_embedding = pack("token_embd.weight");
    model->token_embedding.set_data(empty);
  } else {
    load_dense(model->token_embedding, "token_embd.weight", as_is);
  }
  load_dense(model->final_norm->weight, "output_norm.weight", as_is);
  for (std::int64_t l = 0; l < options.num_layers(); ++l) {
    const auto blk = fmt::format("blk.{}.", l);
    auto& block = model->block_list[static_cast<std::size_t>(l)];
    auto& attention = *block->attention;
    auto& ffn = *block->ffn;
    load_dense(block->attention_norm->weight, blk + "attn_norm.weight", as_is);
    load_dense(block->ffn_norm->weight, blk + "ffn_norm.weight", as_is);
    if (load.packed()) {
      attention.packed = GroupedQueryAttentionImpl::PackedProjections{
          pack(blk + "attn_q.weight", unpermuted_order(q_rows, options.num_heads())),
          pack(blk + "attn_k.weight", unpermuted_order(kv_rows, options.num_kv_heads())),
          pack(blk + "attn_v.weight"), pack(blk + "attn_output.weight")};
      ffn.packed =
          SwiGLUImpl::PackedProjections{pack(blk + "ffn_gate.weight"), pack(blk + "ffn_up.weight"),
                                        pack(blk + "ffn_down.weight")};
      for (auto* dense : {&attention.Wq, &attention.Wk, &attention.Wv, &attention.Wo, &ffn.W_gate,
                          &ffn.W_up, &ffn.W_down}) {
        dense->set_data(empty);
      }
      continue;
    }
    load_dense(attention.Wq, blk + "attn_q.weight", unpermuted(options.num_heads()));
    load_dense(attention.Wk, blk + "attn_k.weight", unpermuted(options.num_kv_heads()));
    load_dense(attention.Wv, blk + "attn_v.weight", transposed);
    load_dense(attention.Wo, blk + "attn_output.weight", transposed);
    load_dense(ffn.W_gate, blk + "ffn_gate.weight", transposed);
    load_dense(ffn.W_up, blk + "ffn_up.weight", transposed);
    load_dense(ffn.W_down, blk + "ffn_down.weight", transposed);
  }
  for (auto& parameter : model->parameters()) parameter.set_requires_grad(false);
  if (report != nullptr) {
    report->seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    report->tensors = static_cast<std::int64_t>(file.tensors().size());
    std::int64_t bytes = 0;
    for (const auto& parameter : model->parameters()) bytes += parameter.numel() * 4;
    if (model->packed()) {
      bytes += model->packed_embedding->bytes();
      for (const auto& block : model->block_list) {
        const auto& a = *block->attention->packed;
        const auto& f = *block->ffn->packed;
        bytes += a.q.bytes() + a.k.bytes() + a.v.bytes() + a.o.bytes() + f.gate.bytes() +
                 f.up.bytes() + f.down.bytes();
      }
    }
    report->weight_bytes = bytes;
    report->file_bytes = static_cast<std::int64_t>(std::filesystem::file_size(file.path()));
  }
  return model;
}

LlamaModel load_llama(const std::filesystem::path& path, LoadReport* report,
                      const LoadOptions& options) {
  return load_llama(GGUFFile::open(path), report, options);
}

}  // namespace g2c::pretrained
