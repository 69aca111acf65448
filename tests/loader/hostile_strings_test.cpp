// A plugin's text (device name, vendor, driver version, its name and
// version, log lines, error messages) reaches the host sanitised: valid
// UTF-8, no terminal escapes, so `kiln devices --json` always parses and
// the plain table never drives the terminal (core/runtime/plugin_text.cpp).
#include "loader/scratch.hpp"
#include "support/run_cli.hpp"

#include "runtime/plugin_text.hpp"

#include <boost/json.hpp>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace {

using kiln::detail::sanitize_plugin_text;
using kiln::detail::TextKind;
using kiln::test::plugins_only;
using kiln::test::record;
using kiln::test::ScratchDir;
using kiln::test::test_plugin;
using ::testing::HasSubstr;
using ::testing::Not;

// True when `text` holds no byte a terminal acts on: C0 other than \n and
// \t, DEL, the C1 range as UTF-8.
bool inert(const std::string& text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) return false;
    if (c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
        static_cast<unsigned char>(text[i + 1]) <= 0x9f)
      return false;
  }
  return true;
}

TEST(PluginText, EscapesControlsAndReplacesInvalidUtf8) {
  EXPECT_EQ(sanitize_plugin_text("plain ünïcode ✓", TextKind::Line), "plain ünïcode ✓");
  EXPECT_EQ(sanitize_plugin_text("\x1b[31mred", TextKind::Line), "\\x1b[31mred");
  EXPECT_EQ(sanitize_plugin_text("a\nb\tc", TextKind::Line), "a\\x0ab\\x09c");
  EXPECT_EQ(sanitize_plugin_text("a\nb\tc\r", TextKind::Paragraph), "a\nb\tc\\x0d");
  EXPECT_EQ(sanitize_plugin_text("\xc2\x9b" "2J", TextKind::Line), "\\u009b2J");       // C1 CSI, as UTF-8
  EXPECT_EQ(sanitize_plugin_text("\xe2\x80\xae" "abc", TextKind::Line), "\\u202eabc");  // right-to-left override
  EXPECT_EQ(sanitize_plugin_text("\x9b", TextKind::Line), "\xEF\xBF\xBD");               // a bare byte
  EXPECT_EQ(sanitize_plugin_text("\xc0\xaf", TextKind::Line), "\xEF\xBF\xBD\xEF\xBF\xBD");  // overlong '/'
  EXPECT_EQ(sanitize_plugin_text("\xed\xa0\x80", TextKind::Line), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
  EXPECT_EQ(sanitize_plugin_text("end\xe2\x82", TextKind::Line), "end\xEF\xBF\xBD\xEF\xBF\xBD");  // cut short
  EXPECT_EQ(sanitize_plugin_text(std::string("nul\0in", 6), TextKind::Line), "nul\\x00in");
}

TEST(PluginText, HostileDeviceNamesLogsAndErrorsArriveSanitised) {
  ScratchDir dir;
  const kiln::Runtime runtime =
      kiln::test::runtime_from(dir, plugins_only("\"weird\": {\"library\": \"" + test_plugin("hostile-strings") + "\"}"))
          .value();
  const kiln::PluginRecord& weird = record(runtime, "weird");
  ASSERT_EQ(weird.status, kiln::PluginStatus::Loaded) << weird.reason;
  ASSERT_EQ(weird.devices.size(), 1u);
  const kiln::DeviceInfo& device = weird.devices[0];
  EXPECT_EQ(device.name, "name: \\x1b[31mred\\x1b[0m \xEF\xBF\xBD" "2J \\u202erev \xEF\xBF\xBD \xEF\xBF\xBD\xEF\xBF\xBD "
                         "end\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(device.vendor, "vendor \\x1b]0;title\\x07");
  EXPECT_EQ(device.driver_version, "1.0\\x0a\xEF\xBF\xBD");
  EXPECT_EQ(weird.version, "6.6.6\xEF\xBF\xBD");
  EXPECT_THAT(weird.warnings, ::testing::Contains(HasSubstr("calls itself 'misbehaving \\x1b[1m'")));
  ASSERT_EQ(weird.log.size(), 1u);
  EXPECT_THAT(weird.log[0].text, HasSubstr("log: \\x1b[31mred"));
  EXPECT_THAT(weird.log[0].text, HasSubstr("\nsecond line\tkept"));  // a paragraph keeps its lines
  for (const std::string& text : {device.name, device.vendor, device.driver_version, weird.version, weird.log[0].text})
    EXPECT_TRUE(inert(text)) << text;

  kiln::Result<kiln::Device> opened = runtime.device("weird:0");
  ASSERT_FALSE(opened.ok());
  EXPECT_THAT(opened.error().message, HasSubstr("open: \\x1b[31mred"));
  EXPECT_TRUE(inert(opened.error().message)) << opened.error().message;
}

TEST(PluginText, DevicesJsonParsesAndThePlainTableHasNoEscapes) {
  ScratchDir dir;
  const auto config =
      dir.write("kiln.json", plugins_only("\"weird\": {\"library\": \"" + test_plugin("hostile-strings") + "\"}"));
  const kiln::test::CliOutput json = kiln::test::run_cli(dir.path(), "devices --json --config " + config.string());
  ASSERT_EQ(json.exit_code, 0) << json.err;
  boost::system::error_code ec;
  const boost::json::value report = boost::json::parse(json.out, ec);  // rejects invalid UTF-8
  ASSERT_FALSE(ec) << ec.message() << "\n" << json.out;
  EXPECT_THAT(json.out, HasSubstr("name: \\\\x1b[31mred"));
  const kiln::test::CliOutput table = kiln::test::run_cli(dir.path(), "--config " + config.string() + " devices");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("\\x1b[31mred"));
  EXPECT_TRUE(inert(table.out)) << table.out;
  EXPECT_THAT(table.out, Not(HasSubstr("\x1b")));
}

}  // namespace
