// fmt's own implementation, compiled once for the LibTorch side of the course (what fmt's
// src/format.cc does in a normal fmt build).
//
// The torch package ships fmt headers of its own (a newer fmt than the system's). Wherever
// LibTorch's include folder comes first they shadow the system's, so every LibTorch target compiles
// against them and links this file for the functions they declare; the targets without LibTorch
// (the tokenizer, g2c_core) use the system's fmt and its library. The two live in different inline
// namespaces (e.g. fmt::v12 and fmt::v9), so they never clash. Header-only fmt compiled these few
// thousand lines again in every translation unit: 2.6 s of a 17.5 s exercise file, measured with
// GCC 12.
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {

// The instantiations fmt/format.h declares extern.
template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto decimal_point_impl(locale_ref) -> char;
template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<wchar_t>;
template FMT_API auto decimal_point_impl(locale_ref) -> wchar_t;

}  // namespace detail
FMT_END_NAMESPACE
