#include "loaded_library.hpp"

#include "device_state.hpp"
#include "plugin_text.hpp"

#include <cstdlib>
#include <cstring>

namespace kiln::detail {

namespace fs = std::filesystem;

namespace {

// The ABI 1.0 table: every function of minor 0 is present in it.
constexpr std::size_t kMinPluginApiSize = KILN_PLUGIN_API_STRUCT_SIZE_1_0;

std::string abi_version(std::uint32_t major, std::uint32_t minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

struct Registry {
  std::mutex mutex;
  std::vector<std::unique_ptr<LoadedLibrary>> libraries;
  // Libraries that loaded but cannot serve as plugins: kept loaded anyway,
  // because their static constructors ran and unloading is never safe.
  std::vector<boost::dll::shared_library> unusable;
  std::vector<LoadedLibrary*> initialized;  // in init order, not yet shut down
};

// Deliberately leaked: destroying it at exit would dlclose every plugin.
Registry& registry() {
  static Registry* instance = new Registry;
  return *instance;
}

// One atexit handler is registered right after each successful init. Exit
// runs handlers and static destructors in reverse order of registration, so
// the handler of the plugin initialised last runs first, and each runs
// before the static destructors of its plugin (registered when it was
// loaded); it shuts down the latest plugin still up.
void shutdown_latest_at_exit() {
  LoadedLibrary* latest = nullptr;
  {
    std::lock_guard lock(registry().mutex);
    if (registry().initialized.empty()) return;
    latest = registry().initialized.back();
    registry().initialized.pop_back();
  }
  latest->shutdown();
}

Error load_error(std::string message) { return make_error(ErrorCode::PluginLoad, std::move(message)); }

// Boost.DLL's message wraps dlerror's text; keep only dlerror's words.
std::string dlerror_text(const std::string& what) {
  const std::string marker = "dlerror system message: ";
  const std::size_t begin = what.find(marker);
  if (begin == std::string::npos) return what;
  const std::size_t start = begin + marker.size();
  const std::size_t end = what.rfind(')');
  return what.substr(start, end != std::string::npos && end > start ? end - start : std::string::npos);
}

// The table's strings (name, version, description), sanitised and bounded:
// a static string without its NUL would otherwise be read until a crash.
std::string c_string(const char* s) {
  return s != nullptr ? sanitize_plugin_text(std::string_view(s, strnlen(s, 4096)), TextKind::Line) : std::string();
}

}  // namespace

LoadedLibrary::LoadedLibrary(fs::path path, boost::dll::shared_library library, const kiln_plugin_api& api)
    : path_(std::move(path)), library_(std::move(library)) {
  std::memcpy(static_cast<void*>(&api_), &api, std::min(api.struct_size, sizeof(api_)));
  api_.struct_size = std::min(api.struct_size, sizeof(api_));
}

std::string LoadedLibrary::name() const { return c_string(api_.name); }
std::string LoadedLibrary::version() const { return c_string(api_.version); }
std::string LoadedLibrary::description() const { return c_string(api_.description); }

Result<void> LoadedLibrary::initialize(const std::string& plugin_name, const std::string& options_json,
                                       std::string& note) {
  std::lock_guard lock(mutex_);
  if (init_state_ == InitState::Ready) {
    if (options_json != init_options_)
      note = "already initialised in this process with other options (" + init_options_ + "); those stay in effect";
    return {};
  }
  if (init_state_ == InitState::Failed) return *init_error_;

  host_.struct_size = KILN_HOST_API_STRUCT_SIZE;
  host_.abi_major = KILN_ABI_MAJOR;
  host_.abi_minor = KILN_ABI_MINOR;
  host_.extensions = nullptr;  // the host offers no extensions yet
  host_.host_version = KILN_VERSION;
  host_.context = &log_;
  host_.error_create = host_error_create;
  host_.log = PluginLog::callback;

  kiln_init_args args{};
  args.struct_size = KILN_INIT_ARGS_STRUCT_SIZE;
  args.host = &host_;
  args.options_json = options_json.c_str();
  args.options_json_len = options_json.size();
  kiln_error* err = nullptr;
  try {
    err = api_.init(&args);
  } catch (...) {
    // The ABI forbids exceptions across it; catching one is best effort
    // (docs/plugin-guide.md: a crash or abort in init cannot be survived).
    init_state_ = InitState::Failed;
    init_error_ = load_error("init threw a C++ exception across the C ABI (a plugin bug)");
    init_error_->plugin = plugin_name;
    init_error_->function = "init";
    return *init_error_;
  }
  if (err != nullptr) {
    init_state_ = InitState::Failed;
    init_error_ = take_error(err, plugin_name, "init");
    return *init_error_;
  }
  init_state_ = InitState::Ready;
  init_options_ = options_json;

  {
    std::lock_guard registry_lock(registry().mutex);
    registry().initialized.push_back(this);
  }
  std::atexit(shutdown_latest_at_exit);
  return {};
}

Result<std::shared_ptr<DeviceState>> LoadedLibrary::open_device(const std::string& plugin_name, std::uint32_t index,
                                                                const DeviceInfo& info) {
  std::lock_guard lock(mutex_);
  if (devices_.size() <= index) devices_.resize(index + 1);
  if (std::shared_ptr<DeviceState> open = devices_[index].lock()) return open;
  if (api_.device_open == nullptr) {
    Error e = make_error(ErrorCode::NotImplemented, info.id + ": the plugin cannot open devices (device_open is NULL)");
    e.plugin = plugin_name;
    e.function = "device_open";
    return e;
  }
  kiln_device_open_args args{};
  args.struct_size = KILN_DEVICE_OPEN_ARGS_STRUCT_SIZE;
  args.index = index;
  if (kiln_error* err = api_.device_open(&args)) {
    Error e = take_error(err, plugin_name, "device_open");
    e.message = info.id + ": " + e.message;
    return e;
  }
  auto state = std::make_shared<DeviceState>(*this, plugin_name, info, args.device);
  devices_[index] = state;
  return state;
}

void LoadedLibrary::shutdown() {
  if (shut_down_.exchange(true)) return;
  if (api_.shutdown2 != nullptr) {
    kiln_shutdown_args args{};
    args.struct_size = KILN_SHUTDOWN_ARGS_STRUCT_SIZE;
    if (kiln_error* err = api_.shutdown2(&args)) log_release_error(err, "shutdown2");
  } else if (api_.shutdown != nullptr) {
    api_.shutdown();
  }
}

void LoadedLibrary::log_release_error(kiln_error* error, std::string_view function) {
  const Error e = take_error(error, c_string(api_.name), function);
  log_.add(KILN_LOG_WARNING, std::string(function) + " failed: " + std::string(error_code_name(e.code)) + ": " + e.message);
}

bool library_loaded(const fs::path& path) {
  std::error_code ec;
  const fs::path wanted = fs::weakly_canonical(path, ec);
  std::lock_guard lock(registry().mutex);
  for (const auto& loaded : registry().libraries) {
    if (loaded->path() == path) return true;
    const fs::path canonical = fs::weakly_canonical(loaded->path(), ec);
    if (!ec && canonical == wanted) return true;
  }
  return false;
}

Result<LoadedLibrary*> load_library(const fs::path& path, std::uint32_t host_minor) {
  std::error_code ec;
  if (path.empty()) return load_error("no library path");
  if (!fs::exists(path, ec)) return load_error("library not found: " + path.string());

  boost::dll::shared_library library;
  try {
    library.load(path, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
  } catch (const std::exception& e) {
    return load_error("cannot load " + path.string() + ": " + dlerror_text(e.what()));
  }

  Registry& reg = registry();
  std::lock_guard lock(reg.mutex);
  for (const auto& loaded : reg.libraries)
    if (loaded->native_handle() == library.native()) return loaded.get();

  if (!library.has(KILN_PLUGIN_QUERY_SYMBOL)) {
    reg.unusable.push_back(std::move(library));
    return load_error(path.string() + " does not export " KILN_PLUGIN_QUERY_SYMBOL
                      " (not a kiln plugin, or the symbol is hidden: mark it KILN_PLUGIN_EXPORT)");
  }
  auto query = library.get<const kiln_plugin_api*(std::uint32_t, std::uint32_t)>(KILN_PLUGIN_QUERY_SYMBOL);
  const kiln_plugin_api* table = query(KILN_ABI_MAJOR, host_minor);
  const std::string host_abi = abi_version(KILN_ABI_MAJOR, host_minor);
  std::string problem;
  if (table == nullptr) {
    problem = KILN_PLUGIN_QUERY_SYMBOL "(" + std::to_string(KILN_ABI_MAJOR) + ", " + std::to_string(host_minor) +
              ") returned NULL: the plugin cannot serve a host of ABI " + host_abi;
  } else if (table->abi_major != KILN_ABI_MAJOR) {
    problem = "ABI major version mismatch: the plugin was built for ABI " +
              abi_version(table->abi_major, table->abi_minor) + ", this host speaks ABI " + host_abi;
  } else if (table->abi_minor > host_minor) {
    problem = "the plugin was built for ABI " + abi_version(table->abi_major, table->abi_minor) +
              ", newer than this host's ABI " + host_abi + " (update kiln, or build the plugin against the " +
              host_abi + " header)";
  } else if (table->struct_size < kMinPluginApiSize) {
    problem = "plugin table struct_size is " + std::to_string(table->struct_size) + " bytes, smaller than ABI " +
              std::to_string(KILN_ABI_MAJOR) + ".0's " + std::to_string(kMinPluginApiSize);
  } else if (table->init == nullptr || table->device_count == nullptr || table->device_info == nullptr) {
    problem = "the plugin table lacks a required function (init, device_count and device_info must be set)";
  }
  if (!problem.empty()) {
    reg.unusable.push_back(std::move(library));
    return load_error(path.string() + ": " + problem);
  }
  reg.libraries.push_back(std::make_unique<LoadedLibrary>(path, std::move(library), *table));
  return reg.libraries.back().get();
}

}  // namespace kiln::detail
