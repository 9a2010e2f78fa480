// A g2c-serve in the test process, for checks that talk to it over HTTP: on a free port of
// 127.0.0.1, listening on its own thread until destroyed, stopping by itself after a bounded
// number of requests.
#pragma once

#include <string>
#include <thread>

#include <httplib.h>

#include "g2c/core/errors.h"
#include "g2c/inference/server.h"
#include "g2c/pretrained/catalog.h"

namespace g2c_test {

/// "" when the pretrained model's file is there, else why it is not (the message to skip with).
inline std::string missing_pretrained_model(const std::string& name) {
  try {
    g2c::pretrained::pretrained_model_file(name);
    return "";
  } catch (const g2c::ValueError& error) {
    return error.what();
  }
}

/// A server on a free port of 127.0.0.1, listening on its own thread until destroyed.
class RunningServer {
 public:
  explicit RunningServer(g2c::inference::ServerOptions options = {})
      : server_(with_free_port(options)) {
    server_.bind();
    thread_ = std::thread([this] { server_.listen(); });
  }
  ~RunningServer() {
    server_.stop();
    thread_.join();
  }
  g2c::inference::Server& server() { return server_; }
  int port() const { return server_.port(); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port()); }
  httplib::Client client() const {
    httplib::Client client("127.0.0.1", port());
    client.set_read_timeout(60, 0);
    return client;
  }

 private:
  static g2c::inference::ServerOptions with_free_port(g2c::inference::ServerOptions options) {
    options.host = "127.0.0.1";
    options.max_requests = 64;  // a bound no check comes near: past it, the server stops itself
    options.port = 0;
    options.log_requests = false;
    return options;
  }
  g2c::inference::Server server_;
  std::thread thread_;
};

}  // namespace g2c_test
