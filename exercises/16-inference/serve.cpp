// Exercise 16 — one interface, three ways to reach a model: the same prompts through
//   1. the course's own model in this process (ArtifactBackend over ShakespeareLM-1M, when saved),
//   2. SmolLM2-135M-Instruct in this process (PretrainedBackend), and
//   3. SmolLM2-135M-Instruct through g2c-serve over HTTP (OllamaBackend; the server g2c-serve
//      runs, started in a thread of this program on a free port of 127.0.0.1),
// greedy, so 2 and 3 must give the same text token for token: whatever differs in their timings is
// the HTTP hop (JSON both ways, a socket, the server's thread). Time to first token is a one-token
// completion's latency on both sides. Then eight streaming clients at once: the aggregate tokens
// per second and each client's time to its first streamed piece, p50 and p90, against one client
// alone. Writes serve.json and two figures.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <future>
#include <thread>

#include <fmt/format.h>
#include <httplib.h>

#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "exercises/common/timing.h"
#include "g2c/core/errors.h"
#include "g2c/inference/artifact.h"
#include "g2c/inference/benchmark.h"
#include "g2c/inference/ollama.h"
#include "g2c/inference/pretrained_backend.h"
#include "g2c/inference/server.h"
#include "g2c/pretraining/artifact_names.h"

