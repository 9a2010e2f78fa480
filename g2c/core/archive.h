// Archives: the one file format of everything the course saves with tensors in it — module 10's
// checkpoints and model files, module 13b's LoRA adapters.
//
// An archive is what PyTorch's `torch.save` writes and `torch.load` reads: a zip holding one
// pickled dict whose tensors are stored beside it. The Python edition reads these files with
// `torch.load`, and read_archive reads the ones it writes.
//   write_archive(path, dict, kind)      dict: str -> int, float, str, bool, None, tensor, list,
//                                        dict (nested the same way)
//   read_archive(path, kind)             -> ArchiveView: typed getters, ValueError naming the key
// Each kind of file is described once (an ArchiveKind): its name in messages, its format tag and
// version, and whether the previous file is kept as `<path>.bak`. The writer and the reader take
// the same description, so the format check and the backup rule are written once, here.
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
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include "g2c/core/torch.h"

namespace g2c {

/// One kind of archive file, as its writer and its reader both see it.
struct ArchiveKind {
  std::string what;  // what messages call the file: "checkpoint", "model file"
  /// Written as the "format" key and checked on reading; empty: no tag (model.pt keeps the Python
  /// edition's layout, which has none).
  std::string format;
  std::int64_t version = 0;  // written as "version" and checked with the format
  std::string remedy;        // how to get a file this build reads: "start the run again"
  /// The writer first keeps the previous readable file as `<path>.bak`, and the reader falls back
  /// to it when `path` is missing or damaged. A rolling file (a checkpoint) wants this; a file
  /// that belongs with others (model.pt beside its manifest) must not have it.
  bool keeps_backup = false;

  /// A file with no tag and no backup (a tool's or a test's own file), called `what` in messages.
  static ArchiveKind plain(std::string what) {
    ArchiveKind kind;
    kind.what = std::move(what);
    return kind;
  }
};

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

/// Writes `dict` (with the kind's "format" and "version" added when it has a format) to `path` in
/// the torch.save format, through a temporary file and a rename. When the kind keeps backups, a
/// readable file already at `path` is first copied to `<path>.bak` (copied, so `path` itself is
/// never missing; an unreadable one is not copied over a good .bak): a crash at any point leaves
/// a complete file at one of the two. A kind without a format writes the dict as it is.
void write_archive(const std::filesystem::path& path, const ArchiveDict& dict,
                   const ArchiveKind& kind = ArchiveKind::plain("file"));

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

/// Reads the archive at `path` and checks its format and version when the kind has a format.
/// For a kind that keeps backups, `<path>.bak` is read when `path` is missing or cannot be read
/// (a truncated or damaged file), and fallback_note says so. ValueError, naming the file, what
/// was wrong and the kind's remedy: nothing readable, something other than a dict, another
/// format or another version.
ArchiveView read_archive(const std::filesystem::path& path, const ArchiveKind& kind);

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

}  // namespace g2c
