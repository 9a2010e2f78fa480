#include "g2c/core/archive.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <utility>

#include <caffe2/serialize/inline_container.h>
#include <fmt/format.h>
#include <torch/csrc/jit/serialization/export.h>
#include <torch/csrc/jit/serialization/pickler.h>
#include <torch/serialize.h>

#include "g2c/core/atomic_file.h"
#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"

namespace g2c {

namespace fs = std::filesystem;

namespace {

constexpr const char* kWriteAgain =
    "Write it again (a file from an older g2c build, a LibTorch archive of param_<i>, cannot be "
    "read either: train or save it again)";

fs::path backup_of(const fs::path& path) {
  return fs::path(path.string() + ".bak");
}

/// What a value is, for messages: "the int 5", "a Float tensor of shape (12, 8)", "a list of 3".
std::string describe(const c10::IValue& value) {
  if (value.isNone()) return "None";
  if (value.isBool()) return value.toBool() ? "True" : "False";
  if (value.isInt()) return fmt::format("the int {}", value.toInt());
  if (value.isDouble()) return fmt::format("the float {}", value.toDouble());
  if (value.isString()) return fmt::format("the str '{}'", value.toStringRef());
  if (value.isTensor()) {
    return fmt::format("a {} tensor of shape {}", c10::toString(value.toTensor().scalar_type()),
                       describe_shape(value.toTensor()));
  }
  if (value.isList()) return fmt::format("a list of {}", value.toListRef().size());
  if (value.isGenericDict()) return fmt::format("a dict of {} keys", value.toGenericDict().size());
  return fmt::format("a {}", value.tagKind());
}

/// Plain data as JSON; nothing for a tensor or anything else JSON cannot hold.
std::optional<nlohmann::json> plain_json(const c10::IValue& value) {
  if (value.isNone()) return nlohmann::json(nullptr);
  if (value.isBool()) return nlohmann::json(value.toBool());
  if (value.isInt()) return nlohmann::json(value.toInt());
  if (value.isDouble()) return nlohmann::json(value.toDouble());
  if (value.isString()) return nlohmann::json(value.toStringRef());
  if (value.isList()) {
    auto array = nlohmann::json::array();
    for (const auto& item : value.toListRef()) {
      auto converted = plain_json(item);
      if (!converted) return std::nullopt;
      array.push_back(std::move(*converted));
    }
    return array;
  }
  if (value.isGenericDict()) {
    auto object = nlohmann::json::object();
    for (const auto& entry : value.toGenericDict()) {
      auto converted = plain_json(entry.value());
      if (!entry.key().isString() || !converted) return std::nullopt;
      object[entry.key().toStringRef()] = std::move(*converted);
    }
    return object;
  }
  return std::nullopt;
}

/// The first sentence of a LibTorch error, without the backtrace and the advice that follows.
std::string first_sentence(const std::string& message) {
  const auto end = message.find(". ");
  auto line = message.substr(0, std::min(end, message.find('\n')));
  return line.empty() ? message : line;
}

/// The dict stored at `path`, or nothing with `problem` saying why it cannot be read.
std::optional<ArchiveDict> try_load(const fs::path& path, std::string& problem) {
  try {
    const std::string bytes = read_file(path);
    const auto value = torch::pickle_load(std::vector<char>(bytes.begin(), bytes.end()));
    if (!value.isGenericDict()) {
      problem = fmt::format("it holds {}, not a dict", describe(value));
      return std::nullopt;
    }
    return value.toGenericDict();
  } catch (const c10::Error& error) {
    problem = first_sentence(error.what_without_backtrace());
  } catch (const std::exception& error) {
    problem = first_sentence(error.what());
  }
  return std::nullopt;
}

}  // namespace

ArchiveDict archive_dict() {
  return ArchiveDict(c10::StringType::get(), c10::AnyType::get());
}

c10::IValue archive_tensors(const std::vector<torch::Tensor>& tensors) {
  c10::impl::GenericList list(c10::AnyType::get());
  list.reserve(tensors.size());
  for (const auto& tensor : tensors) {
    list.push_back(tensor.detach().to(torch::kCPU, /*non_blocking=*/false, /*copy=*/true));
  }
  return list;
}

c10::IValue to_archive_value(const nlohmann::json& value) {
  using Type = nlohmann::json::value_t;
  switch (value.type()) {
    case Type::null:
      return c10::IValue();
    case Type::boolean:
      return value.get<bool>();
    case Type::number_integer:
      return value.get<std::int64_t>();
    case Type::number_unsigned: {
      const auto number = value.get<std::uint64_t>();
      if (number > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        throw ValueError(fmt::format(
            "cannot store {} in an archive: integers must fit in int64; store it as a string",
            number));
      }
      return static_cast<std::int64_t>(number);
    }
    case Type::number_float:
      return value.get<double>();
    case Type::string:
      return value.get<std::string>();
    case Type::array: {
      c10::impl::GenericList list(c10::AnyType::get());
      for (const auto& item : value) list.push_back(to_archive_value(item));
      return list;
    }
    case Type::object: {
      auto dict = archive_dict();
      for (const auto& [key, item] : value.items()) dict.insert(key, to_archive_value(item));
      return dict;
    }
    default:
      throw ValueError(fmt::format("cannot store JSON of type '{}' in an archive; use plain data",
                                   value.type_name()));
  }
}

void write_archive(const fs::path& path, const ArchiveDict& contents, const ArchiveKind& kind) {
  // A dict is a handle: the tags go into a copy, not into the caller's dict.
  auto dict = contents.copy();
  if (!kind.format.empty()) {
    dict.insert_or_assign("format", kind.format);
    dict.insert_or_assign("version", kind.version);
  }
  // torch::pickle_save tags every dict and list with its TorchScript type, which Python's
  // weights_only loader refuses; the same pickler without the tags writes plain containers.
  std::string pickled;
  torch::jit::Pickler pickler(
      [&](const char* data, std::size_t size) { pickled.append(data, size); },
      /*tensor_table=*/nullptr, /*type_renamer=*/nullptr,
      /*memoized_class_types=*/nullptr, /*get_tensor_id=*/nullptr,
      /*tag_aggregates=*/false);
  pickler.protocol();
  pickler.pushIValue(dict);
  pickler.stop();
  std::string bytes;
  caffe2::serialize::PyTorchStreamWriter writer([&](const void* data, std::size_t size) {
    bytes.append(static_cast<const char*>(data), size);
    return size;
  });
  torch::jit::writeArchiveAndTensors("data", pickled.data(), pickled.size(), pickler.tensorData(),
                                     writer);
  writer.writeEndOfFile();

  // A file at `path` that cannot be read (the one a run resumed from its .bak because of it) is
  // not copied over the good .bak.
  std::string problem;
  if (kind.keeps_backup && fs::exists(path) && try_load(path, problem)) {
    write_file_atomic(backup_of(path), read_file(path));
  }
  write_file_atomic(path, bytes);
}

namespace {

/// The view, once its format and version are the kind's (when the kind has a format).
ArchiveView checked(ArchiveView view, const ArchiveKind& kind) {
  if (kind.format.empty()) return view;
  const auto where = view.path().string();
  if (!view.contains("format") || view.string("format") != kind.format) {
    throw ValueError(fmt::format("{} is not a g2c {} (it has no format '{}'); {}", where, kind.what,
                                 kind.format, kind.remedy));
  }
  if (const auto version = view.integer("version"); version != kind.version) {
    throw ValueError(fmt::format("{} is a {} of version {}, this build reads version {}; {}", where,
                                 kind.what, version, kind.version, kind.remedy));
  }
  return view;
}

}  // namespace

ArchiveView read_archive(const fs::path& path, const ArchiveKind& kind) {
  const auto& what = kind.what;
  std::string problem;
  if (fs::exists(path)) {
    if (auto dict = try_load(path, problem)) {
      return checked(ArchiveView(std::move(*dict), path, what), kind);
    }
  }
  const bool missing = problem.empty();
  if (!kind.keeps_backup) {
    if (missing) {
      throw ValueError(
          fmt::format("no {} at {}; check the path, or write one first", what, path.string()));
    }
    throw ValueError(
        fmt::format("cannot read {} {}: {}. {}", what, path.string(), problem, kWriteAgain));
  }
  const fs::path backup = backup_of(path);
  if (!fs::exists(backup)) {
    if (missing) {
      throw ValueError(fmt::format("no {} at {} (nor {}); check the path, or write one first", what,
                                   path.string(), backup.string()));
    }
    throw ValueError(fmt::format("cannot read {} {}: {}; and there is no {} to fall back to. {}",
                                 what, path.string(), problem, backup.string(), kWriteAgain));
  }
  std::string backup_problem;
  auto dict = try_load(backup, backup_problem);
  if (!dict) {
    throw ValueError(fmt::format("cannot read {} {} ({}) nor its backup {} ({}). {}", what,
                                 path.string(), missing ? "missing" : problem, backup.string(),
                                 backup_problem, kWriteAgain));
  }
  ArchiveView view(std::move(*dict), backup, what);
  view.fallback_note = fmt::format(
      "{} {} {}; read the previous one, {}", what, path.string(),
      missing ? "is missing" : fmt::format("cannot be read ({})", problem), backup.string());
  return checked(std::move(view), kind);
}

ArchiveView::ArchiveView(ArchiveDict dict, fs::path path, std::string what, std::string prefix)
    : dict_(std::move(dict)),
      path_(std::move(path)),
      what_(std::move(what)),
      prefix_(std::move(prefix)) {}

void ArchiveView::wrong(const std::string& key, std::string_view expected,
                        const c10::IValue& found) const {
  throw ValueError(
      fmt::format("{} {}: '{}{}' should be {}, found {}; the file is not one g2c "
                  "(or the Python edition) wrote, or it was written for something "
                  "else",
                  what_, path_.string(), prefix_, key, expected, describe(found)));
}

const c10::IValue& ArchiveView::at(const std::string& key, std::string_view expected) const {
  const auto found = dict_.find(key);
  if (found == dict_.end()) {
    throw ValueError(
        fmt::format("{} {} has no '{}{}' ({} expected); the file is not one g2c (or "
                    "the Python edition) wrote, or it was written for something else",
                    what_, path_.string(), prefix_, key, expected));
  }
  return found->value();
}

bool ArchiveView::contains(const std::string& key) const {
  return dict_.contains(key);
}

std::int64_t ArchiveView::integer(const std::string& key) const {
  const auto& value = at(key, "an int");
  if (!value.isInt()) wrong(key, "an int", value);
  return value.toInt();
}

std::string ArchiveView::string(const std::string& key) const {
  const auto& value = at(key, "a str");
  if (!value.isString()) wrong(key, "a str", value);
  return value.toStringRef();
}

torch::Tensor ArchiveView::tensor(const std::string& key) const {
  const auto& value = at(key, "a tensor");
  if (!value.isTensor()) wrong(key, "a tensor", value);
  return value.toTensor();
}

std::vector<torch::Tensor> ArchiveView::tensors(const std::string& key) const {
  const auto& value = at(key, "a list of tensors");
  if (!value.isList()) wrong(key, "a list of tensors", value);
  std::vector<torch::Tensor> out;
  for (const auto& item : value.toListRef()) {
    if (!item.isTensor()) wrong(key, "a list of tensors only", item);
    out.push_back(item.toTensor());
  }
  return out;
}

ArchiveView ArchiveView::dict(const std::string& key) const {
  const auto& value = at(key, "a dict");
  if (!value.isGenericDict()) wrong(key, "a dict", value);
  return ArchiveView(value.toGenericDict(), path_, what_, prefix_ + key + "/");
}

nlohmann::json ArchiveView::json(const std::string& key) const {
  const auto& value = at(key, "plain data");
  auto converted = plain_json(value);
  if (!converted) wrong(key, "plain data (numbers, strings, lists, dicts)", value);
  return *converted;
}

void check_fit(const std::vector<torch::Tensor>& saved, const std::vector<torch::Tensor>& targets,
               std::string_view what, const ArchiveView& from, std::string_view hint) {
  if (saved.size() != targets.size()) {
    throw ValueError(fmt::format("{} {} holds {} {} tensors where {} are expected; {}", from.what(),
                                 from.path().string(), saved.size(), what, targets.size(), hint));
  }
  for (std::size_t i = 0; i < saved.size(); ++i) {
    if (saved[i].sizes() != targets[i].sizes()) {
      throw ValueError(fmt::format("{} {}: {} {} has shape {} where {} is expected; {}",
                                   from.what(), from.path().string(), what, i,
                                   describe_shape(saved[i]), describe_shape(targets[i]), hint));
    }
    if (!saved[i].is_floating_point()) {
      throw ValueError(fmt::format(
          "{} {}: {} {} holds {} values where floating-point ones are "
          "expected; {}",
          from.what(), from.path().string(), what, i, c10::toString(saved[i].scalar_type()), hint));
    }
  }
}

void copy_into(const std::vector<torch::Tensor>& saved, const std::vector<torch::Tensor>& targets) {
  torch::NoGradGuard no_grad;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    targets[i].copy_(saved[i].to(targets[i].device(), targets[i].scalar_type()));
  }
}

}  // namespace g2c
