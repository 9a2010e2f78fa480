// Exercise 17 — retrieval at the size of a real corpus: all of TinyShakespeare, chunked, indexed
// by each retriever. Measured:
//   build     seconds to index the corpus: the hash embedder (every chunk), BM25 (every chunk),
//             and the dense embedder (SmolLM2-135M-Instruct) in chunks per second — in this
//             process, and through g2c-serve over HTTP one text per request (/api/embeddings, the
//             Python edition's way) and eight per request (/api/embed)
//   query     milliseconds per query (median of --queries lines of the play used as queries):
//             embedding the query and searching, and searching alone
//   10k       the same query over 10,000+ small chunks (200 characters, 100 shared), the store
//             searched at the hash embedder's dim and at the dense embedder's (576)
// The server runs in a thread of this program on a free port of 127.0.0.1 and stops by itself
// after exactly the requests made. Writes retrieval_bench.json and a figure.
#include <algorithm>
#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/data.h"
#include "exercises/common/figures.h"
#include "g2c/core/errors.h"
#include "g2c/inference/benchmark.h"
#include "g2c/inference/server.h"
#include "g2c/rag/rag.h"

namespace exercise_17_retrieval_bench {

namespace {

using Clock = std::chrono::steady_clock;
using g2c::rag::Chunk;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::vector<Chunk> chunked(const std::string& text, std::int64_t size, std::int64_t overlap) {
  g2c::rag::ChunkOptions options;
  options.source = "tinyshakespeare.txt";
  options.chunk_size = size;
  options.chunk_overlap = overlap;
  return g2c::rag::chunk_text(text, options);
}

/// `count` lines of the play at even spacing, each at least 30 characters: the queries.
std::vector<std::string> query_lines(const std::string& text, std::size_t count) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    const auto end = std::min(text.find('\n', start), text.size());
    if (end - start >= 30) lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  std::vector<std::string> queries;
  for (std::size_t i = 0; i < count && !lines.empty(); ++i) {
    queries.push_back(lines[i * lines.size() / count]);
  }
  return queries;
}

/// Median milliseconds of retrieve() (embedding included) over the queries.
double median_retrieve_ms(g2c::rag::Retriever& retriever, const std::vector<std::string>& queries) {
  std::vector<double> ms;
  for (const auto& query : queries) {
    const auto start = Clock::now();
    retriever.retrieve(query, 5);
    ms.push_back(ms_since(start));
  }
  return g2c::inference::percentile(ms, 50);
}

/// Median milliseconds of store.search() alone, for the given unit query vectors.
double median_search_ms(const g2c::rag::VectorStore& store, const torch::Tensor& queries) {
  std::vector<double> ms;
  for (std::int64_t i = 0; i < queries.size(0); ++i) {
    const auto query = queries[i].contiguous();
    const auto start = Clock::now();
    store.search(query, 5);
    ms.push_back(ms_since(start));
  }
  return g2c::inference::percentile(ms, 50);
}

/// Chunks per second embedding `texts` with `embedder`.
double chunks_per_second(g2c::rag::Embedder& embedder, const std::vector<std::string>& texts) {
  const auto start = Clock::now();
  embedder.embed(texts);
  return static_cast<double>(texts.size()) / (ms_since(start) / 1e3);
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Module 17: index all of TinyShakespeare with the hash, BM25 and dense retrievers; build\n"
      "time, query latency, and dense embedding speed in this process and through g2c-serve.\n"
      "Writes retrieval_bench.json and a figure."};
  g2c::exercises::CommonOptions options;
  options.out = "results/17-rag";
  std::string model_name = "SmolLM2-135M-Instruct";
  std::int64_t dense_chunks = 32, queries_count = 100, hash_dim = 512, batch = 1;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--model", model_name, "The dense embedder's model");
  app.add_option("--dense-chunks", dense_chunks,
                 "Chunks embedded by the dense embedder per measurement (0: no dense measurement)")
      .non_negative();
  app.add_option("--batch", batch, "Texts per forward pass of the in-process dense embedder")
      .positive();
  app.add_option("--queries", queries_count, "Queries timed per retriever").positive();
  app.add_option("--hash-dim", hash_dim, "The hash embedder's buckets").positive();
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    if (!device.is_cpu())
      throw g2c::ValueError("17_retrieval_bench measures the CPU; use --device cpu");
    const auto corpus = g2c::exercises::load_tinyshakespeare();
    const auto queries = query_lines(corpus, static_cast<std::size_t>(queries_count));
    auto result = g2c::exercises::run_metadata("17_retrieval_bench", options, device);

