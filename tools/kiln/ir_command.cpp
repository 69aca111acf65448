// kiln ir FILE: read a kernel in IR text, verify it, and print it; or apply
// an optimization sequence (--opt), one pass (--pass), list the tunable
// optimizations' configs (--configs), estimate its cost (--cost), or run it
// on the reference interpreter with random inputs (--run). --device picks
// what to optimize for: a runtime device id (c:0) or a preset (preset:gpu,
// preset:small, preset:cpu; default preset:gpu, so that no plugin is
// needed). --json prints one JSON object instead of text.
#include "commands.hpp"
#include "ir_file.hpp"
#include "ir_run.hpp"

#include <kiln/ir/hash.hpp>
#include <kiln/ir/text.hpp>
#include <kiln/ir/verify.hpp>
#include <kiln/passes/bounds.hpp>
#include <kiln/passes/cost.hpp>
#include <kiln/passes/device_presets.hpp>
#include <kiln/passes/optimization.hpp>
#include <kiln/passes/pipeline.hpp>

#include <kiln/kernels/library.hpp>

#include <boost/json.hpp>
#include <fmt/core.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

namespace kiln::cli {

namespace {

namespace json = boost::json;

constexpr std::string_view kDefaultDevice = "preset:gpu";

struct IrOptions {
  std::string file;
  std::string sequence;
  bool has_sequence = false;
  std::string pass;
  std::string device;
  std::vector<double> scalars;
  std::int64_t size = 1024;  // of a standard kernel named instead of a file
  bool configs = false;
  bool cost = false;
  bool run = false;
  bool json = false;
};


// Parses and verifies; errors name FILE:LINE:COL (parse) or FILE:LINE (verify).
// A standard kernel's name (matmul, exp-chain, ...) that is not a file gives
// that kernel at `size` in every dimension.
ir::Kernel read_kernel(const std::string& file, std::int64_t size) {
  if (!std::filesystem::exists(file)) {
    for (std::string_view name : kernels::standard_kernel_names())
      if (name == file) {
        Result<kernels::StandardKernel> standard = kernels::make_standard_kernel(file, {size, size, size});
        if (!standard) fail(standard.error());
        return std::move(standard->kernel);
      }
  }
  return read_ir_file(file);
}

DeviceInfo resolve_device(const std::string& id, const GlobalOptions& global) {
  const std::string wanted = id.empty() ? std::string(kDefaultDevice) : id;
  if (auto preset = passes::device_preset(wanted)) return *preset;
  if (wanted.starts_with("preset:")) {
    std::string names;
    for (std::string_view name : passes::device_preset_names()) names += (names.empty() ? "" : ", ") + std::string(name);
    fail(make_error(ErrorCode::NotFound, "no device preset '" + wanted + "' (presets: " + names + ")"));
  }
  const Runtime runtime = open_runtime(global, {wanted});
  Result<Device> device = runtime.device(wanted);
  if (!device.ok()) fail(device.error());
  return device->info();
}

// The values of VARIABLE params by slot, from --scalars in slot order.
std::vector<std::int64_t> variables_of(const ir::Kernel& kernel, const std::vector<double>& scalars) {
  std::vector<std::int64_t> values;
  std::size_t next = 0;
  for (const ir::Op& op : kernel.ops) {
    if (op.kind != ir::OpKind::Param) continue;
    if (values.size() <= op.attr) values.resize(op.attr + 1, 0);
    if (op.param_kind() == ir::ParamKind::Variable && next < scalars.size())
      values[op.attr] = static_cast<std::int64_t>(scalars[next++]);
  }
  return values;
}

json::object cost_json(const passes::CostEstimate& c) {
  return {{"total_ns", c.total_ns},         {"launch_ns", c.launch_ns},
          {"compute_ns", c.compute_ns},     {"global_memory_ns", c.global_memory_ns},
          {"local_memory_ns", c.local_memory_ns}, {"barrier_ns", c.barrier_ns},
          {"occupancy", c.occupancy},       {"flops", c.flops},
          {"global_bytes", c.global_bytes}};
}

void print_cost(const passes::CostEstimate& c, const DeviceInfo& device) {
  fmt::print("cost on {}: {:.1f} us\n", device.id, c.total_ns / 1000);
  fmt::print("  launch        {:>12.1f} ns\n  compute       {:>12.1f} ns\n  global memory {:>12.1f} ns\n", c.launch_ns,
             c.compute_ns, c.global_memory_ns);
  fmt::print("  local memory  {:>12.1f} ns\n  barriers      {:>12.1f} ns\n", c.local_memory_ns, c.barrier_ns);
  fmt::print("  occupancy {:.3f}, {:.4g} flops, {:.4g} global bytes\n", c.occupancy, c.flops, c.global_bytes);
}

void run_ir_command(const IrOptions& o, const GlobalOptions& global) {
  ir::Kernel kernel = read_kernel(o.file, o.size);
  const bool needs_device = o.has_sequence || !o.pass.empty() || o.configs || o.cost;
  const DeviceInfo device = needs_device ? resolve_device(o.device, global) : DeviceInfo{};
  json::object report{{"file", o.file}};
  if (needs_device) report["device"] = device.id;

  if (!o.pass.empty()) {
    const passes::Pass* pass = passes::find_pass(o.pass);
    if (pass == nullptr) {
      std::string names;
      for (const auto* list : {&passes::always_on_passes(), &passes::finalize_passes()})
        for (const passes::Pass& p : *list) names += (names.empty() ? "" : ", ") + std::string(p.name);
      fail(make_error(ErrorCode::NotFound, "no pass named '" + o.pass + "' (passes: " + names + ")"));
    }
    kernel = pass->run(kernel, device);
    report["pass"] = o.pass;
  }
  if (o.has_sequence) {
    Result<passes::OptSequence> sequence = passes::parse_sequence(o.sequence);
    if (!sequence.ok()) fail(sequence.error());
    Result<ir::Kernel> optimized = passes::optimize(kernel, *sequence, device);
    if (!optimized.ok()) fail(optimized.error());
    kernel = std::move(optimized).value();
    report["sequence"] = passes::to_string(*sequence);
  }
  report["hash"] = ir::hash_hex(kernel);
  report["kernel"] = ir::print(kernel);

  const bool print_kernel = !o.configs && !o.cost && !o.run;
  if (print_kernel && !o.json) fmt::print("{}", ir::print(kernel));

  if (o.configs) {
    const ir::Kernel normalized = passes::normalize(kernel, device);
    json::array configs;
    for (const passes::Optimization* opt : passes::optimizations())
      for (const passes::OptStep& step : opt->configs(normalized, device)) {
        configs.emplace_back(step.to_string());
        if (!o.json) fmt::print("{}\n", step.to_string());
      }
    if (passes::optimizations().empty()) fmt::print(stderr, "kiln: note: no tunable optimizations are registered\n");
    report["configs"] = std::move(configs);
  }
  if (o.cost) {
    const std::vector<std::int64_t> variables = variables_of(kernel, o.scalars);
    const passes::CostEstimate cost = passes::estimate_cost(kernel, device, variables);
    if (!o.json) print_cost(cost, device);
    report["cost"] = cost_json(cost);
  }
  if (o.run) {
    // The interpreter checks every access itself; the config's bounds policy
    // still decides, so `ir --run` refuses or guards what a device would.
    std::optional<std::filesystem::path> file;
    if (!global.config_file.empty()) file = global.config_file;
    Result<Config> config = load_config(file);
    if (!config.ok()) fail(config.error());
    Result<passes::BoundedKernel> bounded = passes::apply_bounds_policy(kernel, config->bounds);
    if (!bounded.ok()) fail(bounded.error());
    if (bounded->guarded != 0 && !o.json)
      fmt::print(stderr, "kiln: note: bounds policy \"guard\": {} access(es) guarded\n", bounded->guarded);
    report["guarded"] = bounded->guarded;
    Result<std::vector<OutputSummary>> outputs =
        run_with_random_inputs(bounded->kernel, o.scalars, bounded->launch_checks);
    if (!outputs.ok()) fail(outputs.error());
    json::array list;
    for (const OutputSummary& s : *outputs) {
      if (!o.json) fmt::print("{}\n", describe(s));
      list.push_back(summary_json(s));
    }
    report["outputs"] = std::move(list);
  }
  if (o.json) fmt::print("{}\n", json::serialize(report));
}

}  // namespace

void add_ir_command(CLI::App& app, const GlobalOptions& global) {
  CLI::App* command = app.add_subcommand("ir", "Read, verify and print a kernel in IR text; optimize, cost or run it");
  auto o = std::make_shared<IrOptions>();
  command->add_option("FILE", o->file, "kernel in IR text ('-': standard input), or a standard kernel's name")->required();
  command->add_option("--size", o->size, "every dimension of a standard kernel named as FILE")->capture_default_str();
  command->add_option_function<std::string>(
      "--opt",
      [o](const std::string& sequence) {
        o->sequence = sequence;
        o->has_sequence = true;
      },
      "optimize with this sequence (e.g. \"split_local(axis=0,factor=64); unroll(loop=0)\"; \"\" for the always-on "
      "passes only) and print the result");
  command->add_option("--pass", o->pass, "run one always-on or finalize pass (e.g. licm, cse, dce) and print the result");
  command->add_flag("--configs", o->configs, "list every tunable optimization's configs for the device, one step per line");
  command->add_flag("--cost", o->cost, "print the cost model's estimate for the device");
  command->add_flag("--run", o->run, "run on the reference interpreter with random inputs and summarize the outputs");
  command->add_option("--scalars", o->scalars, "values of the var params, in slot order (for --run and --cost)")
      ->delimiter(',');
  command->add_option("--device", o->device,
                      "device to optimize for: a runtime device id (c:0) or preset:gpu, preset:h200, preset:small, preset:cpu "
                      "(default preset:gpu)");
  command->add_flag("--json", o->json, "print one JSON object instead of text");
  command->callback([o, &global] { run_ir_command(*o, global); });
}

}  // namespace kiln::cli
