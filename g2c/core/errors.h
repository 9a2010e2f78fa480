// Errors used across the course: the C++ counterparts of Python's ValueError, RuntimeError and
// NotImplementedError.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace g2c {

/// Bad input a user can trigger: a wrong shape, an unknown id, a malformed file, a missing device.
/// The message says what was expected, what was received, and how to fix it.
class ValueError : public std::invalid_argument {
 public:
  explicit ValueError(const std::string& message) : std::invalid_argument(message) {}
};

/// A name that should mean a file or folder and means none: a model artifact nobody has saved
/// yet, a configuration never written. A ValueError (a user fixes it, and course programs exit 2);
/// its own type so that a caller can fall back to something else, as the Python edition's
/// callers catch FileNotFoundError. The message says what was looked for and which command makes
/// it.
class FileNotFoundError : public ValueError {
 public:
  explicit FileNotFoundError(const std::string& message) : ValueError(message) {}
};

/// A call made at the wrong time, not with wrong values: an object asked for something it does not
/// have yet (a mixture-of-experts layer's balancing loss before any forward). Python's
/// RuntimeError; the message says what must happen first.
class RuntimeError : public std::runtime_error {
 public:
  explicit RuntimeError(const std::string& message) : std::runtime_error(message) {}
};

/// Thrown by every scaffolded function until the student writes it. what() starts with
/// "NotImplementedError:" so graders can tell a TODO from a wrong answer.
class NotImplementedError : public std::logic_error {
 public:
  explicit NotImplementedError(const std::string& message) : std::logic_error(message) {}
};

/// A training run whose loss stopped being finite; what() says when, the likely cause and the
/// files to check. Course programs exit with status 4 for it (g2c/core/cli.h).
class TrainingDiverged : public std::runtime_error {
 public:
  explicit TrainingDiverged(const std::string& message) : std::runtime_error(message) {}
};

/// The error a student file throws from a TODO body.
/// Example: `throw g2c::todo("Linear::forward", "g2c/nn/linear.cpp", "03");`
NotImplementedError todo(std::string_view function, std::string_view file, std::string_view module);

}  // namespace g2c
