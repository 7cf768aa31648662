#pragma once

#include <string>
#include <vector>

namespace meshcomm::perf {

/// One line of a plot: y against x.
struct PlotSeries {
  std::string title;
  std::vector<double> x;
  std::vector<double> y;
};

/// What a plot shows.
struct PlotSpec {
  std::string title;
  std::string x_label;
  std::string y_label;
  bool log_x = true;
  bool log_y = true;
};

/// Bars of several stacked parts, one bar per label: `parts[k][i]` is part k of bar i.
struct StackedBars {
  std::vector<std::string> labels;
  std::vector<std::string> part_titles;
  std::vector<std::vector<double>> parts;
};

/// Draws `bars` stacked, bar by bar, with gnuplot into `path` (PNG, or SVG for .svg); `spec`'s
/// log flags are ignored. Returns an empty string on success, else what went wrong.
std::string plot_stacked_bars(const std::string& path, const PlotSpec& spec, const StackedBars& bars);

/// Draws `series` with gnuplot into `path` (PNG, or SVG when the path ends in .svg). Returns an
/// empty string on success, else what went wrong (gnuplot missing, or its error).
std::string plot_lines(const std::string& path, const PlotSpec& spec, const std::vector<PlotSeries>& series);

}  // namespace meshcomm::perf
