// Module 18, implemented for you — the JSON prefix automaton (json_prefix_automaton.h): one byte
// at a time, a switch on where the parse is.
#include "g2c/sampling/json_prefix_automaton.h"

#include <fmt/format.h>

#include "g2c/core/errors.h"

namespace g2c::sampling {

namespace {

bool is_whitespace(unsigned char byte) {
  return byte == ' ' || byte == '\t' || byte == '\n' || byte == '\r';
}

bool is_digit(unsigned char byte) {
  return byte >= '0' && byte <= '9';
}

// The characters that may follow a backslash (no \uXXXX in this subset).
bool is_escapable(unsigned char byte) {
  switch (byte) {
    case '"':
    case '\\':
    case '/':
    case 'b':
    case 'f':
    case 'n':
    case 'r':
    case 't':
      return true;
    default:
      return false;
  }
}

// Inside a key or a string value a space is content, not a separator.
bool inside_string(JsonMode mode) {
  return mode == JsonMode::kKey || mode == JsonMode::kKeyEscape || mode == JsonMode::kString ||
         mode == JsonMode::kStringEscape;
}

// One content byte of a key or string value (a '"' or '\' between characters is handled by the
// caller): what the current character still owes after it, or nullopt for a byte that cannot come
// here. RFC 3629's table of well-formed UTF-8.
std::optional<Utf8Owed> content_byte(Utf8Owed owed, unsigned char byte) {
  const auto within = [byte](unsigned lowest, unsigned highest) {
    return byte >= lowest && byte <= highest;
  };
  switch (owed) {
    case Utf8Owed::kNothing:
      if (byte < 0x20) return std::nullopt;  // raw control characters are not JSON
      if (byte < 0x80) return Utf8Owed::kNothing;
      if (within(0xC2, 0xDF)) return Utf8Owed::kOne;
      if (byte == 0xE0) return Utf8Owed::kTwoAfterE0;
      if (byte == 0xED) return Utf8Owed::kTwoAfterED;
      if (within(0xE1, 0xEF)) return Utf8Owed::kTwo;
      if (byte == 0xF0) return Utf8Owed::kThreeAfterF0;
      if (within(0xF1, 0xF3)) return Utf8Owed::kThree;
      if (byte == 0xF4) return Utf8Owed::kThreeAfterF4;
      return std::nullopt;  // a continuation byte without its lead, C0/C1 (overlong), F5..FF
    case Utf8Owed::kOne:
      return within(0x80, 0xBF) ? std::optional(Utf8Owed::kNothing) : std::nullopt;
    case Utf8Owed::kTwo:
      return within(0x80, 0xBF) ? std::optional(Utf8Owed::kOne) : std::nullopt;
    case Utf8Owed::kThree:
      return within(0x80, 0xBF) ? std::optional(Utf8Owed::kTwo) : std::nullopt;
    case Utf8Owed::kTwoAfterE0:
      return within(0xA0, 0xBF) ? std::optional(Utf8Owed::kOne) : std::nullopt;
    case Utf8Owed::kTwoAfterED:
      return within(0x80, 0x9F) ? std::optional(Utf8Owed::kOne) : std::nullopt;
    case Utf8Owed::kThreeAfterF0:
      return within(0x90, 0xBF) ? std::optional(Utf8Owed::kTwo) : std::nullopt;
    case Utf8Owed::kThreeAfterF4:
      return within(0x80, 0x8F) ? std::optional(Utf8Owed::kTwo) : std::nullopt;
  }
  return std::nullopt;
}

// The state after an object's '}': the value slot of the enclosing object, or the end.
JsonState close_object(JsonState state) {
  state.depth -= 1;
  state.mode = state.depth == 0 ? JsonMode::kDone : JsonMode::kPostValue;
  return state;
}

JsonState with_mode(JsonState state, JsonMode mode) {
  state.mode = mode;
  return state;
}

const char* mode_name(JsonMode mode) {
  static constexpr const char* kNames[] = {
      "kPreRoot",        "kObjectOpen", "kKey",           "kKeyEscape",
      "kPostKey",        "kPreValue",   "kString",        "kStringEscape",
      "kNumberMinus",    "kNumberZero", "kNumberInteger", "kNumberDot",
      "kNumberFraction", "kPostValue",  "kObjectComma",   "kDone"};
  return kNames[static_cast<int>(mode)];
}

const char* owed_name(Utf8Owed owed) {
  static constexpr const char* kNames[] = {"kNothing",      "kOne",         "kTwo",
                                           "kThree",        "kTwoAfterE0",  "kTwoAfterED",
                                           "kThreeAfterF0", "kThreeAfterF4"};
  return kNames[static_cast<int>(owed)];
}

}  // namespace

std::size_t JsonStateHash::operator()(const JsonState& state) const noexcept {
  const auto packed = static_cast<std::uint64_t>(state.mode) |
                      static_cast<std::uint64_t>(state.utf8) << 8 |
                      static_cast<std::uint64_t>(state.whitespace_run) << 16 |
                      static_cast<std::uint64_t>(static_cast<std::uint32_t>(state.depth)) << 24;
  return std::hash<std::uint64_t>{}(packed);
}

std::string to_string(const JsonState& state) {
  return fmt::format("({}, depth={}, whitespace_run={}, utf8={})", mode_name(state.mode),
                     state.depth, state.whitespace_run, owed_name(state.utf8));
}

std::ostream& operator<<(std::ostream& stream, const JsonState& state) {
  return stream << to_string(state);
}

JsonPrefixAutomaton::JsonPrefixAutomaton(int max_whitespace_run)
    : max_whitespace_run_(max_whitespace_run) {
  if (max_whitespace_run < 0 || max_whitespace_run > 255) {
    throw ValueError(fmt::format(
        "JsonPrefixAutomaton: max_whitespace_run must be 0..255 (characters of whitespace in a "
        "row between tokens); got {}",
        max_whitespace_run));
  }
}

std::optional<JsonState> JsonPrefixAutomaton::advance(const std::optional<JsonState>& state,
                                                      std::string_view text) const {
  std::optional<JsonState> current = state;
  for (const char character : text) {
    if (!current) return std::nullopt;
    current = step(*current, static_cast<unsigned char>(character));
  }
  return current;
}

std::optional<JsonState> JsonPrefixAutomaton::step(JsonState state, unsigned char byte) const {
  using enum JsonMode;
  // Numbers have no terminator: the first byte that cannot continue one closes it, and is then
  // handled as whatever may follow a value.
  if ((state.mode == kNumberInteger || state.mode == kNumberZero) && !is_digit(byte) &&
      byte != '.') {
    state.mode = kPostValue;
  } else if (state.mode == kNumberFraction && !is_digit(byte)) {
    state.mode = kPostValue;
  }

  // Whitespace between tokens, handled once and rationed (the header says why). A '-' or a '.'
  // still owes its digit, and "- 1" or "1. 5" is no number: no whitespace there.
  if (is_whitespace(byte) && !inside_string(state.mode)) {
    if (state.mode == kDone || state.mode == kNumberMinus || state.mode == kNumberDot ||
        state.whitespace_run >= max_whitespace_run_) {
      return std::nullopt;
    }
    state.whitespace_run += 1;
    return state;
  }
  state.whitespace_run = 0;

  switch (state.mode) {
    case kPreRoot:
      if (byte == '{') return JsonState{.mode = kObjectOpen, .depth = 1};
      return std::nullopt;

    case kObjectOpen:
      if (byte == '"') return with_mode(state, kKey);
      if (byte == '}') return close_object(state);
      return std::nullopt;

    case kKey:
    case kString: {
      const bool key = state.mode == kKey;
      if (state.utf8 == Utf8Owed::kNothing) {
        if (byte == '"') return with_mode(state, key ? kPostKey : kPostValue);
        if (byte == '\\') return with_mode(state, key ? kKeyEscape : kStringEscape);
      }
      const auto owed = content_byte(state.utf8, byte);
      if (!owed) return std::nullopt;
      state.utf8 = *owed;
      return state;
    }

    case kKeyEscape:
      if (is_escapable(byte)) return with_mode(state, kKey);
      return std::nullopt;

    case kStringEscape:
      if (is_escapable(byte)) return with_mode(state, kString);
      return std::nullopt;

    case kPostKey:
      if (byte == ':') return with_mode(state, kPreValue);
      return std::nullopt;

    case kPreValue:
      if (byte == '"') return with_mode(state, kString);
      if (byte == '{') {
        state.depth += 1;
        return with_mode(state, kObjectOpen);
      }
      if (byte == '-') return with_mode(state, kNumberMinus);
      // JSON forbids leading zeros: after a 0 only '.' or the number's end. "01" must be refused,
      // or a complete text would not always parse.
      if (byte == '0') return with_mode(state, kNumberZero);
      if (is_digit(byte)) return with_mode(state, kNumberInteger);
      return std::nullopt;

    case kNumberMinus:
      if (byte == '0') return with_mode(state, kNumberZero);
      if (is_digit(byte)) return with_mode(state, kNumberInteger);
      return std::nullopt;

    case kNumberZero:  // '.', or a digit: "01" (anything else closed the number above)
      if (byte == '.') return with_mode(state, kNumberDot);
      return std::nullopt;

    case kNumberInteger:
      if (is_digit(byte)) return state;
      if (byte == '.') return with_mode(state, kNumberDot);
      return std::nullopt;

    case kNumberDot:
      if (is_digit(byte)) return with_mode(state, kNumberFraction);
      return std::nullopt;

    case kNumberFraction:  // only digits are left here
      return state;

    case kPostValue:
      if (byte == ',') return with_mode(state, kObjectComma);
      if (byte == '}') return close_object(state);
      return std::nullopt;

    case kObjectComma:
      if (byte == '"') return with_mode(state, kKey);
      return std::nullopt;

    case kDone:
      return std::nullopt;  // nothing is ever allowed after the root object
  }
  return std::nullopt;
}

}  // namespace g2c::sampling
