// tools/kiln/input_file.hpp - reading a file the user names (an IR file, a
// tuning-database export), bounded: a regular file of at most `max_bytes`,
// or "-" for standard input, read up to the same limit. `kiln ir /dev/zero`
// used to read forever; a device or a FIFO is now refused by name.
#pragma once

#include "commands.hpp"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <istream>
#include <string>

namespace kiln::cli {

inline constexpr std::uint64_t kMaxIrFileBytes = std::uint64_t{64} << 20;       // 64 MiB of IR text
inline constexpr std::uint64_t kMaxExportFileBytes = std::uint64_t{1} << 30;    // 1 GiB of tuning records

namespace detail {
inline std::string read_bounded(std::istream& in, const std::string& name, std::uint64_t max_bytes) {
  std::string text;
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    text.append(chunk, static_cast<std::size_t>(in.gcount()));
    if (text.size() > max_bytes)
      throw CommandFailed(name + ": larger than the " + std::to_string(max_bytes >> 20) + " MiB this command reads");
  }
  if (in.bad()) throw CommandFailed("cannot read " + name);
  return text;
}
}  // namespace detail

// The whole text of `file` ("-": standard input). Throws CommandFailed
// naming the file when it is missing, not a regular file, or too large.
inline std::string read_input_file(const std::string& file, std::uint64_t max_bytes) {
  if (file == "-") return detail::read_bounded(std::cin, "standard input", max_bytes);
  std::error_code ec;
  const auto status = std::filesystem::status(file, ec);
  if (ec || !std::filesystem::exists(status)) throw CommandFailed("cannot read '" + file + "': no such file");
  if (!std::filesystem::is_regular_file(status))
    throw CommandFailed("cannot read '" + file + "': not a regular file (a device, folder or pipe)");
  const std::uint64_t size = std::filesystem::file_size(file, ec);
  if (!ec && size > max_bytes)
    throw CommandFailed("'" + file + "' is " + std::to_string(size) + " bytes, more than the " +
                        std::to_string(max_bytes >> 20) + " MiB this command reads");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw CommandFailed("cannot read '" + file + "'");
  return detail::read_bounded(in, "'" + file + "'", max_bytes);
}

}  // namespace kiln::cli
