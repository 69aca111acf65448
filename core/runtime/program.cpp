#include "kiln/runtime/program.hpp"

#include "device_state.hpp"
#include "plugin_text.hpp"
#include "kiln/compile_options.hpp"

#include <cstring>
#include <utility>

namespace kiln {

Program::~Program() {
  if (program_ == nullptr || !device_->alive()) return;
  {
    // The ABI requires that no submitted launch still uses the program.
    std::lock_guard lock(device_->queue_mutex());
    (void)device_->drain_locked();
  }
  if (device_->api().program_release != nullptr) device_->api().program_release(program_);
}

Program::Program(Program&& other) noexcept
    : device_(std::move(other.device_)),
      program_(std::exchange(other.program_, nullptr)),
      wire_(std::move(other.wire_)),
      bounds_checks_(std::move(other.bounds_checks_)),
      report_(std::move(other.report_)) {}

Program& Program::operator=(Program&& other) noexcept {
  if (this != &other) {
    Program dying(std::move(*this));
    device_ = std::move(other.device_);
    program_ = std::exchange(other.program_, nullptr);
    wire_ = std::move(other.wire_);
    bounds_checks_ = std::move(other.bounds_checks_);
    report_ = std::move(other.report_);
  }
  return *this;
}

const std::string& Program::device_id() const {
  static const std::string none = "(no device)";
  return device_ != nullptr ? device_->info().id : none;
}

const CompileReport& Program::compile_report() const {
  static const CompileReport none{};
  return report_ != nullptr ? *report_ : none;
}

Result<ProgramSource> Program::source() const {
  if (program_ == nullptr) return make_error(ErrorCode::InvalidArgument, "program_source: empty Program");
  if (device_->api().program_source == nullptr) return device_->missing("program_source");
  kiln_program_source_args args{};
  args.struct_size = KILN_PROGRAM_SOURCE_ARGS_STRUCT_SIZE;
  args.program = program_;
  if (kiln_error* err = device_->api().program_source(&args)) return device_->error(err, "program_source");
  ProgramSource source;
  if (args.language != nullptr)
    source.language = detail::sanitize_plugin_text(std::string_view(args.language, strnlen(args.language, 256)),
                                                   detail::TextKind::Line);
  if (args.text != nullptr)
    source.text = detail::sanitize_plugin_text(std::string_view(args.text, args.text_len), detail::TextKind::Paragraph);
  return source;
}

}  // namespace kiln
