#pragma once

// A perftest's command line, parsed by CLI11 inside this library only: CLI11 is all inline, and
// each file that declared its options with it compiled CLI11's parser again (8-10 s of CPU).

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace meshcomm::perf {

/// The options of one program, each bound to a variable that holds its default.
class CommandLine {
 public:
  /// One declared option: what --help shows of it and which values it takes.
  class Option {
   public:
    /// --help shows the bound variable's value as the default.
    Option& show_default();
    /// Only values from `min` to `max` (both included).
    template <typename Number>
    Option& range(Number min, Number max) {
      if constexpr (std::is_floating_point_v<Number>) {
        return range_of_reals(static_cast<double>(min), static_cast<double>(max));
      } else {
        return range_of_integers(static_cast<long long>(min), static_cast<long long>(max));
      }
    }
    /// Only values above zero.
    Option& positive();
    /// Only one of these words.
    Option& one_of(std::vector<std::string> words);
    /// A list option whose one argument may hold several items split at `separator`.
    Option& split_at(char separator);
    /// `check` returns what is wrong with a value, or an empty string; `shape` is the value's
    /// form as --help shows it.
    Option& check(std::function<std::string(const std::string&)> check, std::string shape);

   private:
    friend class CommandLine;
    Option& range_of_integers(long long min, long long max);
    Option& range_of_reals(double min, double max);
    explicit Option(CLI::Option* option) noexcept : option_(option) {}
    CLI::Option* option_;
  };

  /// A program whose --help starts with `description`.
  explicit CommandLine(std::string description);
  CommandLine(const CommandLine&) = delete;
  CommandLine& operator=(const CommandLine&) = delete;
  ~CommandLine();

  /// `names` as CLI11 takes them ("-n,--iters"); the value lands in `value`.
  Option option(const std::string& names, int& value, const std::string& help);
  Option option(const std::string& names, unsigned& value, const std::string& help);
  Option option(const std::string& names, long& value, const std::string& help);
  Option option(const std::string& names, unsigned long& value, const std::string& help);
  Option option(const std::string& names, double& value, const std::string& help);
  Option option(const std::string& names, std::string& value, const std::string& help);
  Option option(const std::string& names, std::vector<std::string>& value, const std::string& help);
  /// A switch: `value` becomes true when it is given.
  void flag(const std::string& names, bool& value, const std::string& help);

  /// Parses `argv`. Nothing when the program goes on; otherwise the code to exit with, after
  /// --help (0) or a wrong argument, which `report` prints (one rank of many prints, the others
  /// return 2 quietly for a wrong argument).
  std::optional<int> parse(int argc, char** argv, bool report = true);

 private:
  std::unique_ptr<CLI::App> app_;
};

}  // namespace meshcomm::perf
