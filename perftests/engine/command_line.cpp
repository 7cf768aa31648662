#include "command_line.hpp"

#include <CLI/CLI.hpp>

#include <utility>

namespace meshcomm::perf {

CommandLine::Option& CommandLine::Option::show_default() {
  option_->capture_default_str();
  return *this;
}

CommandLine::Option& CommandLine::Option::range_of_integers(long long min, long long max) {
  option_->check(CLI::Range(min, max));
  return *this;
}

CommandLine::Option& CommandLine::Option::range_of_reals(double min, double max) {
  option_->check(CLI::Range(min, max));
  return *this;
}

CommandLine::Option& CommandLine::Option::positive() {
  option_->check(CLI::PositiveNumber);
  return *this;
}

CommandLine::Option& CommandLine::Option::one_of(std::vector<std::string> words) {
  option_->check(CLI::IsMember(std::move(words)));
  return *this;
}

CommandLine::Option& CommandLine::Option::split_at(char separator) {
  option_->delimiter(separator);
  return *this;
}

CommandLine::Option& CommandLine::Option::check(std::function<std::string(const std::string&)> check,
                                                std::string shape) {
  option_->check(std::move(check), std::move(shape));
  return *this;
}

CommandLine::CommandLine(std::string description) : app_(std::make_unique<CLI::App>(std::move(description))) {}

CommandLine::~CommandLine() = default;

CommandLine::Option CommandLine::option(const std::string& names, int& value, const std::string& help) {
  return Option(app_->add_option(names, value, help));
}

CommandLine::Option CommandLine::option(const std::string& names, unsigned& value, const std::string& help) {
  return Option(app_->add_option(names, value, help));
}

CommandLine::Option CommandLine::option(const std::string& names, long& value, const std::string& help) {
  return Option(app_->add_option(names, value, help));
}

CommandLine::Option CommandLine::option(const std::string& names, unsigned long& value, const std::string& help) {
  return Option(app_->add_option(names, value, help));
}

CommandLine::Option CommandLine::option(const std::string& names, double& value, const std::string& help) {
  return Option(app_->add_option(names, value, help));
}

CommandLine::Option CommandLine::option(const std::string& names, std::string& value, const std::string& help) {
  return Option(app_->add_option(names, value, help));
}

CommandLine::Option CommandLine::option(const std::string& names, std::vector<std::string>& value,
                                        const std::string& help) {
  return Option(app_->add_option(names, value, help));
}

void CommandLine::flag(const std::string& names, bool& value, const std::string& help) {
  app_->add_flag(names, value, help);
}

std::optional<int> CommandLine::parse(int argc, char** argv, bool report) {
  try {
    app_->parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    if (report) return app_->exit(error);
    return error.get_exit_code() == 0 ? 0 : 2;
  }
  return std::nullopt;
}

}  // namespace meshcomm::perf
