// Figure descriptions for scripts/plot.py, which draws what a result file's "figures" array
// describes (its docstring lists every key). Values that are JSON pointers ("/runs/0/loss") point
// into the same file, so no curve is written twice.
//
//   result["figures"] = figures({
//       Figure::line("loss.png", "Training loss", "step", "cross-entropy")
//           .add(Series("train", "/run/steps", "/run/train_loss"))
//           .add(Series("held-out", "/run/val_steps", "/run/val_loss").marker("o"))
//           .hline(std::log(2048.0), "ln V"),
//       Figure::heatmaps("attention.png", "Attention of each head").columns(2)
//           .add(Panel("/heads/0/weights").title("head 0").range(0.0, 1.0))});
//
// Each builder holds the JSON it describes; a key is written only when it is set.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace g2c::exercises {

namespace detail {

// The JSON a builder has built so far; every setter adds one key and returns the builder.
template <typename Self>
class FigureJson {
 public:
  const nlohmann::json& json() const { return json_; }

 protected:
  Self& set(const char* key, nlohmann::json value) {
    json_[key] = std::move(value);
    return static_cast<Self&>(*this);
  }
  Self& append(const char* key, nlohmann::json value) {
    json_[key].push_back(std::move(value));
    return static_cast<Self&>(*this);
  }
  nlohmann::json json_ = nlohmann::json::object();
};

}  // namespace detail

/// One curve (line), set of points (scatter) or group of bars (bar). x and y are JSON pointers or
/// the values themselves; without x, y is drawn against 0, 1, 2, ... An empty label has no legend
/// entry.
class Series : public detail::FigureJson<Series> {
 public:
  Series(const std::string& label, nlohmann::json x, nlohmann::json y) {
    if (!label.empty()) json_["label"] = label;
    if (!x.is_null()) json_["x"] = std::move(x);
    json_["y"] = std::move(y);
  }
  Series& style(const std::string& line_style) { return set("style", line_style); }  // "--"
  Series& marker(const std::string& marker) { return set("marker", marker); }        // "o"
  Series& color(const std::string& color) { return set("color", color); }            // "C1"
  Series& size(double points) { return set("size", points); }  // of a scatter's markers
};

/// Points drawn over a heatmap panel (x and y as for a Series).
class Points : public detail::FigureJson<Points> {
 public:
  Points(nlohmann::json x, nlohmann::json y) {
    json_["x"] = std::move(x);
    json_["y"] = std::move(y);
  }
  Points& label(const std::string& label) { return set("label", label); }
  Points& color(nlohmann::json color) { return set("color", std::move(color)); }  // or one each
  Points& marker(const std::string& marker) { return set("marker", marker); }
  Points& size(double points) { return set("size", points); }
  Points& alpha(double alpha) { return set("alpha", alpha); }
  Points& edgecolor(const std::string& color) { return set("edgecolor", color); }
};

/// One heatmap of a heatmaps figure: `matrix` is a JSON pointer to rows of values, or the rows.
class Panel : public detail::FigureJson<Panel> {
 public:
  explicit Panel(nlohmann::json matrix) { json_["matrix"] = std::move(matrix); }
  Panel& title(const std::string& title) { return set("title", title); }
  Panel& xlabel(const std::string& label) { return set("xlabel", label); }
  Panel& ylabel(const std::string& label) { return set("ylabel", label); }
  Panel& cmap(const std::string& colormap) { return set("cmap", colormap); }
  Panel& range(double vmin, double vmax) {  // the colour scale's ends
    set("vmin", vmin);
    return set("vmax", vmax);
  }
  Panel& alpha(double alpha) { return set("alpha", alpha); }
  Panel& origin(const std::string& origin) { return set("origin", origin); }  // "lower"
  Panel& extent(nlohmann::json extent) { return set("extent", std::move(extent)); }
  Panel& aspect(const std::string& aspect) { return set("aspect", aspect); }
  Panel& no_colorbar() { return set("colorbar", false); }
  Panel& xticklabels(nlohmann::json labels) { return set("xticklabels", std::move(labels)); }
  Panel& yticklabels(nlohmann::json labels) { return set("yticklabels", std::move(labels)); }
  Panel& fontsize(double points) { return set("fontsize", points); }  // of the tick labels
  Panel& note(const std::string& text) { return set("note", text); }  // a corner text
  Panel& legend_loc(const std::string& where) { return set("legend_loc", where); }
  /// Level lines at `levels`, of this panel's matrix or of `matrix` when given (`width`: of the
  /// line, 0 for plot.py's default).
  Panel& contour(std::vector<double> levels, const std::string& color = "",
                 nlohmann::json matrix = nullptr, double width = 0) {
    nlohmann::json contour = {{"levels", std::move(levels)}};
    if (!color.empty()) contour["color"] = color;
    if (width > 0) contour["width"] = width;
    if (!matrix.is_null()) contour["matrix"] = std::move(matrix);
    return append("contours", std::move(contour));
  }
  Panel& add(const Points& points) { return append("points", points.json()); }
};

