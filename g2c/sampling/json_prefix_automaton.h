// Module 18, implemented for you — the grammar of constrained decoding: a prefix acceptor for the
// JSON subset of the course's tool calls. It answers one question, "is this text still the start
// of something grammatical?", and that is the whole interface constrained.h consumes:
//
//   JsonPrefixAutomaton automaton;
//   auto state = automaton.advance(automaton.initial(), R"({"name")");  // a new state
//   automaton.advance(state, "}");                                       // nullopt: rejected
//   automaton.is_complete(*automaton.advance(state, R"(: "calc"})"));    // true: the root closed
//
// The grammar. The root is an object; keys are strings; values are strings, numbers (JSON's
// rules: an optional '-', no leading zeros, an optional fraction, no exponent) or nested objects.
// Escapes are the single-character ones (\" \\ \/ \b \f \n \r \t — no \uXXXX). Nothing at all may
// follow the root's closing '}', so a constrained generator stops crisply. Arrays, booleans and
// null are left out on purpose: the course's tool calls ({"name": ..., "arguments": {...}}) never
// need them, and every production stays readable.
//
// Two details beyond the productions:
//   * whitespace between tokens is rationed, a tightening over JSON: at most
//     max_whitespace_run() (3) characters in a row. Unbounded whitespace is grammatical, and that
//     is the problem: a prose-trained model keeps much of its probability on spaces and newlines,
//     and under an unrationed grammar it hides in whitespace and spends its whole budget without
//     committing to '{'. (llama.cpp's JSON grammar bounds its `ws` rule for the same reason.)
//     Inside strings a space is content and is never rationed.
//   * text is UTF-8 bytes, as a byte-level tokenizer produces it, and a piece may hold part of a
//     character. Inside strings the automaton follows each character's bytes (RFC 3629's table:
//     no overlong forms, no surrogates, nothing past U+10FFFF), so a string cannot close in the
//     middle of a character and every complete text is valid UTF-8 — what a strict JSON parser
//     demands. Outside strings only ASCII is grammatical.
//
// The state is a small value — where the parse is (mode), how many objects are open (depth), the
// current whitespace run, and the bytes a character still owes — comparable and hashable, so that
// constrained.h can memoise one mask per state. advance() never changes its argument: checking a
// candidate piece advances a copy.
//
// Plain C++ without LibTorch (target g2c_json_automaton, compiled without LibTorch's headers).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

namespace g2c::sampling {

/// Where the parse is: what the next character may be.
enum class JsonMode : std::uint8_t {
  kPreRoot,         // before the root object: '{' (or whitespace)
  kObjectOpen,      // just after '{': the first key's '"', or '}' (an empty object)
  kKey,             // inside a key: any character but a raw control one; '"' ends it
  kKeyEscape,       // after '\' in a key: one of " \ / b f n r t
  kPostKey,         // after a key: ':'
  kPreValue,        // after ':': '"', '{', '-' or a digit
  kString,          // inside a string value, as kKey
  kStringEscape,    // after '\' in a string value
  kNumberMinus,     // after '-': a digit
  kNumberZero,      // a leading 0: '.' or the end of the number (no "01")
  kNumberInteger,   // integer digits: more, '.', or the end
  kNumberDot,       // after '.': a digit
  kNumberFraction,  // fraction digits: more, or the end
  kPostValue,       // a value closed: ',' or '}'
  kObjectComma,     // after ',': the next key's '"' (no trailing comma)
  kDone,            // the root object closed: nothing more, not even whitespace
};

/// Inside a string: what the bytes of a multi-byte UTF-8 character still owe. The first
/// continuation byte is 80..BF except after E0 (A0..BF), ED (80..9F), F0 (90..BF) and F4 (80..8F).
enum class Utf8Owed : std::uint8_t {
  kNothing,       // between characters
  kOne,           // one continuation byte 80..BF
  kTwo,           // two of them
  kThree,         // three of them
  kTwoAfterE0,    // A0..BF, then one more
  kTwoAfterED,    // 80..9F (no surrogates), then one more
  kThreeAfterF0,  // 90..BF, then two more
  kThreeAfterF4,  // 80..8F (nothing past U+10FFFF), then two more
};

/// The automaton's state: a value, compared and hashed field by field.
struct JsonState {
  JsonMode mode = JsonMode::kPreRoot;
  Utf8Owed utf8 = Utf8Owed::kNothing;
  std::uint8_t whitespace_run = 0;  // whitespace characters in a row, between tokens
  std::int32_t depth = 0;           // open objects

  friend bool operator==(const JsonState&, const JsonState&) = default;
};

/// For unordered containers keyed by state (constrained.h's MaskCache).
struct JsonStateHash {
  std::size_t operator()(const JsonState& state) const noexcept;
};

/// "(kString, depth=1, whitespace_run=0, utf8=kNothing)": for messages and test failures.
std::string to_string(const JsonState& state);
std::ostream& operator<<(std::ostream& stream, const JsonState& state);

class JsonPrefixAutomaton {
 public:
  /// The ration of whitespace between tokens, 3 by default. ValueError unless 0..255.
  explicit JsonPrefixAutomaton(int max_whitespace_run = 3);

  /// The state before any text: expecting the root '{'.
  JsonState initial() const { return JsonState{}; }

  /// True once the root object has closed; such a state accepts nothing more.
  static bool is_complete(const JsonState& state) { return state.mode == JsonMode::kDone; }
  static bool is_complete(const std::optional<JsonState>& state) {
    return state && is_complete(*state);
  }

  /// Feeds `text` byte by byte from `state`: the state after it, or nullopt the moment a byte
  /// makes the prefix ungrammatical. A nullopt state stays nullopt, so rejections propagate
  /// (advance(advance(s, a), b) == advance(s, a + b)). Empty text returns `state` unchanged.
  /// Example: advance(initial(), R"({"a": 01)") -> nullopt (a leading zero).
  std::optional<JsonState> advance(const std::optional<JsonState>& state,
                                   std::string_view text) const;

  int max_whitespace_run() const { return max_whitespace_run_; }

  /// Two automata of the same ration accept the same texts, so they may share a mask cache.
  friend bool operator==(const JsonPrefixAutomaton&, const JsonPrefixAutomaton&) = default;

 private:
  std::optional<JsonState> step(JsonState state, unsigned char byte) const;

  int max_whitespace_run_;
};

}  // namespace g2c::sampling
