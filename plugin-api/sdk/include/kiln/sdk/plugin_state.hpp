// kiln/sdk/plugin_state.hpp - the one process-wide state a plugin builds in
// init and drops in shutdown, with the checked accessor every table function
// reads it through.
//
//   sdk::PluginState<State> g_state("cuda");     // plugin.cpp
//   init:     g_state.set(std::move(built));     // only once fully built
//   shutdown: g_state.reset();
//   others:   g_state.get()                      // throws before init / after shutdown
#pragma once

#include "kiln/sdk/plugin_support.hpp"

#include <memory>
#include <string>
#include <utility>

namespace kiln::sdk {

template <class State>
class PluginState {
 public:
  explicit constexpr PluginState(const char* plugin_name) : plugin_name_(plugin_name) {}
  PluginState(const PluginState&) = delete;
  PluginState& operator=(const PluginState&) = delete;
  // Deliberately leaves the state alone: a host that exits without calling
  // shutdown must not have driver objects torn down by a static destructor,
  // after the driver may already have torn down its own.
  ~PluginState() = default;

  bool ready() const { return state_ != nullptr; }

  // The state between a successful init and shutdown; INVALID_ARGUMENT
  // outside that window.
  State& get() const {
    if (state_ == nullptr)
      fail(KILN_STATUS_INVALID_ARGUMENT,
           std::string("the ") + plugin_name_ + " plugin is not initialised (init not called or failed)");
    return *state_;
  }

  // Replaces the state (the old one, if any, is destroyed first).
  void set(std::unique_ptr<State> state) {
    reset();
    state_ = state.release();
  }

  void reset() { delete std::exchange(state_, nullptr); }

 private:
  const char* plugin_name_;
  State* state_ = nullptr;  // a raw pointer: constant-initialized, never destroyed at exit
};

}  // namespace kiln::sdk