    // The corpus at the Python edition's default chunking, every retriever.
    const auto chunks = chunked(corpus, 1500, 150);
    const auto texts = g2c::rag::chunk_texts(chunks);
    auto hash =
        std::make_shared<g2c::rag::HashEmbedder>(g2c::rag::HashEmbedderOptions{.dim = hash_dim});
    auto start = Clock::now();
    auto hash_store = std::make_shared<g2c::rag::VectorStore>(hash_dim);
    hash_store->add(chunks, hash->embed(texts));
    const double hash_build_ms = ms_since(start);
    start = Clock::now();
    g2c::rag::BM25Retriever bm25;
    bm25.add(chunks);
    const double bm25_build_ms = ms_since(start);
    g2c::rag::DenseRetriever hash_retriever(hash, hash_store);
    const double hash_query_ms = median_retrieve_ms(hash_retriever, queries);
    const double bm25_query_ms = median_retrieve_ms(bm25, queries);
    fmt::print("TinyShakespeare: {} characters, {} chunks of 1500 (150 shared), {} queries\n",
               g2c::rag::character_offsets(corpus).size() - 1, chunks.size(), queries.size());
    fmt::print("  hash (dim {}): built in {:.2f} s, query {:.3f} ms (embedding it included)\n",
               hash_dim, hash_build_ms / 1e3, hash_query_ms);
    fmt::print("  BM25:          built in {:.2f} s, query {:.3f} ms\n", bm25_build_ms / 1e3,
               bm25_query_ms);
    result["corpus"] = {
        {"chunks", chunks.size()},
        {"chunk_size", 1500},
        {"overlap", 150},
        {"hash",
         {{"dim", hash_dim}, {"build_s", hash_build_ms / 1e3}, {"query_ms", hash_query_ms}}},
        {"bm25", {{"build_s", bm25_build_ms / 1e3}, {"query_ms", bm25_query_ms}}}};

    // 10,000+ chunks: query time at the hash dim and at the dense dim.
    const auto small = chunked(corpus, 200, 100);
    start = Clock::now();
    auto small_hash = std::make_shared<g2c::rag::VectorStore>(hash_dim);
    small_hash->add(small, hash->embed(g2c::rag::chunk_texts(small)));
    const double small_build_ms = ms_since(start);
    const auto hash_queries = hash->embed(queries);
    const double small_hash_search_ms = median_search_ms(*small_hash, hash_queries);
    g2c::rag::DenseRetriever small_retriever(hash, small_hash);
    const double small_hash_query_ms = median_retrieve_ms(small_retriever, queries);
    // The dense embedder's dim: the store's search does not depend on where the vectors came from,
    // so random unit vectors stand in for 10,000 SmolLM2 embeddings (embedding that many takes
    // minutes; the speed is measured below).
    torch::manual_seed(options.seed);
    g2c::rag::VectorStore small_dense(576);
    small_dense.add(small, g2c::rag::l2_normalize_rows(
                               torch::randn({static_cast<std::int64_t>(small.size()), 576})));
    const double small_dense_search_ms = median_search_ms(
        small_dense, g2c::rag::l2_normalize_rows(
                         torch::randn({static_cast<std::int64_t>(queries.size()), 576})));
    g2c::rag::BM25Retriever small_bm25;
    small_bm25.add(small);
    const double small_bm25_query_ms = median_retrieve_ms(small_bm25, queries);
    fmt::print("{} chunks of 200 (100 shared): hash index built in {:.2f} s\n", small.size(),
               small_build_ms / 1e3);
    fmt::print(
        "  search {:.3f} ms at dim {} ({:.3f} ms with the query's embedding), {:.3f} ms at dim 576;"
        " BM25 {:.3f} ms\n",
        small_hash_search_ms, hash_dim, small_hash_query_ms, small_dense_search_ms,
        small_bm25_query_ms);
    result["many_chunks"] = {{"chunks", small.size()},
                             {"chunk_size", 200},
                             {"overlap", 100},
                             {"hash_build_s", small_build_ms / 1e3},
                             {"hash_search_ms", small_hash_search_ms},
                             {"hash_query_ms", small_hash_query_ms},
                             {"dense_dim_search_ms", small_dense_search_ms},
                             {"bm25_query_ms", small_bm25_query_ms}};

