#include "meshcomm/mesh_spec.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "meshcomm/error.hpp"

namespace meshcomm {

namespace {

constexpr std::string_view kValidForms =
    "give comma-separated sizes for dp,fsdp,tp,sp such as '1,-1,4,1', or named sizes such as 'dp:2,fsdp:-1,tp:4'; "
    "sizes are >= 1, and at most one may be -1 (inferred from the world size)";

Error parse_error(std::string_view text, const std::string& what) {
  return Error(ErrorCode::invalid_argument, fmt::format("mesh dims '{}': {}; {}", text, what, kValidForms),
               {.operation = "MeshSpec::parse"});
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return text;
}

bool is_identifier(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name.front()))) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

std::vector<std::string_view> split_items(std::string_view text) {
  std::vector<std::string_view> items;
  std::size_t start = 0;
  while (true) {
    const auto comma = text.find(',', start);
    items.push_back(trim(text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start)));
    if (comma == std::string_view::npos) return items;
    start = comma + 1;
  }
}

std::vector<int> divisors(int n) {
  std::vector<int> result;
  for (int d = 1; d <= n; ++d) {
    if (n % d == 0) result.push_back(d);
  }
  return result;
}

}  // namespace

MeshSpec MeshSpec::parse(std::string_view text) {
  if (trim(text).empty()) throw parse_error(text, "the text is empty");
  const auto items = split_items(text);
  const bool named = items.front().find(':') != std::string_view::npos;
  if (!named && items.size() > default_axis_names.size()) {
    throw parse_error(text, fmt::format("{} sizes were given but a bare list names only {} axes ({}); name the axes "
                                        "as 'name:size' to use more",
                                        items.size(), default_axis_names.size(), fmt::join(default_axis_names, ",")));
  }
  MeshSpec spec;
  spec.text_ = std::string(text);
  int inferred_axes = 0;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const auto item = items[i];
    const auto position = fmt::format("item {}", i + 1);
    if (item.empty()) throw parse_error(text, position + " is empty");
    const auto colon = item.find(':');
    if ((colon != std::string_view::npos) != named) {
      throw parse_error(text, fmt::format("{} '{}' mixes named and unnamed sizes; name every axis or none", position,
                                          item));
    }
    std::string_view name = named ? trim(item.substr(0, colon)) : default_axis_names[i];
    std::string_view size_text = named ? trim(item.substr(colon + 1)) : item;
    if (!is_identifier(name)) {
      throw parse_error(text, fmt::format("{} '{}' has {} as its axis name; names are letters, digits and '_', not "
                                          "starting with a digit",
                                          position, item, name.empty() ? "nothing" : fmt::format("'{}'", name)));
    }
    int size = 0;
    const auto [end, error] = std::from_chars(size_text.data(), size_text.data() + size_text.size(), size);
    if (error != std::errc() || end != size_text.data() + size_text.size()) {
      throw parse_error(text, fmt::format("{} '{}' has size '{}', which is not an integer", position, item, size_text));
    }
    if (size == 0 || size < -1) {
      throw parse_error(text, fmt::format("axis '{}' has size {}", name, size));
    }
    if (spec.find(name)) throw parse_error(text, fmt::format("axis '{}' is named twice", name));
    if (size == -1 && ++inferred_axes > 1) {
      throw parse_error(text, "more than one size is -1; only one axis can be inferred");
    }
    spec.axes_.push_back({std::string(name), size});
  }
  return spec;
}

MeshSpec MeshSpec::resolved(int world_size) const {
  auto fail = [&](const std::string& what) {
    return Error(ErrorCode::invalid_argument, fmt::format("mesh dims '{}': {}", text_, what),
                 {.operation = "MeshSpec::resolved"});
  };
  if (world_size < 1) throw fail(fmt::format("the world size {} must be at least 1", world_size));
  const long long known = known_product();
  MeshSpec result = *this;
  if (is_resolved()) {
    if (known != world_size) {
      throw fail(fmt::format("the sizes multiply to {} but the world has {} ranks; give sizes whose product is {}, or "
                             "-1 for one axis to infer it",
                             known, world_size, world_size));
    }
    return result;
  }
  if (known > world_size || world_size % known != 0) {
    throw fail(fmt::format("the world size {} is not divisible by {}, the product of the known sizes; the known sizes "
                           "must multiply to one of {}",
                           world_size, known, fmt::join(divisors(world_size), ", ")));
  }
  for (auto& axis : result.axes_) {
    if (axis.size == -1) axis.size = static_cast<int>(world_size / known);
  }
  return result;
}

std::optional<std::size_t> MeshSpec::find(std::string_view name) const noexcept {
  for (std::size_t i = 0; i < axes_.size(); ++i) {
    if (axes_[i].name == name) return i;
  }
  return std::nullopt;
}

bool MeshSpec::is_resolved() const noexcept {
  return std::none_of(axes_.begin(), axes_.end(), [](const MeshAxis& axis) { return axis.size == -1; });
}

int MeshSpec::known_product() const noexcept {
  long long product = 1;
  for (const auto& axis : axes_) {
    if (axis.size > 0) product *= axis.size;
    if (product > (1LL << 30)) return 1 << 30;
  }
  return static_cast<int>(product);
}

std::vector<std::string_view> split_axis_list(std::string_view text) {
  std::vector<std::string_view> names;
  for (auto item : split_items(text)) {
    if (!item.empty()) names.push_back(item);
  }
  return names;
}

std::string MeshSpec::to_string() const {
  std::vector<std::string> parts;
  for (const auto& axis : axes_) parts.push_back(fmt::format("{}:{}", axis.name, axis.size));
  return fmt::format("{}", fmt::join(parts, ","));
}

}  // namespace meshcomm
