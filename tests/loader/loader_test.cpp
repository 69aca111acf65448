// Each way a plugin can fail to load has its own test: the plugin is skipped
// with the exact reason, and only a required or explicitly selected plugin
// makes it fatal.
#include "loader/scratch.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <filesystem>

namespace {

using kiln::test::load_plugins;
using kiln::test::plugin_entry;
using kiln::test::plugins_only;
using kiln::test::record;
using kiln::test::ScratchDir;
using kiln::test::skipped_reason;
using kiln::test::test_plugin;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(Loader, GoodCPluginLoadsWithItsDevicesOptionsAndLog) {
  ScratchDir dir;
  // A private copy: a library is initialised once per process, and this test
  // checks what its init sees.
  const std::filesystem::path copy = dir / "libkiln-host-copy.so";
  std::filesystem::copy_file(test_plugin("host"), copy);
  const kiln::Runtime runtime = load_plugins(dir, plugin_entry("host", copy.string(), R"("options": {"greeting": "hi", "n": 3})"));
  const kiln::PluginRecord& host = record(runtime, "host");
  ASSERT_EQ(host.status, kiln::PluginStatus::Loaded) << host.reason;
  EXPECT_EQ(host.version, "1.0.0");
  EXPECT_TRUE(host.reason.empty());
  ASSERT_EQ(host.devices.size(), 1u);
  const kiln::DeviceInfo& device = host.devices[0];
  EXPECT_EQ(device.id, "host:0");
  EXPECT_EQ(device.name, "kiln test device (host)");
  EXPECT_EQ(device.kind, kiln::DeviceKind::Virtual);
  EXPECT_EQ(device.max_local_threads, 64u);
  EXPECT_EQ(device.vector_widths(), (std::vector<std::uint32_t>{1, 4}));
  EXPECT_TRUE(device.host_memory());
  EXPECT_TRUE(host.can_compile());
  // init saw the config's options as JSON text, and its log line was kept.
  ASSERT_EQ(host.log.size(), 1u);
  EXPECT_EQ(host.log[0].level, kiln::LogLevel::Info);
  EXPECT_EQ(host.log[0].text, R"(options: {"greeting":"hi","n":3})");
  // The table calls itself "test_host"; the config's name wins, with a warning.
  EXPECT_THAT(host.warnings, Contains(HasSubstr("calls itself 'test_host'")));
}

TEST(Loader, APluginIsInitialisedOncePerProcess) {
  // A second Runtime naming the same library reuses the initialised plugin;
  // different options cannot take effect, and the record says so.
  ScratchDir dir;
  const kiln::Runtime first = load_plugins(dir, plugin_entry("host", test_plugin("host"), R"("options": {"round": 1})"));
  const kiln::Runtime second = load_plugins(dir, plugin_entry("host", test_plugin("host"), R"("options": {"round": 2})"));
  EXPECT_EQ(record(second, "host").status, kiln::PluginStatus::Loaded);
  EXPECT_THAT(record(second, "host").warnings,
              Contains(HasSubstr("already initialised in this process with other options")));
  // Both Runtimes open the same device.
  kiln::Result<kiln::Device> a = first.device("host:0");
  kiln::Result<kiln::Device> b = second.device("host:0");
  ASSERT_TRUE(a.ok() && b.ok());
  kiln::Result<kiln::Buffer> buffer = a->allocate(16);
  ASSERT_TRUE(buffer.ok());
  EXPECT_EQ(buffer->device_id(), "host:0");
}

TEST(Loader, LibraryMissing) {
  ScratchDir dir;
  const kiln::Runtime runtime = load_plugins(dir, plugin_entry("ghost", (dir / "nowhere/libghost.so").string()));
  const kiln::PluginRecord& ghost = record(runtime, "ghost");
  EXPECT_EQ(ghost.status, kiln::PluginStatus::Skipped);
  EXPECT_EQ(ghost.reason, "library not found: " + (dir / "nowhere/libghost.so").string());
  EXPECT_TRUE(ghost.devices.empty());
}

TEST(Loader, DependencyOfTheLibraryMissing) {
  ScratchDir dir;
  // A copy without the dependency beside it cannot load, and says which
  // library is missing. Once the dependency is loaded in this process (an
  // earlier run of this test in the same process), dlopen reuses it.
  const std::string dependency = std::string(KILN_TEST_PLUGIN_DIR) + "/libkiln_test_dependency.so";
  if (::dlopen(dependency.c_str(), RTLD_NOW | RTLD_NOLOAD) != nullptr)
    GTEST_SKIP() << "the dependency is already loaded in this process (ctest runs each test alone)";
  const std::filesystem::path copy = dir / "alone/libkiln-test-needs-dependency.so";
  std::filesystem::create_directories(copy.parent_path());
  std::filesystem::copy_file(test_plugin("needs-dependency"), copy);
  const kiln::Runtime runtime = load_plugins(dir, plugin_entry("dep", copy.string()));
  const kiln::PluginRecord& dep = record(runtime, "dep");
  EXPECT_EQ(dep.status, kiln::PluginStatus::Skipped);
  EXPECT_THAT(dep.reason, HasSubstr("cannot load " + copy.string()));
  EXPECT_THAT(dep.reason, HasSubstr("libkiln_test_dependency.so: cannot open shared object file"));

  // In place, next to its dependency, the same plugin loads.
  const kiln::Runtime in_place = load_plugins(dir, plugin_entry("dep", test_plugin("needs-dependency")));
  EXPECT_EQ(record(in_place, "dep").status, kiln::PluginStatus::Loaded) << record(in_place, "dep").reason;
}

TEST(Loader, EntrySymbolMissing) {
  ScratchDir dir;
  const std::string reason = skipped_reason(load_plugins(dir, plugin_entry("noentry", test_plugin("no-entry"))), "noentry");
  EXPECT_THAT(reason, HasSubstr("does not export kiln_plugin_query"));
}

TEST(Loader, AbiMajorMismatchNamesBothVersions) {
  ScratchDir dir;
  const std::string reason = skipped_reason(load_plugins(dir, plugin_entry("future", test_plugin("abi-major"))), "future");
  EXPECT_THAT(reason, HasSubstr("ABI major version mismatch: the plugin was built for ABI 2.3, this host speaks ABI 1.1"));
}

TEST(Loader, QueryReturnsNull) {
  ScratchDir dir;
  const std::string reason = skipped_reason(load_plugins(dir, plugin_entry("shy", test_plugin("null-query"))), "shy");
  EXPECT_THAT(reason, HasSubstr("kiln_plugin_query(1, 1) returned NULL"));
}

TEST(Loader, TableSmallerThanAbi10IsRejected) {
  ScratchDir dir;
  const std::string reason = skipped_reason(load_plugins(dir, plugin_entry("small", test_plugin("small-table"))), "small");
  EXPECT_THAT(reason, HasSubstr("plugin table struct_size is 72 bytes, smaller than ABI 1.0's 216"));
}

TEST(Loader, AnAbsurdDeviceCountIsRefusedNotLoopedOver) {
  ScratchDir dir;
  const std::string reason = skipped_reason(load_plugins(dir, plugin_entry("many", test_plugin("huge-count"))), "many");
  EXPECT_THAT(reason, HasSubstr("device_count reports 4294967295 devices, more than the 4096 kiln accepts"));
}

TEST(Loader, InitFailsWithAMessage) {
  ScratchDir dir;
  const kiln::Runtime runtime = load_plugins(dir, plugin_entry("frob", test_plugin("init-fails")));
  const kiln::PluginRecord& plugin = record(runtime, "frob");
  EXPECT_EQ(plugin.status, kiln::PluginStatus::Skipped);
  EXPECT_EQ(plugin.reason, "init failed: unavailable: the test frobnicator is not connected");
  EXPECT_EQ(plugin.version, "0.0.1");
  // What it logged before failing is kept.
  ASSERT_EQ(plugin.log.size(), 1u);
  EXPECT_EQ(plugin.log[0].level, kiln::LogLevel::Warning);
  EXPECT_EQ(plugin.log[0].text, "probing the test frobnicator");
}

TEST(Loader, OneFailingPluginDoesNotStopTheOthers) {
  ScratchDir dir;
  const kiln::Runtime runtime =
      load_plugins(dir, plugin_entry("frob", test_plugin("init-fails")) + ", " + plugin_entry("host", test_plugin("host")));
  EXPECT_EQ(record(runtime, "frob").status, kiln::PluginStatus::Skipped);
  EXPECT_EQ(record(runtime, "host").status, kiln::PluginStatus::Loaded);
  ASSERT_EQ(runtime.devices().size(), 1u);
  EXPECT_EQ(runtime.devices()[0].id, "host:0");
}

TEST(Loader, RequiredPluginThatFailsIsFatal) {
  ScratchDir dir;
  kiln::Result<kiln::Runtime> runtime =
      kiln::test::runtime_from(dir, plugins_only(plugin_entry("frob", test_plugin("init-fails"), R"("required": true)")));
  ASSERT_FALSE(runtime.ok());
  EXPECT_EQ(runtime.error().code, kiln::ErrorCode::PluginLoad);
  EXPECT_EQ(runtime.error().plugin, "frob");
  EXPECT_THAT(runtime.error().message, HasSubstr("required plugin 'frob'"));
  EXPECT_THAT(runtime.error().message, HasSubstr("config.json:4:5)"));
  EXPECT_THAT(runtime.error().message, HasSubstr("is skipped: init failed: unavailable: the test frobnicator is not connected"));
}

TEST(Loader, RequiredPluginThatLoadsIsFine) {
  ScratchDir dir;
  kiln::Result<kiln::Runtime> runtime =
      kiln::test::runtime_from(dir, plugins_only(plugin_entry("host", test_plugin("host"), R"("required": true)")));
  ASSERT_TRUE(runtime.ok()) << runtime.error().to_string();
  EXPECT_TRUE(record(*runtime, "host").required);
}

TEST(Loader, ExplicitlySelectedFailingPluginIsFatal) {
  ScratchDir dir;
  const kiln::Runtime runtime = load_plugins(dir, plugin_entry("frob", test_plugin("init-fails")));
  kiln::Result<kiln::Device> device = runtime.device("frob:0");
  ASSERT_FALSE(device.ok());
  EXPECT_EQ(device.error().code, kiln::ErrorCode::Unavailable);
  EXPECT_EQ(device.error().message,
            "device 'frob:0': plugin 'frob' is skipped: init failed: unavailable: the test frobnicator is not connected");
  // A disabled plugin says so too.
  kiln::Result<kiln::Device> cuda = runtime.device("cuda:0");
  ASSERT_FALSE(cuda.ok());
  EXPECT_THAT(cuda.error().message, HasSubstr("plugin 'cuda' is disabled"));
}

TEST(Loader, NoUsableDeviceNamesEverySkipReason) {
  ScratchDir dir;
  const kiln::Runtime runtime = load_plugins(dir, plugin_entry("frob", test_plugin("init-fails")));
  kiln::Result<kiln::Device> device = runtime.default_device();
  ASSERT_FALSE(device.ok());
  EXPECT_THAT(device.error().message, HasSubstr("no device can run kernels"));
  EXPECT_THAT(device.error().message, HasSubstr("frob: skipped: init failed: unavailable: the test frobnicator"));
  EXPECT_THAT(device.error().message, HasSubstr("cuda: disabled"));
}

TEST(Loader, DefaultDeviceIsTheFirstOfTheHighestPriorityPluginThatCompiles) {
  ScratchDir dir;
  const kiln::Runtime runtime = load_plugins(dir, plugin_entry("frob", test_plugin("init-fails"), R"("priority": 9)") + ", " +
                                              plugin_entry("host", test_plugin("host")) + ", " +
                                              plugin_entry("queue", test_plugin("queue"), R"("priority": 2)"));
  kiln::Result<kiln::Device> device = runtime.default_device();
  ASSERT_TRUE(device.ok()) << device.error().to_string();
  EXPECT_EQ(device->id(), "queue:0");
}

TEST(Loader, UnknownDeviceIdsAreClearErrors) {
  ScratchDir dir;
  const kiln::Runtime runtime = load_plugins(dir, plugin_entry("host", test_plugin("host")));
  EXPECT_THAT(runtime.device("nosuch:0").error().message, HasSubstr("no plugin named 'nosuch'"));
  EXPECT_THAT(runtime.device("host:7").error().message, HasSubstr("no such device (plugin 'host' exposes host:0)"));
  EXPECT_THAT(runtime.device("host:x").error().message, HasSubstr("expected <plugin>:<index>"));
  ASSERT_TRUE(runtime.device("host").ok());
  EXPECT_EQ(runtime.device("host")->id(), "host:0");
}

TEST(Loader, DeviceFilterByIndexAndName) {
  ScratchDir dir;
  {
    const kiln::Runtime runtime = load_plugins(dir, plugin_entry("host", test_plugin("host"), R"j("devices": ["(host)"])j"));
    EXPECT_EQ(record(runtime, "host").devices.size(), 1u);
    for (const std::string& w : record(runtime, "host").warnings) EXPECT_THAT(w, Not(HasSubstr("devices[")));
  }
  const kiln::Runtime runtime = load_plugins(dir, plugin_entry("host", test_plugin("host"), R"("devices": [3, "GPU"])"));
  const kiln::PluginRecord& host = record(runtime, "host");
  EXPECT_EQ(host.status, kiln::PluginStatus::Loaded);
  EXPECT_TRUE(host.devices.empty());
  EXPECT_THAT(host.warnings, Contains("devices[0]: no device with index 3 (the plugin has 1)"));
  EXPECT_THAT(host.warnings, Contains("devices[1]: no device with name containing \"GPU\" (the plugin has 1)"));
  EXPECT_THAT(runtime.device("host:0").error().message, HasSubstr("exposes no devices"));
}

TEST(Loader, NoLibraryAnywhereSaysWhereItLooked) {
  ScratchDir dir;
  const std::string reason = skipped_reason(load_plugins(dir, R"("acme": {"priority": 1})"), "acme");
  EXPECT_THAT(reason, HasSubstr("no library: plugins.acme has no \"library\", and no manifest or libkiln-acme.so"));
}

TEST(Loader, BuiltInPluginsThatWereNotBuiltAreSkippedAsNotFound) {
  // The built-in default names all six in-tree plugins; in this build some
  // may be missing, and those must say "library not found".
  const kiln::Runtime runtime = kiln::Runtime::create(kiln::builtin_config()).value();
  ASSERT_GE(runtime.plugins().size(), 6u);
  const char* names[] = {"c", "cblas", "cuda", "opencl", "vulkan", "dummy"};
  for (std::size_t i = 0; i < 6; ++i) {
    const kiln::PluginRecord& p = runtime.plugins()[i];
    EXPECT_EQ(p.name, names[i]);
    EXPECT_EQ(p.library, kiln::builtin_plugin_dir() / ("libkiln-" + p.name + ".so"));
    if (p.name == "dummy") {
      EXPECT_EQ(p.status, kiln::PluginStatus::Disabled);
    } else if (!std::filesystem::exists(p.library)) {
      EXPECT_EQ(p.status, kiln::PluginStatus::Skipped);
      EXPECT_EQ(p.reason, "library not found: " + p.library.string());
    }
  }
  EXPECT_EQ(kiln::builtin_plugin_dir(), std::filesystem::path(KILN_PLUGIN_DIR));
}

}  // namespace