    // Dense embedding: in this process, and through g2c-serve (one text, then eight per request).
    if (dense_chunks > 0) {
      const std::vector<std::string> sample(
          texts.begin(),
          texts.begin() +
              std::min<std::int64_t>(dense_chunks, static_cast<std::int64_t>(texts.size())));
      auto model =
          std::make_shared<g2c::pretrained::PretrainedModel>(g2c::pretrained::load_pretrained_model(
              model_name, g2c::pretrained::LoadOptions().packed(true)));
      g2c::rag::PretrainedEmbedder in_process(model, batch);
      in_process.embed({sample.front()});  // warm-up
      const double local_rate = chunks_per_second(in_process, sample);

      g2c::inference::ServerOptions server_options;
      server_options.port = 0;
      server_options.log_requests = false;
      server_options.threads = 2;
      const auto n = static_cast<std::size_t>(sample.size());
      server_options.max_requests = 1 + n + (n + 7) / 8;  // a warm-up, per text, per eight
      g2c::inference::Server server(server_options);
      server.bind();
      std::thread listening([&] { server.listen(); });
      const auto url = fmt::format("http://127.0.0.1:{}", server.port());
      g2c::rag::OllamaEmbedderOptions one;
      one.base_url = url;
      one.dim = in_process.dim();
      g2c::rag::OllamaEmbedder per_text(model_name, one);
      per_text.embed({sample.front()});  // warm-up: the server loads the model
      const double per_text_rate = chunks_per_second(per_text, sample);
      auto eight = one;
      eight.batch = 8;
      g2c::rag::OllamaEmbedder batched(model_name, eight);
      const auto start_batched = Clock::now();
      const auto served = batched.embed(sample);
      const double batched_rate = static_cast<double>(n) / (ms_since(start_batched) / 1e3);
      listening.join();  // the server has answered its requests and stopped
      const double agreement = (served * in_process.embed(sample)).sum(1).min().item<double>();
      fmt::print(
          "dense embedding ({}, {} chunks of 1500 characters): {:.2f} chunks/s in this process, "
          "{:.2f} through g2c-serve one per request, {:.2f} eight per request (lowest cosine "
          "between the two ways: {:.6f})\n",
          model_name, n, local_rate, per_text_rate, batched_rate, agreement);
      const double estimate_s = static_cast<double>(chunks.size()) / local_rate;
      fmt::print("  the whole corpus ({} chunks) would take about {:.0f} s in this process\n",
                 chunks.size(), estimate_s);
      result["dense"] = {{"model", model_name},
                         {"chunks", n},
                         {"in_process_chunks_per_s", local_rate},
                         {"serve_per_text_chunks_per_s", per_text_rate},
                         {"serve_batched_chunks_per_s", batched_rate},
                         {"min_cosine_served_vs_in_process", agreement},
                         {"whole_corpus_estimate_s", estimate_s}};
      result["rates"] = {{"way", {"in process", "g2c-serve, 1/request", "g2c-serve, 8/request"}},
                         {"chunks_per_s", {local_rate, per_text_rate, batched_rate}}};
      using g2c::exercises::Figure;
      using g2c::exercises::Series;
      result["figures"] = g2c::exercises::figures(
          {Figure::bar("rag_dense_rate.png",
                       fmt::format("{}: chunks of 1500 characters embedded per second", model_name),
                       "", "chunks / s")
               .add(Series("", "/rates/way", "/rates/chunks_per_s"))});
    }
    const auto path = g2c::exercises::save_result(options, "retrieval_bench.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_17_retrieval_bench
