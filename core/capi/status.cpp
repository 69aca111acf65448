// The C API's status objects (kiln_status_*) and strings (kiln_string_free).
#include "capi/handles.hpp"

#include <charconv>
#include <cstdlib>
#include <cstring>

namespace kiln::capi {

namespace {

// Returned when even a status cannot be allocated; never freed.
kiln_status_t* static_out_of_memory() {
  static kiln_status_t status{KILN_CODE_OUT_OF_MEMORY, "out of host memory", 0, 0, -1};
  return &status;
}

// IR text errors start "LINE:COL:" (ir/text.hpp); keep both as numbers too.
void read_position(kiln_status_t& status, const std::string& message) {
  const char* begin = message.data();
  const char* end = begin + message.size();
  std::uint32_t line = 0, column = 0;
  auto [after_line, e1] = std::from_chars(begin, end, line);
  if (e1 != std::errc() || after_line == end || *after_line != ':') return;
  auto [after_column, e2] = std::from_chars(after_line + 1, end, column);
  if (e2 != std::errc() || after_column == end || *after_column != ':') return;
  status.line = line;
  status.column = column;
}

}  // namespace

kiln_status_t* out_of_memory_status() {
  try {
    return new kiln_status_t{KILN_CODE_OUT_OF_MEMORY, "out of host memory", 0, 0, -1};
  } catch (...) {
    return static_out_of_memory();
  }
}

kiln_status_t* make_status(kiln_code_t code, std::string message) {
  try {
    auto* status = new kiln_status_t;
    status->code = code;
    status->message = std::move(message);
    return status;
  } catch (...) {
    return static_out_of_memory();
  }
}

kiln_status_t* make_status(const Error& error) {
  try {
    auto* status = new kiln_status_t;
    status->code = static_cast<kiln_code_t>(static_cast<int>(error.code));
    status->message = error.to_string();
    status->op = error.op;
    if (error.code == ErrorCode::Parse) read_position(*status, error.message);
    return status;
  } catch (...) {
    return static_out_of_memory();
  }
}

kiln_status_t* null_argument(const char* function, const char* argument) {
  return make_status(KILN_CODE_INVALID_ARGUMENT, std::string(function) + ": " + argument + " is NULL");
}

char* copy_string(const std::string& text) {
  char* out = static_cast<char*>(std::malloc(text.size() + 1));
  if (out == nullptr) throw std::bad_alloc();
  std::memcpy(out, text.c_str(), text.size() + 1);
  return out;
}

kiln_status_t* check_struct(const char* function, const void* out, std::size_t struct_size, std::size_t needed) {
  if (out == nullptr) return null_argument(function, "the out-struct");
  if (struct_size < needed)
    return make_status(KILN_CODE_INVALID_ARGUMENT, std::string(function) + ": struct_size " +
                                                       std::to_string(struct_size) + " is smaller than " +
                                                       std::to_string(needed) + " (set it to the *_T_SIZE macro)");
  return nullptr;
}

}  // namespace kiln::capi

extern "C" {

kiln_code_t kiln_status_code(const kiln_status_t* status) { return status ? status->code : KILN_CODE_OK; }
const char* kiln_status_message(const kiln_status_t* status) { return status ? status->message.c_str() : ""; }
uint32_t kiln_status_line(const kiln_status_t* status) { return status ? status->line : 0; }
uint32_t kiln_status_column(const kiln_status_t* status) { return status ? status->column : 0; }
int64_t kiln_status_op(const kiln_status_t* status) { return status ? status->op : -1; }

void kiln_status_free(kiln_status_t* status) {
  if (status != kiln::capi::static_out_of_memory()) delete status;
}

const char* kiln_code_name(kiln_code_t code) {
  if (code == KILN_CODE_OK) return "ok";
  // error_code_name's views are of string literals: NUL-terminated.
  return kiln::error_code_name(static_cast<kiln::ErrorCode>(code)).data();
}

void kiln_string_free(char* text) { std::free(text); }

}  // extern "C"
