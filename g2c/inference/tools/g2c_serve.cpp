// g2c-serve: the course's models over HTTP on this machine, in Ollama's protocol and OpenAI's
// (g2c/inference/server.h lists the endpoints). Module 16.
//
//   build/reference/bin/g2c-serve                      # http://127.0.0.1:11434, every model
//   curl http://127.0.0.1:11434/api/generate -d '{"model": "SmolLM2-135M-Instruct",
//        "prompt": "What is the capital of France?", "stream": false}'
//
// Ctrl-C or SIGTERM stops it within a moment: requests still arriving are dropped, generations in
// progress end at their next token, and the process exits.
//
// It answers this machine: requests for Host: localhost or 127.0.0.1, from programs or local web
// pages. --allow-origin lets named web pages in; --api-key (or G2C_SERVE_API_KEY, which keeps the
// key out of the process list) makes every request show the key, for a server reachable from
// elsewhere. Exit status: g2c::run_cli's table (g2c/core/cli.h): 0 stopped cleanly, 2 bad input (a
// port that is taken, a bad option), 1 anything else.
#include <pthread.h>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/torch.h>

#include "g2c/core/cli.h"
#include "g2c/core/errors.h"
#include "g2c/inference/server.h"

namespace {

struct Options {
  std::string host = "127.0.0.1";
  int port = 11434;
  std::size_t max_requests = 0;
  std::size_t threads = 16;
  std::size_t max_queue = 64;
  int torch_threads = 1;
  std::string preload;
  std::vector<std::string> allowed_origins;
  std::vector<std::string> adapters;
  std::string api_key;
  bool quiet = false;
};

int serve(const Options& options) {
  std::string api_key = options.api_key;
  if (const char* from_environment = std::getenv("G2C_SERVE_API_KEY");
      api_key.empty() && from_environment) {
    api_key = from_environment;
  }
  if (options.host != "127.0.0.1" && options.host != "localhost" && options.host != "::1" &&
      api_key.empty()) {
    fmt::print(stderr,
               "g2c-serve: listening on {} makes the models reachable from other machines, and "
               "anyone who reaches it may use them; give --api-key to require a key\n",
               options.host);
  }
  // Each request computes on its own thread: one LibTorch thread each keeps concurrent requests
  // from fighting over the cores.
  if (options.torch_threads > 0) torch::set_num_threads(options.torch_threads);

  // SIGINT and SIGTERM are waited for by one thread, which stops the server: nothing
  // async-signal-unsafe runs inside a signal handler.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);  // every thread started from here inherits it

  g2c::inference::ServerOptions server_options;
  server_options.host = options.host;
  server_options.port = options.port;
  server_options.max_requests = options.max_requests;
  server_options.threads = options.threads;
  server_options.max_queue = options.max_queue;
  server_options.allowed_origins = options.allowed_origins;
  server_options.adapters = {options.adapters.begin(), options.adapters.end()};
  server_options.api_key = api_key;
  server_options.log_requests = !options.quiet;
  g2c::inference::Server server(server_options);
  server.bind();

  if (!options.preload.empty()) {
    double load_ms = 0;
    if (!server.registry().get(options.preload, &load_ms)) {
      throw g2c::ValueError(fmt::format("--preload: no model called \"{}\"; served: {}",
                                        options.preload,
                                        fmt::join(server.registry().names(), ", ")));
    }
    fmt::print(stderr, "g2c-serve: loaded {} in {:.2f} s\n", options.preload, load_ms / 1e3);
  }
  const auto names = server.registry().names();
  fmt::print(stderr, "g2c-serve: http://{}:{} serving {}\n", options.host, server.port(),
             names.empty() ? std::string("no models yet (run scripts/setup.sh)")
                           : fmt::format("{}", fmt::join(names, ", ")));
  // The port on stdout alone, for scripts that start it with --port 0.
  std::cout << server.port() << std::endl;

  std::atomic<bool> stopping{false};
  std::thread waiter([&] {
    int received = 0;
    sigwait(&signals, &received);
    if (!stopping.exchange(true)) {
      fmt::print(stderr, "g2c-serve: {} received, stopping\n",
                 received == SIGINT ? "SIGINT" : "SIGTERM");
      server.stop();
    }
  });
  server.listen();  // returns after stop(): a signal or --max-requests answers
  if (!stopping.exchange(true)) {
    // Stopped by --max-requests: wake the waiting thread with a signal of our own.
    pthread_kill(waiter.native_handle(), SIGTERM);
  }
  waiter.join();
  fmt::print(stderr, "g2c-serve: stopped after {} requests\n", server.requests_answered());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "g2c-serve: the course's models over HTTP in Ollama's and OpenAI's protocols (module 16):\n"
      "SmolLM2-135M-Instruct and every model saved under artifacts/models"};
  Options options;
  app.add_option("--host", options.host, "Address to listen on (127.0.0.1: this machine only)");
  app.add_option("--port", options.port, "Port (0: any free port, printed on stdout)")
      .range(0, 65535);
  app.add_option("--max-requests", options.max_requests,
                 "Stop by itself after answering this many requests (0: never)")
      .non_negative();
  app.add_option("--threads", options.threads, "Requests served at once").positive();
  app.add_option("--max-queue", options.max_queue,
                 "Requests that may wait for a thread; more are answered 503 (busy)")
      .positive();
  app.add_option("--allow-origin", options.allowed_origins,
                 "A web page origin whose requests are answered (http://host:port, or * for any); "
                 "repeat for several")
      .no_default();
  app.add_option("--torch-threads", options.torch_threads,
                 "LibTorch threads per request (0: LibTorch's default)")
      .non_negative();
  app.add_option("--preload", options.preload, "Load this model before the first request")
      .no_default();
  app.add_option(
         "--api-key", options.api_key,
         "Require \"Authorization: Bearer KEY\" on every request (or set G2C_SERVE_API_KEY)")
      .no_default();
  app.add_option("--adapter", options.adapters,
                 "A LoRA adapter file (exercise 18b_tool_tuning) served with its base model under "
                 "the adapter's name; repeat for several")
      .no_default();
  app.add_flag("--quiet", options.quiet, "No line per request on stderr");
  return g2c::run_cli(app, argc, argv, [&] { return serve(options); });
}
