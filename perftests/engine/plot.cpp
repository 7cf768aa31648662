#include "plot.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include <fmt/format.h>

namespace meshcomm::perf {

namespace {

bool is_svg(const std::string& path) { return path.size() > 4 && path.substr(path.size() - 4) == ".svg"; }

/// Runs gnuplot on `script`; empty on success, else what went wrong.
std::string run_gnuplot(const std::string& script) {
  FILE* gnuplot = popen("gnuplot 2>&1", "w");
  if (gnuplot == nullptr) return "cannot start gnuplot (install gnuplot-nox)";
  std::fputs(script.c_str(), gnuplot);
  const int status = pclose(gnuplot);
  if (status != 0) return fmt::format("gnuplot exited with status {} (is gnuplot-nox installed?)", status);
  return {};
}

std::string header(const std::string& path, const PlotSpec& spec) {
  return fmt::format("set terminal {} size 960,600\nset output '{}'\nset title '{}'\nset xlabel '{}'\nset ylabel '{}'\n"
                     "set termoption noenhanced\nset grid\n",
                     is_svg(path) ? "svg" : "png", path, spec.title, spec.x_label, spec.y_label);
}

}  // namespace

std::string plot_stacked_bars(const std::string& path, const PlotSpec& spec, const StackedBars& bars) {
  const std::string data_path = path + ".dat";
  {
    std::ofstream data(data_path);
    if (!data) return "cannot write " + data_path;
    data << "label";
    for (const auto& title : bars.part_titles) data << " \"" << title << "\"";
    data << "\n";
    for (std::size_t i = 0; i < bars.labels.size(); ++i) {
      data << "\"" << bars.labels[i] << "\"";
      for (const auto& part : bars.parts) data << " " << part[i];
      data << "\n";
    }
  }
  std::string script = header(path, spec) +
                       "set key outside right top\nset style data histograms\nset style histogram rowstacked\n"
                       "set style fill solid 0.85 border -1\nset boxwidth 0.7\nset xtics rotate by -30\nplot ";
  for (std::size_t k = 0; k < bars.part_titles.size(); ++k) {
    script += fmt::format("{}'{}' using {}{} title columnheader", k == 0 ? "" : ", ", data_path, k + 2,
                          k == 0 ? ":xtic(1)" : "");
  }
  return run_gnuplot(script + "\n");
}

std::string plot_lines(const std::string& path, const PlotSpec& spec, const std::vector<PlotSeries>& series) {
  const std::string data_path = path + ".dat";
  {
    std::ofstream data(data_path);
    if (!data) return "cannot write " + data_path;
    for (const auto& line : series) {
      data << "# " << line.title << "\n";
      for (std::size_t i = 0; i < line.x.size(); ++i) data << line.x[i] << " " << line.y[i] << "\n";
      data << "\n\n";  // gnuplot data blocks, addressed by index
    }
  }
  std::string script = header(path, spec) + fmt::format("set key left top\n{}{}plot ",
                                                          spec.log_x ? "set logscale x 2\n" : "",
                                                          spec.log_y ? "set logscale y 10\n" : "");
  for (std::size_t i = 0; i < series.size(); ++i) {
    script += fmt::format("{}'{}' index {} using 1:2 with linespoints lw 2 title '{}'", i == 0 ? "" : ", ", data_path,
                          i, series[i].title);
  }
  return run_gnuplot(script + "\n");
}

}  // namespace meshcomm::perf
