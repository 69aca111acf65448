// conformance_child.hpp's pipe records: {"start": {name, device}} and
// {"end": {name, device, status, reason}}, one JSON object a line.
#include "conformance_child.hpp"

#include <boost/json.hpp>

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string_view>

namespace kiln::cli {

namespace {

namespace conf = kiln::conformance;

conf::CaseStatus status_of(std::string_view name) {
  if (name == "passed") return conf::CaseStatus::passed;
  if (name == "unsupported") return conf::CaseStatus::unsupported;
  return conf::CaseStatus::failed;
}

void take_record(std::string_view line, StreamedCases& cases) {
  boost::system::error_code ec;
  const boost::json::value record = boost::json::parse(line, ec);
  if (ec || !record.is_object()) return;
  const boost::json::object& o = record.as_object();
  if (const boost::json::value* start = o.if_contains("start")) {
    cases.running = conf::CaseResult{std::string(start->at("name").as_string()),
                                     static_cast<std::uint32_t>(start->at("device").to_number<std::uint64_t>()),
                                     conf::CaseStatus::failed, {}};
  } else if (const boost::json::value* done = o.if_contains("end")) {
    const boost::json::value& device = done->at("device");
    cases.ended.push_back({std::string(done->at("name").as_string()),
                           device.is_null() ? std::nullopt
                                            : std::optional<std::uint32_t>(device.to_number<std::uint64_t>()),
                           status_of(done->at("status").as_string()), std::string(done->at("reason").as_string())});
    cases.running.reset();
  }
}

}  // namespace

void CaseStream::started(const std::string& name, std::uint32_t device) const {
  send(boost::json::serialize(boost::json::object{{"start", {{"name", name}, {"device", device}}}}));
}

void CaseStream::ended(const conf::CaseResult& c) const {
  boost::json::object o{{"name", c.name}, {"status", conf::status_name(c.status)}, {"reason", c.reason}};
  o["device"] = c.device ? boost::json::value(*c.device) : boost::json::value(nullptr);
  send(boost::json::serialize(boost::json::object{{"end", std::move(o)}}));
}

void CaseStream::send(const std::string& record) const {
  const std::string line = record + "\n";
  for (std::size_t done = 0; done < line.size();) {
    const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the parent is gone: nothing to tell
    done += static_cast<std::size_t>(n);
  }
}

StreamedCases read_cases(int fd, double timeout_s) {
  StreamedCases cases;
  std::string text;
  char buffer[4096];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    const int wait_ms = timeout_s > 0 ? static_cast<int>(std::min(timeout_s * 1000, 2e9)) : -1;
    const int ready = ::poll(&p, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      cases.timed_out = true;
      return cases;
    }
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return cases;
    text.append(buffer, static_cast<std::size_t>(n));
    for (std::size_t end; (end = text.find('\n')) != std::string::npos; text.erase(0, end + 1))
      take_record(std::string_view(text).substr(0, end), cases);
  }
}

}  // namespace kiln::cli