/// One PNG, written next to the result file as `file`.
class Figure : public detail::FigureJson<Figure> {
 public:
  static Figure line(const std::string& file, const std::string& title, const std::string& xlabel,
                     const std::string& ylabel) {
    return Figure(file, "line", title).axes(xlabel, ylabel);
  }
  static Figure scatter(const std::string& file, const std::string& title,
                        const std::string& xlabel, const std::string& ylabel) {
    return Figure(file, "scatter", title).axes(xlabel, ylabel);
  }
  /// Grouped bars: one group per x label, one bar per series.
  static Figure bar(const std::string& file, const std::string& title, const std::string& xlabel,
                    const std::string& ylabel) {
    return Figure(file, "bar", title).axes(xlabel, ylabel);
  }
  static Figure heatmaps(const std::string& file, const std::string& title) {
    return Figure(file, "heatmaps", title);
  }

  Figure& add(const Series& series) { return append("series", series.json()); }
  Figure& add(const Panel& panel) { return append("panels", panel.json()); }
  /// A reference line across the plot (dashed gray unless told otherwise).
  Figure& hline(double y, const std::string& label, const std::string& color = "",
                const std::string& style = "") {
    return append("hlines", reference_line("y", y, label, color, style));
  }
  Figure& vline(double x, const std::string& label, const std::string& color = "",
                const std::string& style = "") {
    return append("vlines", reference_line("x", x, label, color, style));
  }
  Figure& logx() { return set("logx", true); }
  Figure& logy() { return set("logy", true); }
  Figure& aspect(const std::string& aspect) { return set("aspect", aspect); }      // "equal"
  Figure& rotate_labels(double degrees) { return set("rotate_labels", degrees); }  // bar labels
  Figure& width(double inches) { return set("width", inches); }                    // default 7
  Figure& height(double inches) { return set("height", inches); }                  // default 4.5
  Figure& columns(int columns) { return set("columns", columns); }  // heatmap panels per row
  Figure& cmap(const std::string& colormap) { return set("cmap", colormap); }  // every panel's
  Figure& panel_size(double width, double height) {
    set("panel_width", width);
    return set("panel_height", height);
  }

 private:
  Figure(const std::string& file, const std::string& kind, const std::string& title) {
    json_ = {{"file", file}, {"kind", kind}, {"title", title}};
  }
  Figure& axes(const std::string& xlabel, const std::string& ylabel) {
    if (!xlabel.empty()) json_["xlabel"] = xlabel;
    if (!ylabel.empty()) json_["ylabel"] = ylabel;
    return *this;
  }
  static nlohmann::json reference_line(const char* axis, double at, const std::string& label,
                                       const std::string& color, const std::string& style) {
    nlohmann::json line = {{axis, at}, {"label", label}};
    if (!color.empty()) line["color"] = color;
    if (!style.empty()) line["style"] = style;
    return line;
  }
};

/// The result file's "figures" array.
inline nlohmann::json figures(const std::vector<Figure>& list) {
  nlohmann::json array = nlohmann::json::array();
  for (const Figure& figure : list) array.push_back(figure.json());
  return array;
}

}  // namespace g2c::exercises
