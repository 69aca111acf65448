// tools/conformance/src/cases.hpp - what a case is, inside the kit: a name
// and a function of one opened device that says passed, failed or
// unsupported. abi_cases.cpp (with memory_cases.cpp) and suite_cases.cpp
// make them; kit.cpp runs them (and turns what they throw into results).
#pragma once

#include <kiln/conformance/kernel_runner.hpp>
#include <kiln/conformance/report.hpp>

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kiln::conformance::detail {

// The device a case runs on.
struct Target {
  const AbiPlugin& plugin;
  kiln_device* device;
  std::uint32_t index;
  const kiln_device_info& info;
};

struct Verdict {
  CaseStatus status = CaseStatus::passed;
  std::string reason;

  static Verdict pass() { return {}; }
  static Verdict fail(std::string why) { return {CaseStatus::failed, std::move(why)}; }
  static Verdict unsupported(std::string why) { return {CaseStatus::unsupported, std::move(why)}; }
};

// The problems a case found, "; "-joined into its verdict.
class Problems {
 public:
  void expect(bool ok, const std::string& what) {
    if (!ok) text_ += (text_.empty() ? "" : "; ") + what;
  }
  // `call` must fail with INVALID_ARGUMENT.
  void expect_invalid(const std::function<void()>& call, const std::string& what) {
    try {
      call();
      expect(false, what + " was accepted");
    } catch (const AbiError& e) {
      expect(e.status == KILN_STATUS_INVALID_ARGUMENT,
             what + " failed with status " + std::to_string(e.status) + ", not INVALID_ARGUMENT");
    }
  }
  // The buffer's first `want.size()` bytes must be `want`.
  void expect_bytes(const Target& t, kiln_buffer* buffer, const std::vector<std::uint8_t>& want,
                    const std::string& after) {
    std::vector<std::uint8_t> got(want.size());
    t.plugin.read(t.device, buffer, got.data(), got.size());
    const auto [at, _] = std::mismatch(got.begin(), got.end(), want.begin());
    if (at == got.end()) return;
    const auto i = static_cast<std::size_t>(at - got.begin());
    expect(false, after + ": byte " + std::to_string(i) + " is " + std::to_string(got[i]) + ", not " +
                      std::to_string(want[i]));
  }
  Verdict verdict() const { return text_.empty() ? Verdict::pass() : Verdict::fail(text_); }

 private:
  std::string text_;
};

// A case may also throw: AbiError UNSUPPORTED / NOT_IMPLEMENTED is
// "unsupported" (a legal answer at compile), any other exception "failed".
struct Case {
  std::string name;
  std::function<Verdict(const Target&)> run;
};

// Runs `ops` on the interpreter and on the device and compares argument
// `out_slot` of the two.
Verdict matches_interpreter(const Target& target, const std::vector<kiln_op>& ops, std::vector<HostArg> args,
                            std::size_t out_slot, const Tolerance& tolerance);

// The plugin table: struct_size, name, version and init's functions
// (`before_init`), or all that and every function the kit calls. Failed
// when the plugin cannot be used at all.
Verdict check_table(const kiln_plugin_api& api, bool before_init);

// "compile, launch": the kernel functions the table leaves NULL; empty
// when it has them all.
std::string missing_kernel_functions(const kiln_plugin_api& api);

// Unsupported when the plugin cannot run kernels at all (no compile,
// launch or program_release), else nullopt.
std::optional<Verdict> cannot_run_kernels(const Target& target);

// Device info, buffers, half floats, integer wrap, vectors, a minimal add.
std::vector<Case> abi_cases(const kiln_device_info& info);

// memory_cases.cpp: "device basics", "buffer and copy errors",
// "device-to-device copies" (abi_cases lists them).
Verdict device_basics(const Target& t);
Verdict buffer_errors(const Target& t);
Verdict device_copies(const Target& t);

// The shared kernel suite, one case per kernel; kernels whose work-groups
// do not fit the device are unsupported, with the sizes.
std::vector<Case> suite_cases(const kiln_device_info& info, bool quick, unsigned seed);

}  // namespace kiln::conformance::detail
