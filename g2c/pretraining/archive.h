// Module 10 — archives: the one file format of checkpoints and model files.
//
// An archive is what PyTorch's `torch.save` writes and `torch.load` reads: a zip holding one
// pickled dict whose tensors are stored beside it. The Python edition reads these files with
// `torch.load`, and read_archive reads the ones it writes.
//   write_archive(path, dict)            dict: str -> int, float, str, bool, None, tensor, list,
//                                        dict (nested the same way)
//   read_archive(path, "checkpoint")     -> ArchiveView: typed getters, ValueError naming the key
//
// subtle: the pickle carries no TorchScript type tags (torch::pickle_save adds them), only plain
// dicts, lists and tensors, so that `torch.load(path, weights_only=True)`, the loader that cannot
// run code, accepts the file.
//
// A reader checks before it changes anything: read everything into locals, check it all
// (check_fit for tensors), and only then copy (copy_into), so a rejected file leaves what it was
// meant for as it was.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>
#include "g2c/core/torch.h"

namespace g2c::pretraining {

/// A dict being written: string keys, values as listed above.
using ArchiveDict = c10::impl::GenericDict;

/// An empty dict for write_archive.
ArchiveDict archive_dict();

/// Tensors as an archive list of detached CPU copies. Example:
/// archive_tensors(model->parameters()).
c10::IValue archive_tensors(const std::vector<torch::Tensor>& tensors);

/// Plain JSON data as an archive value: null -> None, numbers, strings, arrays -> lists, objects
/// -> dicts. ValueError for an unsigned integer beyond the int64 range.
/// Example: {"embedding_dim": 128, "hidden_dim": 512} -> a dict of two ints.
c10::IValue to_archive_value(const nlohmann::json& value);

/// Writes `dict` to `path` in the torch.save format, through a temporary file and a rename. With
/// `keep_backup`, a readable file already at `path` is first copied to `<path>.bak` (copied, so
/// `path` itself is never missing; an unreadable one is not copied over a good .bak): a crash at
/// any point leaves a complete file at one of the two.
void write_archive(const std::filesystem::path& path, const ArchiveDict& dict,
                   bool keep_backup = false);

/// A dict read from an archive. Every getter throws a ValueError naming the file, the key, what
/// it expected and what it found.
class ArchiveView {
 public:
  ArchiveView(ArchiveDict dict, std::filesystem::path path, std::string what,
              std::string prefix = "");

  /// The file that was read: `<path>.bak` when read_archive fell back to it.
  const std::filesystem::path& path() const { return path_; }
  /// "checkpoint", "model file": what the messages call the file.
  const std::string& what() const { return what_; }

  bool contains(const std::string& key) const;
  std::int64_t integer(const std::string& key) const;
  std::string string(const std::string& key) const;
  torch::Tensor tensor(const std::string& key) const;
  /// A list whose items are all tensors.
  std::vector<torch::Tensor> tensors(const std::string& key) const;
  /// A nested dict, as a view of its own (its messages name the key path, e.g. 'history/lr').
  ArchiveView dict(const std::string& key) const;
  /// A value of plain data (no tensors) as JSON: None -> null, lists -> arrays, dicts -> objects.
  nlohmann::json json(const std::string& key) const;

  /// Why `<path>.bak` was read instead of the file asked for; empty when it was not.
  std::string fallback_note;

 private:
  const c10::IValue& at(const std::string& key, std::string_view expected) const;
  [[noreturn]] void wrong(const std::string& key, std::string_view expected,
                          const c10::IValue& found) const;

  ArchiveDict dict_;
  std::filesystem::path path_;
  std::string what_;
  std::string prefix_;
};

/// Reads the archive at `path`, or `<path>.bak` when `path` is missing or cannot be read (a
/// truncated or damaged file), saying so in fallback_note. ValueError when neither can be read
/// (naming both and why) or the file holds something other than a dict. `what` names the file
/// in messages ("checkpoint", "model file").
ArchiveView read_archive(const std::filesystem::path& path, const std::string& what);

/// ValueError unless `saved` can be copied into `targets` one for one: as many tensors, the same
/// shapes, floating-point values. The message names `what` ("model parameter", "AdamW m"), the
/// index, both shapes and `hint` (how to fix it).
/// Example: saved (12, 8) for a target (12, 16) -> "... model parameter 0 has shape (12, 8), but
/// this model's has shape (12, 16); <hint>".
void check_fit(const std::vector<torch::Tensor>& saved, const std::vector<torch::Tensor>& targets,
               std::string_view what, const ArchiveView& from, std::string_view hint);

/// Copies saved[i] into targets[i] in place, on the target's device and dtype, without autograd.
/// Call it after check_fit.
void copy_into(const std::vector<torch::Tensor>& saved, const std::vector<torch::Tensor>& targets);

}  // namespace g2c::pretraining
