#include "plot.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include <fmt/format.h>

namespace meshcomm::perf {

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
  const bool svg = path.size() > 4 && path.substr(path.size() - 4) == ".svg";
  std::string script = fmt::format(
      "set terminal {} size 960,600\nset output '{}'\nset title '{}'\nset xlabel '{}'\nset ylabel '{}'\n"
      "set termoption noenhanced\nset grid\nset key left top\n{}{}plot ",
      svg ? "svg" : "png", path, spec.title, spec.x_label, spec.y_label, spec.log_x ? "set logscale x 2\n" : "",
      spec.log_y ? "set logscale y 10\n" : "");
  for (std::size_t i = 0; i < series.size(); ++i) {
    script += fmt::format("{}'{}' index {} using 1:2 with linespoints lw 2 title '{}'", i == 0 ? "" : ", ", data_path,
                          i, series[i].title);
  }
  script += "\n";
  FILE* gnuplot = popen("gnuplot 2>&1", "w");
  if (gnuplot == nullptr) return "cannot start gnuplot (install gnuplot-nox)";
  std::fputs(script.c_str(), gnuplot);
  const int status = pclose(gnuplot);
  if (status != 0) return fmt::format("gnuplot exited with status {} (is gnuplot-nox installed?)", status);
  return {};
}

}  // namespace meshcomm::perf