namespace exercise_16_serve {

namespace {

using Clock = std::chrono::steady_clock;
using g2c::inference::Backend;
using g2c::inference::CompletionOptions;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

/// Prompts that ask for more than 64 tokens, so that most completions run to the limit.
const std::vector<std::string> kPrompts = {
    "Write a short poem about the sea.", "Explain what a language model is.",
    "Tell me a story about a cat who learns to read.", "Describe the city of Paris.",
    "List five fruits and say something about each."};

/// One backend's timings over the prompts: wall milliseconds per completion (the median of the
/// repeats), its tokens, and a one-token completion's (the time to first token).
struct Timings {
  std::string label;
  std::vector<double> latency_ms, first_token_ms;
  std::vector<double> server_ms;  // the server's own total_duration (over HTTP only)
  std::vector<std::int64_t> tokens;
  std::vector<std::string> texts;
};

/// Times `backends` over the prompts, taking turns request by request so that a drift of the
/// machine (its clock, another job) falls on all of them alike.
std::vector<Timings> time_backends(const std::vector<std::pair<std::string, Backend*>>& backends,
                                   std::int64_t max_tokens, int repeats) {
  // The server applies Ollama's defaults (the repetition penalty 1.1 over 64 tokens) to what a
  // request leaves unsaid; in this process the same extras give the same text. OllamaBackend
  // sends the four sampling settings only.
  auto full = CompletionOptions().with_temperature(0).with_max_new_tokens(max_tokens);
  full.extras = g2c::inference::GenerationExtras::ollama_defaults();
  auto one = full;
  one.max_new_tokens = 1;
  std::vector<Timings> timings;
  for (const auto& [label, backend] : backends) {
    backend->complete(kPrompts.front(), one);  // warm: the first call pays for loading
    timings.push_back({label, {}, {}, {}, {}, {}});
  }
  for (const auto& prompt : kPrompts) {
    std::vector<std::vector<double>> walls(backends.size()), firsts(backends.size()),
        served(backends.size());
    for (int r = 0; r < repeats; ++r) {
      for (std::size_t b = 0; b < backends.size(); ++b) {
        auto start = Clock::now();
        backends[b].second->complete(prompt, one);
        firsts[b].push_back(ms_since(start));
        start = Clock::now();
        const auto result = backends[b].second->complete(prompt, full);
        walls[b].push_back(ms_since(start));
        if (const auto& server =
                result.metadata.value("server_total_duration_ms", nlohmann::json());
            server.is_number()) {
          served[b].push_back(server.get<double>());
        }
        if (r == 0) {
          timings[b].tokens.push_back(result.completion_tokens.value_or(0));
          timings[b].texts.push_back(result.completion);
        }
      }
    }
    for (std::size_t b = 0; b < backends.size(); ++b) {
      timings[b].latency_ms.push_back(g2c::exercises::median(walls[b]));
      timings[b].first_token_ms.push_back(g2c::exercises::median(firsts[b]));
      if (!served[b].empty()) timings[b].server_ms.push_back(g2c::exercises::median(served[b]));
    }
  }
  return timings;
}

double total(const std::vector<double>& values) {
  double sum = 0;
  for (double v : values) sum += v;
  return sum;
}

std::int64_t total(const std::vector<std::int64_t>& values) {
  std::int64_t sum = 0;
  for (auto v : values) sum += v;
  return sum;
}

/// One streaming /api/chat client: when its first piece came, when it ended, and its tokens.
struct StreamRun {
  double first_ms = 0, end_ms = 0;
  std::int64_t tokens = 0;
};

StreamRun stream_chat(int port, const std::string& model, const std::string& prompt,
                      std::int64_t max_tokens, Clock::time_point start) {
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(300, 0);
  const nlohmann::json body = {{"model", model},
                               {"messages", {{{"role", "user"}, {"content", prompt}}}},
                               {"options", {{"temperature", 0}, {"num_predict", max_tokens}}}};
  StreamRun run;
  std::string pending;
  httplib::Request request;
  request.method = "POST";
  request.path = "/api/chat";
  request.body = body.dump();
  request.set_header("Content-Type", "application/json");
  request.content_receiver = [&](const char* data, std::size_t size, std::uint64_t, std::uint64_t) {
    if (run.first_ms == 0) run.first_ms = ms_since(start);
    pending.append(data, size);
    for (auto end = pending.find('\n'); end != std::string::npos; end = pending.find('\n')) {
      const auto line = nlohmann::json::parse(pending.substr(0, end));
      pending.erase(0, end + 1);
      if (line.value("done", false)) run.tokens = line.value("eval_count", 0);
    }
    return true;
  };
  const auto answer = client.send(request);
  if (!answer || answer->status != 200) {
    throw std::runtime_error(
        fmt::format("a streaming client got no answer from 127.0.0.1:{}", port));
  }
  run.end_ms = ms_since(start);
  return run;
}

/// `clients` streaming clients at once (the prompts in turn): their runs, and the wall time.
std::vector<StreamRun> stream_at_once(int port, const std::string& model, int clients,
                                      std::int64_t max_tokens, double& wall_ms) {
  const auto start = Clock::now();
  std::vector<std::future<StreamRun>> futures;
  for (int i = 0; i < clients; ++i) {
    futures.push_back(std::async(std::launch::async, [&, i] {
      return stream_chat(port, model, kPrompts[static_cast<std::size_t>(i) % kPrompts.size()],
                         max_tokens, start);
    }));
  }
  std::vector<StreamRun> runs;
  for (auto& future : futures) runs.push_back(future.get());
  wall_ms = ms_since(start);
  return runs;
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Module 16: the same prompts through the course's model, SmolLM2-135M-Instruct in this\n"
      "process and SmolLM2 through g2c-serve (HTTP): latency, time to first token, tokens/s side\n"
      "by side, and eight streaming clients at once. Writes serve.json and figures."};
  g2c::exercises::CommonOptions options;
  options.out = "results/16-inference";
  std::string model_name = "SmolLM2-135M-Instruct";
  std::string course_model = "ShakespeareLM-1M";
  std::int64_t max_tokens = 64;
  int repeats = 3, clients = 8;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--model", model_name, "Pretrained model (SmolLM2-135M-Instruct)");
  app.add_option("--course-model", course_model,
                 "Course artifact to compare (skipped when it is not saved)");
  app.add_option("--tokens", max_tokens, "New tokens per completion").range(1, 1024);
  app.add_option("--repeats", repeats, "Timed runs per prompt (the median is kept)").positive();
  app.add_option("--clients", clients, "Streaming clients at once").range(1, 64);
  return g2c::run_cli(app, argc, argv, [&] {
    auto common = options;
    if (common.threads == 0) common.threads = 1;  // one core per request: the server's setting
    const auto device = g2c::exercises::prepare(common);
    if (!device.is_cpu()) throw g2c::ValueError("16_serve measures the CPU; use --device cpu");

    const bool with_course = g2c::pretraining::model_artifact_exists(
        g2c::pretraining::canonical_model_name(course_model), g2c::pretraining::models_root());
    g2c::inference::ServerOptions server_options;
    server_options.port = 0;
    server_options.log_requests = false;
    server_options.threads = static_cast<std::size_t>(clients) + 2;
    // Exactly the requests this program makes (per model over HTTP: a warm-up, then a one-token
    // and a whole completion per prompt and repeat; then the streaming clients), after which the
    // server stops by itself.
    const auto models_over_http = with_course ? 2 : 1;
    server_options.max_requests = static_cast<std::size_t>(
        models_over_http * (1 + 2 * static_cast<int>(kPrompts.size()) * repeats) + 1 + clients);
    g2c::inference::Server server(server_options);
    server.bind();
    std::thread listening([&] { server.listen(); });
    const auto url = fmt::format("http://127.0.0.1:{}", server.port());
    fmt::print("g2c-serve's server on {} ({} LibTorch thread(s) per request)\n", url,
               torch::get_num_threads());

    std::vector<Timings> rows;
    if (with_course) {
      auto artifact = g2c::inference::load_artifact_backend(course_model);
      g2c::inference::OllamaBackend remote(course_model,
                                           g2c::inference::OllamaOptions().with_base_url(url));
      rows = time_backends({{course_model + " in-process", artifact.get()},
                            {course_model + " via g2c-serve", &remote}},
                           max_tokens, repeats);
    } else {
      fmt::print(
          "{} is not saved (module 10 trains it: scripts/run.sh 10_pretrain); comparing "
          "SmolLM2 alone\n",
          course_model);
    }
    auto local = g2c::inference::PretrainedBackend::load(model_name);
    g2c::inference::OllamaBackend remote(model_name,
                                         g2c::inference::OllamaOptions().with_base_url(url));
    for (auto& row : time_backends(
             {{model_name + " in-process", &local}, {model_name + " via g2c-serve", &remote}},
             max_tokens, repeats)) {
      rows.push_back(std::move(row));
    }

    const auto& in_process = rows[rows.size() - 2];
    const auto& over_http = rows.back();
    if (in_process.texts != over_http.texts) {
      throw std::runtime_error(
          "SmolLM2 answered differently in this process and through g2c-serve: greedy decoding "
          "of the same prompt must give the same text");
    }
    nlohmann::json table = nlohmann::json::array();
    fmt::print("\n{:<36} {:>12} {:>16} {:>10} {:>10}\n", "backend", "latency ms", "first token ms",
               "tokens", "tokens/s");
    for (const auto& row : rows) {
      const double latency = total(row.latency_ms) / static_cast<double>(row.latency_ms.size());
      const double first =
          total(row.first_token_ms) / static_cast<double>(row.first_token_ms.size());
      const auto tokens = total(row.tokens);
      const double per_second = static_cast<double>(tokens) / (total(row.latency_ms) / 1e3);
      fmt::print("{:<36} {:>12.1f} {:>16.1f} {:>10} {:>10.1f}\n", row.label, latency, first, tokens,
                 per_second);
      table.push_back({{"backend", row.label},
                       {"latency_ms_mean", latency},
                       {"first_token_ms_mean", first},
                       {"completion_tokens", tokens},
                       {"tokens_per_second", per_second},
                       {"latency_ms", row.latency_ms},
                       {"first_token_ms", row.first_token_ms},
                       {"tokens", row.tokens}});
    }
    const double hop = total(over_http.latency_ms) / total(in_process.latency_ms) - 1;
    const double hop_ms = (total(over_http.latency_ms) - total(in_process.latency_ms)) /
                          static_cast<double>(kPrompts.size());
    // What the hop itself costs: the client's wall time less the server's own account of the
    // request (JSON both ways, the loopback socket, a pool thread taking the request).
    const double wire_ms = (total(over_http.latency_ms) - total(over_http.server_ms)) /
                           static_cast<double>(kPrompts.size());
    fmt::print(
        "\nthrough g2c-serve against in this process: {:+.1f} ms a completion ({:+.2f}%, "
        "the same {} tokens); of which the HTTP hop itself (client wall time less the "
        "server's total_duration): {:.2f} ms, {:.2f}%\n",
        hop_ms, 100 * hop, total(over_http.tokens), wire_ms,
        100 * wire_ms / (total(in_process.latency_ms) / static_cast<double>(kPrompts.size())));

    // Streaming clients: one alone, then `clients` at once.
    double alone_ms = 0, together_ms = 0;
    const auto alone = stream_at_once(server.port(), model_name, 1, max_tokens, alone_ms);
    const auto together =
        stream_at_once(server.port(), model_name, clients, max_tokens, together_ms);
    std::vector<double> firsts;
    std::int64_t together_tokens = 0;
    for (const auto& run : together) {
      firsts.push_back(run.first_ms);
      together_tokens += run.tokens;
    }
    const double alone_rate = static_cast<double>(alone.front().tokens) / (alone_ms / 1e3);
    const double together_rate = static_cast<double>(together_tokens) / (together_ms / 1e3);
    fmt::print("one streaming client: {:.1f} tokens/s, first piece after {:.0f} ms\n", alone_rate,
               alone.front().first_ms);
    fmt::print(
        "{} at once: {:.1f} tokens/s together over {:.1f} s; first piece p50 {:.0f} ms, "
        "p90 {:.0f} ms\n",
        clients, together_rate, together_ms / 1e3, g2c::inference::percentile(firsts, 50),
        g2c::inference::percentile(firsts, 90));
    server.stop();
    listening.join();

    auto result = g2c::exercises::run_metadata("16_serve", common, device);
    result["config"] = {{"model", model_name},
                        {"course_model", course_model},
                        {"tokens", max_tokens},
                        {"repeats", repeats},
                        {"clients", clients},
                        {"prompts", kPrompts},
                        {"threads_per_request", torch::get_num_threads()},
                        {"hardware_threads", std::thread::hardware_concurrency()}};
    result["backends"] = table;
    result["http_hop_fraction"] = hop;
    result["http_hop_ms_per_completion"] = hop_ms;
    result["http_wire_ms_per_completion"] = wire_ms;
    result["bars"] = {{"name", nlohmann::json::array()},
                      {"latency_ms", nlohmann::json::array()},
                      {"first_token_ms", nlohmann::json::array()}};
    for (const auto& row : table) {
      result["bars"]["name"].push_back(row["backend"]);
      result["bars"]["latency_ms"].push_back(row["latency_ms_mean"]);
      result["bars"]["first_token_ms"].push_back(row["first_token_ms_mean"]);
    }
    std::vector<double> ends;
    std::vector<std::string> client_ids;
    for (std::size_t i = 0; i < together.size(); ++i) {
      client_ids.push_back(std::to_string(i + 1));
      ends.push_back(together[i].end_ms);
    }
    result["streaming"] = {{"one_client_tokens_per_second", alone_rate},
                           {"one_client_first_piece_ms", alone.front().first_ms},
                           {"clients", clients},
                           {"tokens_per_second", together_rate},
                           {"wall_ms", together_ms},
                           {"first_piece_ms_p50", g2c::inference::percentile(firsts, 50)},
                           {"first_piece_ms_p90", g2c::inference::percentile(firsts, 90)},
                           {"client", client_ids},
                           {"first_piece_ms", firsts},
                           {"end_ms", ends}};
    using g2c::exercises::Figure;
    using g2c::exercises::Series;
    result["figures"] = g2c::exercises::figures(
        {Figure::bar("serve_latency.png",
                     fmt::format("{} new tokens, greedy: in this process and through g2c-serve",
                                 max_tokens),
                     "", "ms (mean over the prompts)")
             .rotate_labels(15)
             .add(Series("whole completion", "/bars/name", "/bars/latency_ms"))
             .add(Series("first token", "/bars/name", "/bars/first_token_ms")),
         Figure::bar("serve_clients.png",
                     fmt::format("{} streaming clients at once: {:.0f} tokens/s together "
                                 "(one alone: {:.0f})",
                                 clients, together_rate, alone_rate),
                     "client", "ms after the start")
             .add(Series("first piece", "/streaming/client", "/streaming/first_piece_ms"))
             .add(Series("last piece", "/streaming/client", "/streaming/end_ms"))});
    const auto path = g2c::exercises::save_result(common, "serve.json", result);
    g2c::exercises::plot_result(common, path);
  });
}

}  // namespace exercise_16_serve
