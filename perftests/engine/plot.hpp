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

/// Draws `series` with gnuplot into `path` (PNG, or SVG when the path ends in .svg). Returns an
/// empty string on success, else what went wrong (gnuplot missing, or its error).
std::string plot_lines(const std::string& path, const PlotSpec& spec, const std::vector<PlotSeries>& series);

}  // namespace meshcomm::perf
