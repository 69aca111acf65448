#include "kiln/result.hpp"

#include <string>

namespace kiln {

std::string_view error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::InvalidArgument: return "invalid argument";
    case ErrorCode::Unsupported: return "unsupported";
    case ErrorCode::NotImplemented: return "not implemented";
    case ErrorCode::OutOfMemory: return "out of memory";
    case ErrorCode::CompileFailed: return "compile failed";
    case ErrorCode::LaunchFailed: return "launch failed";
    case ErrorCode::Unavailable: return "unavailable";
    case ErrorCode::DeviceLost: return "device lost";
    case ErrorCode::Internal: return "internal error";
    case ErrorCode::Timeout: return "timeout";
    case ErrorCode::Config: return "config error";
    case ErrorCode::Parse: return "parse error";
    case ErrorCode::Verify: return "invalid kernel";
    case ErrorCode::PluginLoad: return "plugin load error";
    case ErrorCode::NotFound: return "not found";
    case ErrorCode::Io: return "i/o error";
    case ErrorCode::Mismatch: return "result mismatch";
  }
  return "unknown error";
}

std::string Error::to_string() const {
  std::string out;
  if (!device.empty()) out += device + ": ";
  else if (!plugin.empty()) out += "plugin '" + plugin + "': ";
  if (!function.empty()) out += function + ": ";
  // Plugins often name the op themselves ("op 9 (store f32): ..."): say it once.
  const std::string op_prefix = "op " + std::to_string(op);
  if (op >= 0 && message.compare(0, op_prefix.size(), op_prefix) != 0) out += op_prefix + ": ";
  out += message;
  return out;
}

}  // namespace kiln
