// Plugin options over Boost.JSON (kept out of the public header).
#include "kiln/sdk/plugin_support.hpp"

#include <boost/json.hpp>

#include <set>

namespace kiln::sdk {

namespace json = boost::json;

struct Options::Impl {
  json::object object;
  mutable std::set<std::string, std::less<>> read;
  std::string path;  // "" at top level, "key." for nested objects (error messages)
};

namespace {

[[noreturn]] void type_error(const std::string& path, std::string_view key, std::string_view want,
                             const json::value& got) {
  std::string kind;
  switch (got.kind()) {
    case json::kind::null: kind = "null"; break;
    case json::kind::bool_: kind = "a boolean"; break;
    case json::kind::int64: case json::kind::uint64: kind = "an integer"; break;
    case json::kind::double_: kind = "a number"; break;
    case json::kind::string: kind = "a string"; break;
    case json::kind::array: kind = "an array"; break;
    case json::kind::object: kind = "an object"; break;
  }
  fail(KILN_STATUS_INVALID_ARGUMENT,
       "option '" + path + std::string(key) + "' must be " + std::string(want) + ", got " + kind);
}

}  // namespace

Options::Options() : impl_(std::make_unique<Impl>()) {}
Options::~Options() = default;
Options::Options(Options&&) noexcept = default;
Options& Options::operator=(Options&&) noexcept = default;

Options Options::parse(std::string_view text) {
  Options options;
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) return options;
  json::parse_options popts;
  popts.allow_comments = true;
  popts.allow_trailing_commas = true;
  boost::system::error_code ec;
  json::value value = json::parse(text, ec, {}, popts);
  if (ec) fail(KILN_STATUS_INVALID_ARGUMENT, "options are not valid JSON: " + ec.message());
  if (!value.is_object()) fail(KILN_STATUS_INVALID_ARGUMENT, "options must be a JSON object");
  options.impl_->object = std::move(value.as_object());
  return options;
}

bool Options::has(std::string_view key) const { return impl_->object.contains(key); }

bool Options::get_bool(std::string_view key, bool fallback) const {
  const json::value* v = impl_->object.if_contains(key);
  if (v == nullptr) return fallback;
  impl_->read.emplace(key);
  if (!v->is_bool()) type_error(impl_->path, key, "true or false", *v);
  return v->as_bool();
}

std::int64_t Options::get_int(std::string_view key, std::int64_t fallback) const {
  const json::value* v = impl_->object.if_contains(key);
  if (v == nullptr) return fallback;
  impl_->read.emplace(key);
  if (v->is_int64()) return v->as_int64();
  if (v->is_uint64() && v->as_uint64() <= static_cast<std::uint64_t>(INT64_MAX))
    return static_cast<std::int64_t>(v->as_uint64());
  type_error(impl_->path, key, "an integer", *v);
}

double Options::get_double(std::string_view key, double fallback) const {
  const json::value* v = impl_->object.if_contains(key);
  if (v == nullptr) return fallback;
  impl_->read.emplace(key);
  if (v->is_double()) return v->as_double();
  if (v->is_int64()) return static_cast<double>(v->as_int64());
  if (v->is_uint64()) return static_cast<double>(v->as_uint64());
  type_error(impl_->path, key, "a number", *v);
}

std::string Options::get_string(std::string_view key, std::string_view fallback) const {
  const json::value* v = impl_->object.if_contains(key);
  if (v == nullptr) return std::string(fallback);
  impl_->read.emplace(key);
  if (!v->is_string()) type_error(impl_->path, key, "a string", *v);
  return std::string(v->as_string());
}

std::vector<std::string> Options::get_string_list(std::string_view key) const {
  std::vector<std::string> out;
  const json::value* v = impl_->object.if_contains(key);
  if (v == nullptr) return out;
  impl_->read.emplace(key);
  if (!v->is_array()) type_error(impl_->path, key, "an array of strings", *v);
  for (const json::value& item : v->as_array()) {
    if (!item.is_string()) type_error(impl_->path, key, "an array of strings", item);
    out.emplace_back(item.as_string());
  }
  return out;
}

std::vector<std::int64_t> Options::get_int_list(std::string_view key) const {
  std::vector<std::int64_t> out;
  const json::value* v = impl_->object.if_contains(key);
  if (v == nullptr) return out;
  impl_->read.emplace(key);
  if (!v->is_array()) type_error(impl_->path, key, "an array of integers", *v);
  for (const json::value& item : v->as_array()) {
    if (!item.is_int64()) type_error(impl_->path, key, "an array of integers", item);
    out.push_back(item.as_int64());
  }
  return out;
}

std::vector<std::variant<std::int64_t, std::string>> Options::get_int_or_string_list(std::string_view key,
                                                                                     std::string_view item) const {
  std::vector<std::variant<std::int64_t, std::string>> out;
  const json::value* v = impl_->object.if_contains(key);
  if (v == nullptr) return out;
  impl_->read.emplace(key);
  if (!v->is_array()) type_error(impl_->path, key, "an array, each item " + std::string(item), *v);
  const json::array& items = v->as_array();
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (items[i].is_int64())
      out.emplace_back(items[i].as_int64());
    else if (items[i].is_string())
      out.emplace_back(std::string(items[i].as_string()));
    else
      type_error(impl_->path, std::string(key) + "[" + std::to_string(i) + "]", item, items[i]);
  }
  return out;
}

Options Options::get_object(std::string_view key) const {
  Options nested;
  nested.impl_->path = impl_->path + std::string(key) + ".";
  const json::value* v = impl_->object.if_contains(key);
  if (v == nullptr) return nested;
  impl_->read.emplace(key);
  if (!v->is_object()) type_error(impl_->path, key, "an object", *v);
  nested.impl_->object = v->as_object();
  return nested;
}

std::vector<Options> Options::get_object_list(std::string_view key) const {
  std::vector<Options> out;
  const json::value* v = impl_->object.if_contains(key);
  if (v == nullptr) return out;
  impl_->read.emplace(key);
  if (!v->is_array()) type_error(impl_->path, key, "an array of objects", *v);
  for (const json::value& item : v->as_array()) {
    const std::string name = std::string(key) + "[" + std::to_string(out.size()) + "]";
    if (!item.is_object()) type_error(impl_->path, name, "an object", item);
    Options nested;
    nested.impl_->path = impl_->path + name + ".";
    nested.impl_->object = item.as_object();
    out.push_back(std::move(nested));
  }
  return out;
}

std::vector<std::string> Options::unknown_keys() const {
  std::vector<std::string> out;
  for (const auto& entry : impl_->object)
    if (!impl_->read.contains(std::string_view(entry.key()))) out.push_back(impl_->path + std::string(entry.key()));
  return out;
}

void Options::warn_unknown_keys(std::string_view plugin_name) const {
  for (const std::string& key : unknown_keys())
    Host::log(KILN_LOG_WARNING,
              std::string(plugin_name) + ": unknown option '" + key + "' ignored");
}

}  // namespace kiln::sdk
