// The SDK's plugin-shape pieces: the "devices" filter, the checked handle
// lookups, the per-plugin state, the table builder and the shared
// program_source / cache_key answers.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "kiln/sdk/device_filter.hpp"
#include "kiln/sdk/handles.hpp"
#include "kiln/sdk/plugin_entry.hpp"
#include "kiln/sdk/plugin_state.hpp"
#include "kiln/sdk/plugin_table.hpp"
#include "support/abi_host.hpp"

namespace {

using kiln::sdk::DeviceFilter;
using kiln::sdk::Options;
using kiln::sdk::PluginError;

// The message of the PluginError `body` throws, checking its status.
template <class Body>
std::string error_of(Body&& body, kiln_status status = KILN_STATUS_INVALID_ARGUMENT) {
  try {
    body();
  } catch (const PluginError& e) {
    EXPECT_EQ(e.status(), status) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

TEST(DeviceFilter, NoOptionOrAnEmptyListKeepsEveryDevice) {
  EXPECT_TRUE(DeviceFilter::read(Options::parse("{}")).keeps_all());
  const DeviceFilter empty = DeviceFilter::read(Options::parse(R"({"devices": []})"));
  EXPECT_TRUE(empty.keeps_all());
  EXPECT_TRUE(empty.keeps(7, "anything"));
}

TEST(DeviceFilter, OrdinalsSelectByPosition) {
  const DeviceFilter filter = DeviceFilter::read(Options::parse(R"({"devices": [0, 2]})"));
  EXPECT_EQ(filter.ordinals(), (std::vector<std::uint64_t>{0, 2}));
  EXPECT_TRUE(filter.keeps(0, "A"));
  EXPECT_FALSE(filter.keeps(1, "A"));
  EXPECT_TRUE(filter.keeps(2, "B"));
}

TEST(DeviceFilter, NamesSelectBySubstringAndMixWithOrdinals) {
  const DeviceFilter filter = DeviceFilter::read(Options::parse(R"({"devices": ["H200", 3]})"));
  EXPECT_EQ(filter.names(), (std::vector<std::string>{"H200"}));
  EXPECT_TRUE(filter.keeps(0, "NVIDIA H200 NVL"));
  EXPECT_FALSE(filter.keeps(1, "llvmpipe"));
  EXPECT_TRUE(filter.keeps(3, "llvmpipe"));
  EXPECT_FALSE(filter.keeps(0, "h200"));  // case matters, as in the loader's filter
}

TEST(DeviceFilter, OtherTypesAreInvalidArgumentsNamingTheKey) {
  EXPECT_EQ(error_of([] { DeviceFilter::read(Options::parse(R"({"devices": 3})")); }),
            "option 'devices' must be an array, each item a device ordinal (>= 0) or a name substring, got an integer");
  EXPECT_EQ(error_of([] { DeviceFilter::read(Options::parse(R"({"devices": [0, true]})")); }),
            "option 'devices[1]' must be a device ordinal (>= 0) or a name substring, got a boolean");
  EXPECT_EQ(error_of([] { DeviceFilter::read(Options::parse(R"({"devices": [-1]})")); }),
            "option 'devices[0]' must be a device ordinal (>= 0) or a name substring, got -1");
  EXPECT_EQ(error_of([] { DeviceFilter::read(Options::parse(R"({"devices": [{"name": "x"}]})")); }),
            "option 'devices[0]' must be a device ordinal (>= 0) or a name substring, got an object");
}

TEST(DeviceFilter, TheKeyCountsAsRead) {
  const Options options = Options::parse(R"({"devices": [0], "other": 1})");
  DeviceFilter::read(options);
  EXPECT_EQ(options.unknown_keys(), (std::vector<std::string>{"other"}));
}

struct FakeDevice {
  bool open = true;
};
struct PlainDevice {};
struct FakeBuffer {
  const FakeDevice* device;
};
struct FakeProgram {
  int id = 0;
};

TEST(CheckedHandles, DevicesMustBeOursAndOpen) {
  std::vector<std::unique_ptr<FakeDevice>> devices;
  devices.push_back(std::make_unique<FakeDevice>());
  auto* handle = reinterpret_cast<kiln_device*>(devices[0].get());
  EXPECT_EQ(&kiln::sdk::checked_device(handle, devices, "copy_to_host"), devices[0].get());
  EXPECT_EQ(error_of([&] { kiln::sdk::checked_device(nullptr, devices, "copy_to_host"); }),
            "copy_to_host: device is NULL");
  FakeDevice stranger;
  EXPECT_EQ(error_of([&] {
              kiln::sdk::checked_device(reinterpret_cast<kiln_device*>(&stranger), devices, "cache_key");
            }),
            "cache_key: not a device of this plugin");
  devices[0]->open = false;
  EXPECT_EQ(error_of([&] { kiln::sdk::checked_device(handle, devices, "launch"); }), "launch: device is closed");
}

TEST(CheckedHandles, DevicesWithoutAnOpenFlagAndNoFunctionName) {
  std::vector<std::unique_ptr<PlainDevice>> devices;
  devices.push_back(std::make_unique<PlainDevice>());
  EXPECT_EQ(&kiln::sdk::checked_device(reinterpret_cast<kiln_device*>(devices[0].get()), devices, ""),
            devices[0].get());
  EXPECT_EQ(error_of([&] { kiln::sdk::checked_device(nullptr, devices, ""); }), "device is NULL");
}

TEST(CheckedHandles, BuffersBelongToTheirDevice) {
  const FakeDevice mine, other;
  FakeBuffer buffer{&mine};
  auto* handle = reinterpret_cast<kiln_buffer*>(&buffer);
  EXPECT_EQ(&kiln::sdk::checked_buffer<FakeBuffer>(handle, mine, "copy_to_host", "source"), &buffer);
  EXPECT_EQ(error_of([&] { kiln::sdk::checked_buffer<FakeBuffer>(nullptr, mine, "copy_to_host", "source"); }),
            "copy_to_host: source buffer is NULL");
  EXPECT_EQ(error_of([&] { kiln::sdk::checked_buffer<FakeBuffer>(handle, other, "buffer_free", ""); }),
            "buffer_free: buffer belongs to another device");
}

TEST(CheckedHandles, ProgramsAndOtherHandlesMustNotBeNull) {
  FakeProgram program{7};
  EXPECT_EQ(kiln::sdk::checked_program<const FakeProgram>(reinterpret_cast<kiln_program*>(&program), "launch").id, 7);
  EXPECT_EQ(error_of([] { kiln::sdk::checked_program<FakeProgram>(nullptr, "c: launch"); }),
            "c: launch: program is NULL");
  EXPECT_EQ(error_of([] { kiln::sdk::checked_handle<int>(static_cast<kiln_event*>(nullptr), "event_wait", "event"); }),
            "event_wait: event is NULL");
}

TEST(PluginState, GetThrowsOutsideInitAndShutdown) {
  kiln::sdk::PluginState<int> state("demo");
  EXPECT_FALSE(state.ready());
  EXPECT_EQ(error_of([&] { state.get(); }), "the demo plugin is not initialised (init not called or failed)");
  state.set(std::make_unique<int>(5));
  EXPECT_TRUE(state.ready());
  EXPECT_EQ(state.get(), 5);
  state.reset();
  EXPECT_FALSE(state.ready());
}

kiln_error* fake_init(kiln_init_args*) { return nullptr; }
void fake_shutdown() {}

TEST(PluginTable, FillsTheHeaderAndTheHostMemoryPool) {
  constexpr kiln_plugin_api table = kiln::sdk::plugin_table(
      {.name = "demo", .version = "1.2.3", .description = "a test"}, {fake_init, fake_shutdown, nullptr}, {},
      kiln::sdk::host_memory_pool(), {}, {});
  EXPECT_EQ(table.struct_size, KILN_PLUGIN_API_STRUCT_SIZE);
  EXPECT_EQ(table.abi_major, KILN_ABI_MAJOR);
  EXPECT_EQ(table.abi_minor, KILN_ABI_MINOR);
  EXPECT_STREQ(table.name, "demo");
  EXPECT_EQ(table.init, fake_init);
  EXPECT_EQ(table.buffer_alloc, kiln::sdk::host_buffer_alloc);
  EXPECT_EQ(table.event_query, kiln::sdk::host_event_query);
  EXPECT_EQ(table.shutdown2, nullptr);  // the 1.0 forms are used
  EXPECT_EQ(table.extensions, nullptr);
  EXPECT_EQ(kiln::sdk::answer_query(table, KILN_ABI_MAJOR), &table);
  EXPECT_EQ(kiln::sdk::answer_query(table, KILN_ABI_MAJOR + 1), nullptr);
}

kiln_host_api test_host() {
  kiln_host_api host{};
  host.struct_size = KILN_HOST_API_STRUCT_SIZE;
  host.abi_major = KILN_ABI_MAJOR;
  host.error_create = kiln::test::test_error_create;
  host.log = kiln::test::test_log;
  return host;
}

TEST(PluginEntry, ProgramSourceAndCacheKeyAnswers) {
  static const kiln_host_api host = test_host();
  kiln::sdk::Host::bind(&host);
  const std::string text = "int main;";
  FakeProgram program;
  kiln_program_source_args source{};
  source.struct_size = KILN_PROGRAM_SOURCE_ARGS_STRUCT_SIZE;
  source.program = reinterpret_cast<kiln_program*>(&program);
  kiln::test::check(kiln::sdk::answer_program_source(&source, "program_source", [&](kiln_program*) {
    return kiln::sdk::ProgramText{"c", text};
  }));
  EXPECT_STREQ(source.language, "c");
  EXPECT_EQ(std::string(source.text, source.text_len), text);

  source.program = nullptr;
  try {
    kiln::test::check(kiln::sdk::answer_program_source(&source, "c: program_source",
                                                       [&](kiln_program*) { return kiln::sdk::ProgramText{"c", text}; }));
    FAIL() << "no error";
  } catch (const kiln::test::AbiError& e) {
    EXPECT_EQ(std::string(e.what()), "c: program_source: program is NULL");
  }

  const std::string key = "demo 1.0";
  kiln_cache_key_args cache{};
  cache.struct_size = KILN_CACHE_KEY_ARGS_STRUCT_SIZE;
  kiln::test::check(kiln::sdk::answer_cache_key(&cache, [&](kiln_device*) -> const std::string& { return key; }));
  EXPECT_STREQ(cache.key, "demo 1.0");
}

}  // namespace
