// The interpreter's engine: runs a decoded program over a launch grid.
//
// Lanes: the threads of a batch of consecutive work-groups, group-major
// (lane = group_in_batch * threads_per_group + linear thread id). Every value
// slot holds one u64 per lane, so an op is one pass over a contiguous row.
// Control flow keeps one active mask per nesting level: entering an IF or a
// LOOP computes the next level's mask from the current one; leaving it goes
// back a level (structured control flow needs nothing else).
#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "interpreter_program.hpp"
#include "kiln/sdk/plugin_support.hpp"

namespace kiln::sdk {

namespace {

using namespace interp;

constexpr std::uint64_t kTargetLanes = 256;            // lanes per batch to aim for
constexpr std::uint64_t kStateBudget = 64ull << 20;    // bytes of per-lane state to aim below
constexpr std::uint64_t kStateLimit = 1ull << 30;      // bytes of per-lane state never to exceed
constexpr std::uint32_t kManyReaders = UINT32_MAX;

std::string str(std::uint64_t v) { return std::to_string(v); }

// Race and initialisation record of one LOCAL element (per group).
struct Shadow {
  std::uint32_t write_phase;  // barrier phase of the last write (0: never written)
  std::uint32_t writer;       // lane of the last write
  std::uint32_t read_phase;   // phase of the last read
  std::uint32_t reader;       // lane of the reads in read_phase, or kManyReaders
  std::uint32_t pending;      // asynchronous copies into it not yet written (COPY_ASYNC)
};

// A COPY_ASYNC of one thread, written when a COPY_WAIT of that thread covers
// its group (kernel_ir.h: as late as a device may write it).
struct PendingCopy {
  const Instr* in;
  std::uint32_t lane;
  std::uint32_t group;  // the thread's count of commits when it was issued
  u64 index;
  unsigned char bytes[kCopyAsyncBytes];  // the value, encoded as in memory
};

// A WGMMA of one thread, done when a WGMMA_WAIT of that thread covers its
// group (kernel_ir.h: as late as a device may read and write).
struct PendingWgmma {
  const Instr* in;
  std::uint32_t lane;
  std::uint32_t group;  // the thread's count of wgmma commits when it was issued
  u64 a, b;             // the tiles' element indices
};

struct BoundMemory {
  unsigned char* base = nullptr;
  std::uint64_t elements = 0;
  std::uint64_t group_stride = 0;  // Local: bytes between the blocks of groups in a batch
  std::uint64_t lane_stride = 0;   // Register: bytes between the blocks of lanes
  const Memory* decl = nullptr;
};

class Engine {
 public:
  Engine(const ProgramData& program, std::span<const kiln_arg> args, const LaunchGrid* grid,
         const RunOptions& options)
      : p_(program), o_(options) {
    if (o_.warp_size == 0) o_.warp_size = 1;
    if (o_.sector_bytes == 0 || (o_.sector_bytes & (o_.sector_bytes - 1)) != 0)
      fail(KILN_STATUS_INVALID_ARGUMENT, "RunOptions::sector_bytes must be a power of two");
    sector_shift_ = static_cast<unsigned>(std::countr_zero(o_.sector_bytes));
    bind_arguments(args, grid);
  }

  ExecStats run() {
    plan_batches();
    fill_launch_slots();
    if (!o_.only_groups.empty()) {
      for (std::uint64_t group : o_.only_groups) {
        if (group >= total_groups_)
          fail(KILN_STATUS_INVALID_ARGUMENT, "RunOptions::only_groups names group " + str(group) + " of a grid of " +
                                                 str(total_groups_) + " groups");
        start_batch(group, 1);
        execute();
      }
      return stats_;
    }
    for (std::uint64_t first = 0; first < total_groups_; first += groups_per_batch_) {
      start_batch(first, std::min(groups_per_batch_, total_groups_ - first));
      execute();
    }
    return stats_;
  }

 private:
  // ------------------------------------------------------------- setup --

  [[noreturn]] void arg_error(std::uint32_t slot, const std::string& what) const {
    fail(KILN_STATUS_INVALID_ARGUMENT, "argument " + str(slot) + " (param op " + str(p_.param_ops[slot]) + "): " + what,
         p_.param_ops[slot]);
  }

  void bind_arguments(std::span<const kiln_arg> args, const LaunchGrid* grid) {
    if (args.size() != p_.param_ops.size())
      fail(KILN_STATUS_INVALID_ARGUMENT, "kernel has " + str(p_.param_ops.size()) + " params but " +
                                             str(args.size()) + " arguments were given");
    for (std::uint32_t slot = 0; slot < args.size(); ++slot) {
      const kiln_op& op = p_.ops[p_.param_ops[slot]];
      const kiln_arg& arg = args[slot];
      if (op.code == KILN_PARAM_VARIABLE) {
        if (arg.kind != KILN_ARG_SCALAR) arg_error(slot, "a VARIABLE param needs a SCALAR argument");
        if (arg.dtype != op.dtype)
          arg_error(slot, "scalar dtype " + std::string(dtype_name(arg.dtype)) + " differs from the param's " +
                              std::string(dtype_name(op.dtype)));
        if (!wire_bits_fit(op.dtype, arg.scalar_bits))
          arg_error(slot, "scalar bits do not hold a " + std::string(dtype_name(op.dtype)) + " (zero-extended)");
        continue;
      }
      if (arg.kind != KILN_ARG_BUFFER) arg_error(slot, "a GLOBAL param needs a BUFFER argument");
      const std::uint64_t bytes = dtype_bytes(op.dtype);
      if (arg.bytes != 0 && arg.host_pointer == nullptr) arg_error(slot, "host_pointer is NULL");
      if (op.imm != 0 && arg.bytes / bytes < op.imm)
        arg_error(slot, "buffer of " + str(arg.bytes) + " bytes is shorter than the " + str(op.imm) + " " +
                            std::string(dtype_name(op.dtype)) + " elements the kernel declares");
    }
    args_ = args;
    // A launch grid given by the host must be the kernel's.
    grid_ = compute_grid(p_.ops, args);
    if (grid != nullptr && (grid->groups != grid_.groups || grid->local != grid_.local))
      fail(KILN_STATUS_INVALID_ARGUMENT, "launch grid " + describe(*grid) + " differs from the kernel's " +
                                             describe(grid_) + " (computed from its INDEX ops)");
    total_groups_ = 1;
    for (std::uint64_t g : grid_.groups)
      if (__builtin_mul_overflow(total_groups_, g, &total_groups_))
        fail(KILN_STATUS_INVALID_ARGUMENT, "launch grid " + describe(grid_) + " has more than 2^64 groups");
  }

  static std::string describe(const LaunchGrid& g) {
    return "groups (" + str(g.groups[0]) + "," + str(g.groups[1]) + "," + str(g.groups[2]) + ") local (" +
           str(g.local[0]) + "," + str(g.local[1]) + "," + str(g.local[2]) + ")";
  }

  void plan_batches() {
    threads_ = p_.threads_per_group;
    const std::uint64_t local_block = (p_.local_bytes + 15) / 16 * 16;
    const std::uint64_t register_block = (p_.register_bytes + 15) / 16 * 16;
    const bool check = o_.check_storage;
    // Bytes of interpreter state per thread and per group.
    const std::uint64_t per_thread = std::uint64_t{p_.slot_count} * 8 + (p_.max_depth + 1) + register_block +
                                     (check ? p_.register_elements : 0) + 16;
    const std::uint64_t per_group = per_thread * threads_ + local_block + (check ? p_.local_elements * sizeof(Shadow) : 0);
    if (per_group > kStateLimit)
      fail(KILN_STATUS_LAUNCH_FAILED, "the kernel needs " + str(per_group) +
                                          " bytes of interpreter state per work-group, more than its limit of " +
                                          str(kStateLimit));
    std::uint64_t batch = std::max<std::uint64_t>(1, kTargetLanes / threads_);
    batch = std::min(batch, std::max<std::uint64_t>(1, kStateBudget / per_group));
    groups_per_batch_ = std::min(batch, total_groups_);
    lanes_ = static_cast<std::size_t>(std::max<std::uint64_t>(groups_per_batch_, 1) * threads_);

    vals_.assign(std::size_t{p_.slot_count} * lanes_, 0);
    masks_.assign(std::size_t{p_.max_depth + 1} * lanes_, 0);
    level_active_.assign(p_.max_depth + 1, 0);
    level_warps_.assign(p_.max_depth + 1, 0);
    lane_group_.resize(lanes_);
    warp_first_.resize(lanes_);
    for (std::size_t l = 0; l < lanes_; ++l) {
      lane_group_[l] = static_cast<std::uint32_t>(l / threads_);
      warp_first_[l] = (l % threads_) % o_.warp_size == 0;
    }
    local_.assign(groups_per_batch_ * local_block, 0);
    registers_.assign(lanes_ * register_block, 0);
    if (check) {
      shadow_.assign(groups_per_batch_ * p_.local_elements, Shadow{});
      written_.assign(lanes_ * p_.register_elements, 0);
    }
    if (o_.global_writes != nullptr) o_.global_writes->resize(args_.size());
    mem_.resize(p_.memories.size());
    for (std::size_t i = 0; i < p_.memories.size(); ++i) {
      const Memory& decl = p_.memories[i];
      BoundMemory& m = mem_[i];
      m.decl = &decl;
      switch (decl.space) {
        case Space::Global: {
          const kiln_arg& arg = args_[decl.param_slot];
          m.base = static_cast<unsigned char*>(arg.host_pointer);
          m.elements = decl.elements != 0 ? decl.elements : arg.bytes / dtype_bytes(decl.dtype);
          break;
        }
        case Space::Local:
          m.base = local_.data() + decl.offset;
          m.elements = decl.elements;
          m.group_stride = local_block;
          break;
        case Space::Register:
          m.base = registers_.data() + decl.offset;
          m.elements = decl.elements;
          m.lane_stride = register_block;
          break;
      }
    }

    accumulator_.assign(mem_.size(), 0);
    for (const Instr& i : p_.code)
      if (i.exec == Exec::Wgmma) accumulator_[i.c] = 1;

    stats_.groups = total_groups_;
    stats_.threads_per_group = threads_;
    stats_.threads = total_groups_ * threads_;
    stats_.warp_size = o_.warp_size;
    stats_.warps = total_groups_ * ((threads_ + o_.warp_size - 1) / o_.warp_size);
    stats_.local_bytes_per_group = p_.local_bytes;
    stats_.register_bytes_per_thread = p_.register_bytes;
  }

  // Values that are the same in every batch: constants, scalar arguments and
  // thread ids within a group.
  void fill_launch_slots() {
    for (const ConstSlot& c : p_.consts) std::fill_n(slot(c.slot), lanes_, c.value);
    for (const VariableSlot& v : p_.variables)
      std::fill_n(slot(v.slot), lanes_, slot_from_wire_bits(v.dtype, args_[v.param_slot].scalar_bits));
    for (const IndexSlot& index : p_.local_indices) {
      u64* row = slot(index.slot);
      for (std::size_t l = 0; l < lanes_; ++l) row[l] = thread_coords(l % threads_)[index.axis];
    }
  }

  void start_batch(std::uint64_t first_group, std::uint64_t groups) {
    batch_first_ = first_group;
    n_lanes_ = static_cast<std::size_t>(groups * threads_);
    stats_.executed_ops += n_lanes_;  // starting a thread counts against the op budget
    // So does clearing the batch's storage below, one op per 64 bytes: a
    // kernel with 1 MiB of REGISTER storage per thread and nothing else to
    // do would otherwise clear megabytes per op of the budget (fuzzing found
    // a run that the budget of a millisecond kept busy for seconds).
    clearing_cost_ += (local_.size() + registers_.size()) / 64;
    if (o_.check_storage) clearing_cost_ += (shadow_.size() * sizeof(Shadow) + written_.size()) / 64;
    if (o_.max_ops != 0 && stats_.executed_ops + clearing_cost_ > o_.max_ops)
      fail(KILN_STATUS_LAUNCH_FAILED, "stopped after " + str(stats_.executed_ops) + " executed ops (" +
                                          str(first_group) + " of " + str(total_groups_) +
                                          " groups started), over the limit of " + str(o_.max_ops) +
                                          " (RunOptions::max_ops)");
    for (const IndexSlot& index : p_.group_indices) {
      u64* row = slot(index.slot);
      for (std::size_t l = 0; l < n_lanes_; ++l) row[l] = group_coords(first_group + lane_group_[l])[index.axis];
    }
    std::fill_n(mask(0), n_lanes_, std::uint8_t{1});
    level_ = 0;
    n_active_ = n_lanes_;
    n_active_warps_ = count_warps(mask(0));
    std::fill(local_.begin(), local_.end(), 0);
    std::fill(registers_.begin(), registers_.end(), 0);
    // Copies a finished batch never waited for are dropped, as a device's
    // are when the thread exits.
    pending_copies_.clear();
    copy_groups_.assign(n_lanes_, 0);
    pending_wgmmas_.clear();
    wgmma_groups_.assign(n_lanes_, 0);
    wgmma_fenced_.assign(n_lanes_, 0);
    accumulator_pending_.assign(n_lanes_ * mem_.size(), 0);
    if (o_.check_storage) {
      std::fill(shadow_.begin(), shadow_.end(), Shadow{});
      std::fill(written_.begin(), written_.end(), 0);
      phase_ = 1;
    }
  }

  // --------------------------------------------------------- execution --

  void execute() {
    const Instr* code = p_.code.data();
    const std::size_t count = p_.code.size();
    std::size_t pc = 0;
    while (pc < count) {
      const Instr& in = code[pc];
      stats_.executed_ops += n_active_;
      if (in.op_class != OpClass::Count) {
        const auto c = static_cast<std::size_t>(in.op_class);
        stats_.thread_ops[c] += n_active_ * in.lanes;
        stats_.warp_ops[c] += n_active_warps_ * in.lanes;
      }
      switch (in.exec) {
        case Exec::Elementwise: elementwise(in); ++pc; break;
        case Exec::Load: (this->*kLoads[in.dtype])(in); ++pc; break;
        case Exec::Store: (this->*kStores[in.dtype])(in); ++pc; break;
        case Exec::Select: select(in); ++pc; break;
        case Exec::Broadcast: broadcast(in); ++pc; break;
        case Exec::Insert: insert(in); ++pc; break;
        case Exec::Extract: std::copy_n(slot(in.a + in.aux), n_lanes_, slot(in.dst)); ++pc; break;
        case Exec::If: pc = enter_if(in, pc); break;
        case Exec::EndIf: leave_level(); ++pc; break;
        case Exec::Loop: pc = enter_loop(in, pc); break;
        case Exec::EndLoop: pc = end_loop(in, pc); break;
        case Exec::Barrier: barrier(in); ++pc; break;
        case Exec::Mma: mma(in); ++pc; break;
        case Exec::SubgroupReduce: subgroup_reduce(in); ++pc; break;
        case Exec::CopyAsync: (this->*kCopies[in.dtype])(in); ++pc; break;
        case Exec::CopyCommit: copy_commit(); ++pc; break;
        case Exec::CopyWait: copy_wait(in); ++pc; break;
        case Exec::LoadMatrix: (this->*kMatrixLoads[in.dtype])(in); ++pc; break;
        case Exec::Wgmma: wgmma(in); ++pc; break;
        case Exec::WgmmaFence: wgmma_fence(); ++pc; break;
        case Exec::WgmmaCommit: wgmma_commit(); ++pc; break;
        case Exec::WgmmaWait: wgmma_wait(in); ++pc; break;
      }
    }
  }

  u64* slot(std::uint32_t s) { return vals_.data() + std::size_t{s} * lanes_; }
  std::uint8_t* mask(std::uint32_t level) { return masks_.data() + std::size_t{level} * lanes_; }

  void elementwise(const Instr& in) {
    Row row{nullptr, nullptr, nullptr, nullptr, n_lanes_, in.shift, mask(level_)};
    for (std::uint32_t j = 0; j < in.lanes; ++j) {
      row.out = slot(in.dst + j);
      row.a = slot(in.a + j);
      if (in.operands > 1) row.b = slot(in.b + j);
      if (in.operands > 2) row.c = slot(in.c + j);
      (void)in.fn(row);  // never faults: integer x / 0 and x % 0 are 0 (kernel_ir.h)
    }
  }

  void select(const Instr& in) {
    for (std::uint32_t j = 0; j < in.lanes; ++j) {
      const u64* cond = slot(in.a + (in.aux != 0 ? j : 0));
      const u64* yes = slot(in.b + j);
      const u64* no = slot(in.c + j);
      u64* out = slot(in.dst + j);
      for (std::size_t l = 0; l < n_lanes_; ++l) out[l] = (cond[l] & 1) != 0 ? yes[l] : no[l];
    }
  }

  void broadcast(const Instr& in) {
    for (std::uint32_t j = 0; j < in.lanes; ++j) std::copy_n(slot(in.a), n_lanes_, slot(in.dst + j));
  }

  void insert(const Instr& in) {
    for (std::uint32_t j = 0; j < in.lanes; ++j)
      std::copy_n(j == in.aux ? slot(in.b) : slot(in.a + j), n_lanes_, slot(in.dst + j));
  }

  // ------------------------------------------------------ control flow --

  std::uint64_t count_warps(const std::uint8_t* m) const {
    std::uint64_t warps = 0;
    bool any = false;
    for (std::size_t l = 0; l < n_lanes_; ++l) {
      if (warp_first_[l]) {
        warps += any;
        any = false;
      }
      any = any || m[l] != 0;
    }
    return warps + any;
  }

  // Makes mask level_ + 1 (already filled, `active` lanes set) current.
  void enter_level(std::uint64_t active) {
    level_active_[level_] = n_active_;
    level_warps_[level_] = n_active_warps_;
    ++level_;
    if (active != n_active_) n_active_warps_ = count_warps(mask(level_));
    n_active_ = active;
  }

  void leave_level() {
    --level_;
    n_active_ = level_active_[level_];
    n_active_warps_ = level_warps_[level_];
  }

  std::size_t enter_if(const Instr& in, std::size_t pc) {
    const u64* cond = slot(in.a);
    const std::uint8_t* parent = mask(level_);
    std::uint8_t* m = mask(level_ + 1);
    std::uint64_t active = 0;
    for (std::size_t l = 0; l < n_lanes_; ++l) {
      m[l] = parent[l] & static_cast<std::uint8_t>(cond[l] & 1);
      active += m[l];
    }
    if (active == 0) return in.jump;
    enter_level(active);
    return pc + 1;
  }

  std::size_t enter_loop(const Instr& in, std::size_t pc) {
    const u64* count = slot(in.a);
    u64* counter = slot(in.dst);
    u64* trip = slot(in.aux);
    const std::uint8_t* parent = mask(level_);
    std::uint8_t* m = mask(level_ + 1);
    std::uint64_t active = 0;
    for (std::size_t l = 0; l < n_lanes_; ++l) {
      counter[l] = 0;
      trip[l] = count[l];
      m[l] = parent[l] & static_cast<std::uint8_t>(static_cast<i64>(count[l]) > 0);
      active += m[l];
    }
    if (active == 0) return in.jump;
    enter_level(active);
    return pc + 1;
  }

  std::size_t end_loop(const Instr& in, std::size_t pc) {
    u64* counter = slot(in.dst);
    const u64* trip = slot(in.aux);
    std::uint8_t* m = mask(level_);
    std::uint64_t active = 0;
    for (std::size_t l = 0; l < n_lanes_; ++l) {
      counter[l] += 1;
      m[l] &= static_cast<std::uint8_t>(static_cast<i64>(counter[l]) < static_cast<i64>(trip[l]));
      active += m[l];
    }
    check_budget(in.op);
    if (active == 0) {
      leave_level();
      return pc + 1;
    }
    if (active != n_active_) {
      n_active_ = active;
      n_active_warps_ = count_warps(m);
    }
    return in.jump;
  }

  void check_budget(std::uint32_t op) const {
    if (o_.max_ops != 0 && stats_.executed_ops + clearing_cost_ > o_.max_ops)
      fail(KILN_STATUS_LAUNCH_FAILED, "op " + str(op) + " (" + std::string(op_kind_name(p_.ops[op].kind)) +
                                          "): stopped after " + str(stats_.executed_ops) +
                                          " executed ops, over the limit of " + str(o_.max_ops) +
                                          " (RunOptions::max_ops; a loop that runs too long?)",
           op);
  }

  void barrier(const Instr& in) {
    const std::uint8_t* m = mask(level_);
    std::uint64_t groups = n_lanes_ / threads_;  // when every thread is there
    if (n_active_ != n_lanes_) {
      groups = 0;
      for (std::size_t first = 0; first < n_lanes_; first += threads_) {
        std::uint64_t arrived = 0;
        for (std::size_t t = 0; t < threads_; ++t) arrived += m[first + t];
        if (arrived == 0) continue;
        if (arrived != threads_) {
          std::size_t in_lane = first, out_lane = first;
          while (!m[in_lane]) ++in_lane;
          while (m[out_lane]) ++out_lane;
          fault(in, in_lane,
                "divergent barrier at op " + str(in.op) + ": thread " + thread_name(out_lane) +
                    " of the same group does not reach it (a BARRIER inside an IF or LOOP that not all the "
                    "group's threads take)");
        }
        ++groups;
      }
    }
    stats_.barriers += groups;
    std::fill(wgmma_fenced_.begin(), wgmma_fenced_.end(), 0);  // kernel_ir.h: a fence after the last barrier
    if (o_.check_storage && ++phase_ == UINT32_MAX) {
      // Phases are only compared for equality (and 0 means "never written"):
      // renumber every past phase as 1 and go on from 2.
      for (Shadow& s : shadow_) {
        s.write_phase = s.write_phase != 0 ? 1 : 0;
        s.read_phase = 0;
      }
      phase_ = 2;
    }
  }

  // A warp collective: the 32 threads of each warp (consecutive lanes of one
  // group: validation made LOCAL axis 0 a multiple of 32) hand over their
  // fragments together. A warp that is only partly active is a kernel bug.
  void mma(const Instr& in) {
    const MmaShapeInfo info = mma_shape_info(in.aux);
    MmaRows rows{};
    for (unsigned i = 0; i < info.a_lanes; ++i) rows.a[i] = slot(in.a + i);
    for (unsigned i = 0; i < info.b_lanes; ++i) rows.b[i] = slot(in.b + i);
    for (unsigned i = 0; i < info.c_lanes; ++i) {
      rows.c[i] = slot(in.c + i);
      rows.d[i] = slot(in.dst + i);
    }
    const std::uint8_t* m = mask(level_);
    for (std::size_t first = 0; first < n_lanes_; first += kMmaWarp) {
      unsigned arrived = 0;
      for (unsigned t = 0; t < kMmaWarp; ++t) arrived += m[first + t];
      if (arrived == 0) continue;
      if (arrived != kMmaWarp) {
        std::size_t in_lane = first, out_lane = first;
        while (!m[in_lane]) ++in_lane;
        while (m[out_lane]) ++out_lane;
        fault(in, in_lane,
              "divergent mma at op " + str(in.op) + ": thread " + thread_name(out_lane) +
                  " of the same warp does not reach it (an MMA inside an IF or LOOP that not all the warp's "
                  "threads take)");
      }
      mma_warp(in.aux, in.input, rows, first);
    }
  }

  // A subgroup collective: `width` consecutive lanes of one group (their
  // linear local ids; validation made the group a multiple of the width)
  // combine their values. A subgroup that is only partly active is a kernel
  // bug, as for MMA.
  void subgroup_reduce(const Instr& in) {
    const std::uint8_t* m = mask(level_);
    for (std::size_t first = 0; first < n_lanes_; first += in.aux) {
      unsigned arrived = 0;
      for (unsigned t = 0; t < in.aux; ++t) arrived += m[first + t];
      if (arrived != 0 && arrived != in.aux) {
        std::size_t in_lane = first, out_lane = first;
        while (!m[in_lane]) ++in_lane;
        while (m[out_lane]) ++out_lane;
        fault(in, in_lane,
              "divergent subgroup_reduce at op " + str(in.op) + ": thread " + thread_name(out_lane) +
                  " of the same subgroup does not reach it (inside an IF or LOOP that not all the subgroup's "
                  "threads take)");
      }
    }
    subgroup_scratch_.resize(2 * n_lanes_);
    subgroup_reduce_rows(in.fn, in.shift, in.aux,
                         SubgroupRows{slot(in.a), slot(in.dst), subgroup_scratch_.data(),
                                      subgroup_scratch_.data() + n_lanes_, n_lanes_, m});
  }

  // ------------------------------------------------------------ memory --

  template <unsigned DT>
  void load(const Instr& in) {
    switch (mem_[in.a].decl->space) {
      case Space::Global: access<DT, Space::Global, false>(in); break;
      case Space::Local: access<DT, Space::Local, false>(in); break;
      case Space::Register: access<DT, Space::Register, false>(in); break;
    }
  }

  template <unsigned DT>
  void store(const Instr& in) {
    switch (mem_[in.a].decl->space) {
      case Space::Global: access<DT, Space::Global, true>(in); break;
      case Space::Local: access<DT, Space::Local, true>(in); break;
      case Space::Register: access<DT, Space::Register, true>(in); break;
    }
  }

  template <unsigned DT, Space S, bool kStore>
  void access(const Instr& in) {
    constexpr std::uint64_t bytes = dtype_bytes(DT);
    const BoundMemory& m = mem_[in.a];
    const u64* index = slot(in.b);
    const unsigned lanes = in.lanes;
    const std::uint8_t* active = mask(level_);
    const bool check = S != Space::Global && o_.check_storage;
    u64* values[KILN_MAX_LANES];
    for (unsigned j = 0; j < lanes; ++j) values[j] = slot((kStore ? in.c : in.dst) + j);
    std::uint64_t sectors = 0;
    std::uint64_t last_sector = UINT64_MAX;
    for (std::size_t l = 0; l < n_lanes_; ++l) {
      if constexpr (S == Space::Global)
        if (warp_first_[l]) last_sector = UINT64_MAX;
      if (!active[l]) continue;
      const u64 i = index[l];
      if (i >= m.elements || m.elements - i < lanes) out_of_range(in, m, l, i);
      if (lanes > 1 && i % lanes != 0 && in.aux != KILN_ACCESS_UNALIGNED) misaligned(in, m, l, i);
      unsigned char* p = m.base + i * bytes;
      if constexpr (S == Space::Local) p += lane_group_[l] * m.group_stride;
      if constexpr (S == Space::Register) p += l * m.lane_stride;
      for (unsigned j = 0; j < lanes; ++j) {
        if (check) track<DT, S, kStore>(in, m, l, i + j, p + j * bytes, values[j][l]);
        if constexpr (kStore) write_element<DT>(p + j * bytes, values[j][l]);
        else values[j][l] = read_element<DT>(p + j * bytes);
      }
      if constexpr (kStore && S == Space::Global)
        if (o_.global_writes != nullptr) log_write((*o_.global_writes)[m.decl->param_slot], i, i + lanes);
      if constexpr (S == Space::Global) {
        const std::uint64_t first = (i * bytes) >> sector_shift_;
        const std::uint64_t last = ((i + lanes) * bytes - 1) >> sector_shift_;
        sectors += last - first + 1 - (first == last_sector);
        last_sector = last;
      }
    }
    MemoryStats& s = stats_.memory[static_cast<std::size_t>(S)];
    (kStore ? s.stores : s.loads) += n_active_;
    (kStore ? s.store_bytes : s.load_bytes) += n_active_ * lanes * bytes;
    s.warp_accesses += n_active_warps_;
    s.sectors += sectors;
  }

  // RunOptions::global_writes: [begin, end) joins the last range when it continues it.
  static void log_write(std::vector<std::pair<std::uint64_t, std::uint64_t>>& ranges, u64 begin, u64 end) {
    if (!ranges.empty() && ranges.back().second == begin) ranges.back().second = end;
    else ranges.emplace_back(begin, end);
  }

  // LOAD_MATRIX: a warp collective, as MMA: each warp's first 8 * count
  // threads give the row indices, every thread receives its elements
  // (sdk::load_matrix_source), each read checked as that thread's load.
  template <unsigned DT>
  void load_matrix(const Instr& in) {
    constexpr std::uint64_t bytes = dtype_bytes(DT);
    const BoundMemory& m = mem_[in.a];
    const u64* index = slot(in.b);
    const std::uint8_t* active = mask(level_);
    const bool transposed = in.aux == 1;
    const unsigned rows = 4u * in.lanes;  // 8 per matrix, lanes / 2 matrices
    for (std::size_t first = 0; first < n_lanes_; first += kMmaWarp) {
      unsigned arrived = 0;
      for (unsigned t = 0; t < kMmaWarp; ++t) arrived += active[first + t];
      if (arrived == 0) continue;
      if (arrived != kMmaWarp) {
        std::size_t in_lane = first, out_lane = first;
        while (!active[in_lane]) ++in_lane;
        while (active[out_lane]) ++out_lane;
        fault(in, in_lane,
              "divergent load_matrix at op " + str(in.op) + ": thread " + thread_name(out_lane) +
                  " of the same warp does not reach it (inside an IF or LOOP that not all the warp's threads take)");
      }
      for (unsigned r = 0; r < rows; ++r) {
        const u64 i = index[first + r];
        if (i >= m.elements || m.elements - i < 8) out_of_range(in, m, first + r, i);
        if (i % 8 != 0) fault(in, first + r, "load_matrix row index " + str(i) + " of " + memory_name(m) + " is not a multiple of 8");
      }
      for (unsigned lane = 0; lane < kMmaWarp; ++lane) {
        const std::size_t l = first + lane;
        for (unsigned e = 0; e < in.lanes; ++e) {
          const MatrixElementSource source = load_matrix_source(transposed, lane, e);
          const u64 element = index[first + source.source_lane] + source.column;
          const unsigned char* p = m.base + element * bytes + lane_group_[l] * m.group_stride;
          if (o_.check_storage) track<DT, Space::Local, false>(in, m, l, element, p, 0);
          slot(in.dst + e)[l] = read_element<DT>(p);
        }
      }
    }
    MemoryStats& s = stats_.memory[static_cast<std::size_t>(Space::Local)];
    s.loads += n_active_;
    s.load_bytes += n_active_ * in.lanes * bytes;
    s.warp_accesses += n_active_warps_ * in.lanes / 2;
  }

  // ------------------------------------------------- asynchronous copies --

  // COPY_ASYNC: the value is taken now (kept encoded), written at the wait.
  template <unsigned DT>
  void copy_async(const Instr& in) {
    constexpr std::uint64_t bytes = dtype_bytes(DT);
    const BoundMemory& m = mem_[in.a];
    const u64* index = slot(in.b);
    const std::uint8_t* active = mask(level_);
    for (std::size_t l = 0; l < n_lanes_; ++l) {
      if (!active[l]) continue;
      const u64 i = index[l];
      if (i >= m.elements || m.elements - i < in.lanes) out_of_range(in, m, l, i);
      if (in.lanes > 1 && i % in.lanes != 0) misaligned(in, m, l, i);
      PendingCopy copy{&in, static_cast<std::uint32_t>(l), copy_groups_[l], i, {}};
      for (unsigned j = 0; j < in.lanes; ++j) write_element<DT>(copy.bytes + j * bytes, slot(in.c + j)[l]);
      if (o_.check_storage)
        for (unsigned j = 0; j < in.lanes; ++j) {
          Shadow& s = shadow_[lane_group_[l] * p_.local_elements + m.decl->first_element + i + j];
          if (s.pending != 0)
            storage_fault(in, m, l, i + j, "while an earlier asynchronous copy into it is pending (no copy_wait covered it)");
          ++s.pending;
        }
      pending_copies_.push_back(copy);
    }
    MemoryStats& s = stats_.memory[static_cast<std::size_t>(Space::Local)];
    s.stores += n_active_;
    s.store_bytes += n_active_ * kCopyAsyncBytes;
    s.warp_accesses += n_active_warps_;
  }

  void copy_commit() {
    const std::uint8_t* active = mask(level_);
    for (std::size_t l = 0; l < n_lanes_; ++l) copy_groups_[l] += active[l];
  }

  // COPY_WAIT N: each active thread writes, in issue order, its copies of
  // every committed group but the N most recent.
  void copy_wait(const Instr& in) {
    const std::uint8_t* active = mask(level_);
    std::size_t kept = 0;
    for (std::size_t c = 0; c < pending_copies_.size(); ++c) {
      const PendingCopy& copy = pending_copies_[c];
      const std::uint32_t groups = copy_groups_[copy.lane];
      if (active[copy.lane] && groups > in.aux && copy.group < groups - in.aux) write_copy(copy);
      else pending_copies_[kept++] = copy;
    }
    pending_copies_.resize(kept);
  }

  void write_copy(const PendingCopy& copy) {
    const Instr& in = *copy.in;
    const BoundMemory& m = mem_[in.a];
    const std::size_t bytes = kCopyAsyncBytes / in.lanes;
    unsigned char* p = m.base + copy.index * bytes + lane_group_[copy.lane] * m.group_stride;
    for (unsigned j = 0; j < in.lanes; ++j) {
      if (o_.check_storage) {
        // The checks of a STORE by the issuing thread, at the wait.
        Shadow& s = shadow_[lane_group_[copy.lane] * p_.local_elements + m.decl->first_element + copy.index + j];
        --s.pending;
        const bool changes = std::memcmp(copy.bytes + j * bytes, p + j * bytes, bytes) != 0;
        if (changes && s.write_phase == phase_ && s.writer != copy.lane)
          storage_fault(in, m, copy.lane, copy.index + j,
                        "(at its copy_wait) with a value other than the one thread " + thread_name(s.writer) +
                            " wrote since the last barrier (a data race)");
        if (changes && s.read_phase == phase_ && s.reader != copy.lane)
          storage_fault(in, m, copy.lane, copy.index + j, "(at its copy_wait) which other threads read since the last barrier (a data race)");
        s.write_phase = phase_;
        s.writer = copy.lane;
      }
    }
    std::memcpy(p, copy.bytes, kCopyAsyncBytes);
  }

  // ------------------------------------------------ warp-group MMA --

  // WGMMA: a warp-group collective with one tile pair per warp group; each
  // thread's share is done at the wait that covers it.
  void wgmma(const Instr& in) {
    const std::uint8_t* active = mask(level_);
    const u64* a_tile = slot(in.b);
    const u64* b_tile = slot(in.b + 1);
    const BoundMemory& m = mem_[in.a];
    const unsigned n = in.aux;
    for (std::size_t first = 0; first < n_lanes_; first += kWgmmaGroup) {
      unsigned arrived = 0;
      for (unsigned t = 0; t < kWgmmaGroup; ++t) arrived += active[first + t];
      if (arrived == 0) continue;
      if (arrived != kWgmmaGroup) {
        std::size_t in_lane = first, out_lane = first;
        while (!active[in_lane]) ++in_lane;
        while (active[out_lane]) ++out_lane;
        fault(in, in_lane,
              "divergent wgmma at op " + str(in.op) + ": thread " + thread_name(out_lane) +
                  " of the same warp group does not reach it (inside an IF or LOOP that not all its threads take)");
      }
      const u64 a = a_tile[first], b = b_tile[first];
      for (unsigned t = 0; t < kWgmmaGroup; ++t) {
        const std::size_t l = first + t;
        if (a_tile[l] != a || b_tile[l] != b)
          fault(in, l, "the wgmma tile indices differ between the threads of a warp group");
        if (!wgmma_fenced_[l]) fault(in, l, "no wgmma_fence since the last barrier or write of the accumulator");
      }
      u64 a_end = 0, b_end = 0;
      if (in.input == 1) {  // tf32, A's fragments at a .. a + 3 of the accumulator's storage, past the accumulator
        if (a < n / 2 || a + kWgmmaTf32Fragment > mem_[in.c].elements)
          fault(in, first, "A's fragments at register element " + str(a) + " are not past the accumulator's " + str(n / 2) +
                               " elements inside its storage of " + str(mem_[in.c].elements));
        if (!wgmma_tf32_aligned(b)) fault(in, first, "B's tile index " + str(b) + " is not a row start (+0, 8, 16 or 24) of an 8 x 32 atom");
        b_end = wgmma_tf32_element(b, n - 1, kWgmmaKTf32 - 1) + 1;
      } else if (in.dtype == KILN_DTYPE_F32) {  // tf32: both K-major, rows of 32
        if (!wgmma_tf32_aligned(a)) fault(in, first, "A's tile index " + str(a) + " is not a row start (+0, 8, 16 or 24) of an 8 x 32 atom");
        if (!wgmma_tf32_aligned(b)) fault(in, first, "B's tile index " + str(b) + " is not a row start (+0, 8, 16 or 24) of an 8 x 32 atom");
        a_end = wgmma_tf32_element(a, kWgmmaM - 1, kWgmmaKTf32 - 1) + 1;
        b_end = wgmma_tf32_element(b, n - 1, kWgmmaKTf32 - 1) + 1;
      } else {
        if (!wgmma_a_aligned(a)) fault(in, first, "A's tile index " + str(a) + " is not a row start (+0, 16, 32 or 48) of an 8 x 64 atom");
        if (!wgmma_b_aligned(b)) fault(in, first, "B's tile index " + str(b) + " is not the start of an 8 x 64 atom");
        a_end = wgmma_a_element(a, kWgmmaM - 1, kWgmmaK - 1) + 1;
        b_end = std::max(wgmma_b_element(b, kWgmmaK - 1, n - 1), wgmma_b_element(b, kWgmmaK - 1, std::min(n, 64u) - 1)) + 1;
      }
      if (a_end > m.elements) out_of_range(in, m, first, a);
      if (b_end > m.elements) out_of_range(in, m, first, b);
      for (unsigned t = 0; t < kWgmmaGroup; ++t) {
        const auto l = static_cast<std::uint32_t>(first + t);
        pending_wgmmas_.push_back({&in, l, wgmma_groups_[l], a, b});
        ++accumulator_pending_[l * mem_.size() + in.c];
      }
    }
  }

  void wgmma_fence() {
    const std::uint8_t* active = mask(level_);
    for (std::size_t l = 0; l < n_lanes_; ++l) wgmma_fenced_[l] |= active[l];
  }

  void wgmma_commit() {
    const std::uint8_t* active = mask(level_);
    for (std::size_t l = 0; l < n_lanes_; ++l) wgmma_groups_[l] += active[l];
  }

  // WGMMA_WAIT N: each active thread does, in issue order, its WGMMAs of
  // every committed group but the N most recent.
  void wgmma_wait(const Instr& in) {
    const std::uint8_t* active = mask(level_);
    std::size_t kept = 0;
    for (std::size_t c = 0; c < pending_wgmmas_.size(); ++c) {
      const PendingWgmma& p = pending_wgmmas_[c];
      const std::uint32_t groups = wgmma_groups_[p.lane];
      if (active[p.lane] && groups > in.aux && p.group < groups - in.aux) {
        if (p.in->dtype == KILN_DTYPE_F16) run_wgmma<KILN_DTYPE_F16>(p);
        else if (p.in->dtype == KILN_DTYPE_BF16) run_wgmma<KILN_DTYPE_BF16>(p);
        else run_wgmma<KILN_DTYPE_F32>(p);
      } else {
        pending_wgmmas_[kept++] = p;
      }
    }
    pending_wgmmas_.resize(kept);
  }

  // One thread's share of a WGMMA: its N / 2 accumulator elements, each
  // summed k ascending, every product and sum rounded to f32 (kernel_ir.h);
  // the tile reads checked as this thread's loads.
  template <unsigned DT>
  void run_wgmma(const PendingWgmma& p) {
    const Instr& in = *p.in;
    const BoundMemory& m = mem_[in.a];
    const BoundMemory& acc = mem_[in.c];
    --accumulator_pending_[p.lane * mem_.size() + in.c];
    const unsigned thread = static_cast<unsigned>((p.lane % threads_) % kWgmmaGroup);
    const std::uint64_t group_offset = lane_group_[p.lane] * m.group_stride;
    constexpr bool tf32 = DT == KILN_DTYPE_F32;
    constexpr unsigned k_count = tf32 ? kWgmmaKTf32 : kWgmmaK;
    auto element = [&](u64 e) {
      const unsigned char* at = m.base + e * (tf32 ? 4 : 2) + group_offset;
      if (o_.check_storage) track<DT, Space::Local, false>(in, m, p.lane, e, at, 0);
      const float v = as_f32(read_element<DT>(at));
      return tf32 ? wgmma_tf32_truncate(v) : v;
    };
    auto a_at = [&](unsigned row, unsigned k) {
      return tf32 ? wgmma_swizzle_tf32(wgmma_tf32_element(p.a, row, k)) : wgmma_swizzle(wgmma_a_element(p.a, row, k));
    };
    // Code 1: A[row][k] is an element of the fragment of another thread of
    // the warp group (kernel_ir.h), read as tf32 like the tiles.
    const std::size_t group_first = p.lane - thread;
    auto a_register = [&](unsigned row, unsigned k) {
      const WgmmaFragmentHolder h = wgmma_tf32_a_holder(row, k);
      const std::size_t lane = group_first + h.thread;
      const u64 e = p.a + h.element;
      if (o_.check_storage && !written_[lane * p_.register_elements + acc.decl->first_element + e])
        storage_fault(in, acc, lane, e, "(a fragment of the wgmma's A, at its wait) before that thread wrote it");
      return wgmma_tf32_truncate(as_f32(read_element<KILN_DTYPE_F32>(acc.base + e * 4 + lane * acc.lane_stride)));
    };
    auto b_at = [&](unsigned k, unsigned col) {
      return tf32 ? wgmma_swizzle_tf32(wgmma_tf32_element(p.b, col, k)) : wgmma_swizzle(wgmma_b_element(p.b, k, col));
    };
    for (unsigned i = 0; i < in.aux / 2; ++i) {
      const WgmmaCoord d = wgmma_d_coord(thread, i);
      unsigned char* at = acc.base + i * 4 + p.lane * acc.lane_stride;
      // Later ops on this accumulator may still be pending: only the
      // initialisation is checked here (not track()'s pending rule).
      if (o_.check_storage && !written_[p.lane * p_.register_elements + acc.decl->first_element + i])
        storage_fault(in, acc, p.lane, i, "(the wgmma's accumulator, at its wait) before this thread wrote it");
      float sum = as_f32(read_element<KILN_DTYPE_F32>(at));
      for (unsigned k = 0; k < k_count; ++k) {
        const float av = in.input == 1 ? a_register(d.row, k) : element(a_at(d.row, k));
        const float product = av * element(b_at(k, d.col));
        sum = sum + product;
      }
      write_element<KILN_DTYPE_F32>(at, from_f32(sum));
    }
    stats_.thread_ops[static_cast<std::size_t>(OpClass::FloatAlu)] += std::uint64_t{in.aux} / 2 * k_count;
  }

  // Whether a pending WGMMA of the thread writes element `element` of the
  // REGISTER storage `memory` (its accumulator) or reads it (code 1: its A
  // fragment): the elements the thread may not access until its wait.
  bool wgmma_pending_on(std::size_t lane, std::size_t memory, u64 element) const {
    for (const PendingWgmma& p : pending_wgmmas_)
      if (p.lane == lane && p.in->c == memory &&
          (element < p.in->aux / 2 || (p.in->input == 1 && element >= p.a && element < p.a + kWgmmaTf32Fragment)))
        return true;
    return false;
  }

  // Initialisation and race checks of one LOCAL/REGISTER element, before the
  // access.
  template <unsigned DT, Space S, bool kStore>
  void track(const Instr& in, const BoundMemory& m, std::size_t lane, u64 element, const unsigned char* p,
             u64 value) {
    const auto me = static_cast<std::uint32_t>(lane);
    if constexpr (S == Space::Register) {
      const std::size_t memory = static_cast<std::size_t>(&m - mem_.data());
      if (accumulator_pending_[lane * mem_.size() + memory] != 0 && wgmma_pending_on(lane, memory, element))
        storage_fault(in, m, lane, element, "while a wgmma into it is pending (no wgmma_wait covered it)");
      if (kStore && accumulator_[memory] && p_.ops[in.op].kind == KILN_OP_STORE)
        wgmma_fenced_[lane] = 0;  // a write the next wgmma must be fenced from
      std::uint8_t& written = written_[lane * p_.register_elements + m.decl->first_element + element];
      if (kStore) written = 1;
      else if (!written) storage_fault(in, m, lane, element, "before this thread wrote it");
      return;
    } else {
      Shadow& s = shadow_[lane_group_[lane] * p_.local_elements + m.decl->first_element + element];
      if (s.pending != 0)
        storage_fault(in, m, lane, element, "while an asynchronous copy into it is pending (no copy_wait covered it)");
      if constexpr (!kStore) {
        if (s.write_phase == 0) storage_fault(in, m, lane, element, "before any thread of its group wrote it");
        if (s.write_phase == phase_ && s.writer != me)
          storage_fault(in, m, lane, element,
                        "which thread " + thread_name(s.writer) + " wrote since the last barrier (a data race)");
        if (s.read_phase != phase_) {
          s.read_phase = phase_;
          s.reader = me;
        } else if (s.reader != me) {
          s.reader = kManyReaders;
        }
      } else {
        unsigned char encoded[8];
        write_element<DT>(encoded, value);
        const bool changes = std::memcmp(encoded, p, dtype_bytes(DT)) != 0;
        if (changes && s.write_phase == phase_ && s.writer != me)
          storage_fault(in, m, lane, element,
                        "with a value other than the one thread " + thread_name(s.writer) +
                            " wrote since the last barrier (a data race)");
        if (changes && s.read_phase == phase_ && s.reader != me)
          storage_fault(in, m, lane, element,
                        "which " + (s.reader == kManyReaders ? std::string("other threads") : "thread " + thread_name(s.reader)) +
                            " read since the last barrier (a data race)");
        s.write_phase = phase_;
        s.writer = me;
      }
    }
  }

  // ------------------------------------------------------------ errors --

  std::array<std::uint64_t, 3> group_coords(std::uint64_t g) const {
    return {g % grid_.groups[0], g / grid_.groups[0] % grid_.groups[1], g / grid_.groups[0] / grid_.groups[1]};
  }
  std::array<std::uint64_t, 3> thread_coords(std::uint64_t t) const {
    return {t % grid_.local[0], t / grid_.local[0] % grid_.local[1], t / grid_.local[0] / grid_.local[1]};
  }
  static std::string triple(const std::array<std::uint64_t, 3>& c) {
    return "(" + str(c[0]) + "," + str(c[1]) + "," + str(c[2]) + ")";
  }
  std::string thread_name(std::size_t lane) const { return triple(thread_coords(lane % threads_)); }
  std::string where(std::size_t lane) const {
    return "thread " + thread_name(lane) + " of group " + triple(group_coords(batch_first_ + lane_group_[lane]));
  }

  std::string memory_name(const BoundMemory& m) const {
    const Memory& d = *m.decl;
    const std::string type = std::string(dtype_name(d.dtype));
    switch (d.space) {
      case Space::Global: return "param slot " + str(d.param_slot) + " (op " + str(d.op) + ", " + str(m.elements) + " " + type + ")";
      case Space::Local: return "LOCAL storage op " + str(d.op) + " (" + str(m.elements) + " " + type + ")";
      default: return "REGISTER storage op " + str(d.op) + " (" + str(m.elements) + " " + type + ")";
    }
  }

  [[noreturn]] void fault(const Instr& in, std::size_t lane, const std::string& what) const {
    fail(KILN_STATUS_LAUNCH_FAILED,
         "op " + str(in.op) + " (" + std::string(op_kind_name(p_.ops[in.op].kind)) + "): " + what + ", in " +
             where(lane),
         in.op);
  }

  [[noreturn]] void out_of_range(const Instr& in, const BoundMemory& m, std::size_t lane, u64 index) const {
    const std::string range = in.lanes > 1 ? "elements [" + std::to_string(static_cast<i64>(index)) + ", +" +
                                                 str(in.lanes) + ")"
                                           : "index " + std::to_string(static_cast<i64>(index));
    fault(in, lane, range + " is out of range [0, " + str(m.elements) + ") of " + memory_name(m));
  }

  [[noreturn]] void misaligned(const Instr& in, const BoundMemory& m, std::size_t lane, u64 index) const {
    fault(in, lane, "misaligned " + str(in.lanes) + "-lane access at index " + str(index) + " of " + memory_name(m) +
                        " (must be a multiple of " + str(in.lanes) + ")");
  }

  [[noreturn]] void storage_fault(const Instr& in, const BoundMemory& m, std::size_t lane, u64 element,
                                  const std::string& what) const {
    const bool is_store = p_.ops[in.op].kind == KILN_OP_STORE || p_.ops[in.op].kind == KILN_OP_COPY_ASYNC;
    fault(in, lane, std::string(is_store ? "writes" : "reads") + " element " + str(element) + " of " + memory_name(m) +
                        " " + what);
  }

  // Loads and stores, specialised per dtype.
  using MemberFn = void (Engine::*)(const Instr&);
  template <bool kStore>
  static constexpr std::array<MemberFn, KILN_DTYPE_COUNT> make_memory_table() {
    std::array<MemberFn, KILN_DTYPE_COUNT> t{};
    [&]<std::size_t... D>(std::index_sequence<D...>) {
      ((t[D + 1] = kStore ? &Engine::store<D + 1> : &Engine::load<D + 1>), ...);
    }(std::make_index_sequence<KILN_DTYPE_COUNT - 1>{});
    return t;
  }
  static constexpr std::array<MemberFn, KILN_DTYPE_COUNT> make_copy_table() {
    std::array<MemberFn, KILN_DTYPE_COUNT> t{};
    [&]<std::size_t... D>(std::index_sequence<D...>) {
      ((t[D + 1] = &Engine::copy_async<D + 1>), ...);
    }(std::make_index_sequence<KILN_DTYPE_COUNT - 1>{});
    return t;
  }
  // LOAD_MATRIX reads only 16-bit dtypes (validated).
  static constexpr std::array<MemberFn, KILN_DTYPE_COUNT> make_matrix_load_table() {
    std::array<MemberFn, KILN_DTYPE_COUNT> t{};
    t[KILN_DTYPE_F16] = &Engine::load_matrix<KILN_DTYPE_F16>;
    t[KILN_DTYPE_BF16] = &Engine::load_matrix<KILN_DTYPE_BF16>;
    t[KILN_DTYPE_U16] = &Engine::load_matrix<KILN_DTYPE_U16>;
    t[KILN_DTYPE_I16] = &Engine::load_matrix<KILN_DTYPE_I16>;
    return t;
  }
  static const std::array<MemberFn, KILN_DTYPE_COUNT> kLoads;
  static const std::array<MemberFn, KILN_DTYPE_COUNT> kStores;
  static const std::array<MemberFn, KILN_DTYPE_COUNT> kCopies;
  static const std::array<MemberFn, KILN_DTYPE_COUNT> kMatrixLoads;

  const ProgramData& p_;
  RunOptions o_;
  LaunchGrid grid_;
  std::span<const kiln_arg> args_;
  unsigned sector_shift_ = 5;
  std::uint64_t total_groups_ = 1;
  std::uint64_t threads_ = 1;
  std::uint64_t groups_per_batch_ = 1;
  std::size_t lanes_ = 1;     // capacity: lanes of a full batch
  std::size_t n_lanes_ = 0;   // lanes of the current batch
  std::uint64_t batch_first_ = 0;
  std::vector<u64> vals_;
  std::vector<u64> subgroup_scratch_;  // SUBGROUP_REDUCE's pair rows
  std::vector<std::uint8_t> masks_;
  std::vector<std::uint64_t> level_active_;
  std::vector<std::uint64_t> level_warps_;
  std::uint32_t level_ = 0;
  std::uint64_t n_active_ = 0;
  std::uint64_t n_active_warps_ = 0;
  std::vector<std::uint32_t> lane_group_;
  std::vector<std::uint8_t> warp_first_;
  std::uint64_t clearing_cost_ = 0;  // budget ops charged for clearing storage (start_batch)
  std::vector<unsigned char> local_;
  std::vector<unsigned char> registers_;
  std::vector<Shadow> shadow_;
  std::vector<std::uint8_t> written_;
  std::uint32_t phase_ = 1;
  std::vector<BoundMemory> mem_;
  std::vector<PendingCopy> pending_copies_;  // issue order
  std::vector<std::uint32_t> copy_groups_;   // per lane: COPY_COMMITs so far
  std::vector<PendingWgmma> pending_wgmmas_;  // issue order
  std::vector<std::uint8_t> accumulator_;     // per memory: some WGMMA accumulates into it
  std::vector<std::uint32_t> wgmma_groups_;   // per lane: WGMMA_COMMITs so far
  std::vector<std::uint8_t> wgmma_fenced_;    // per lane: a WGMMA_FENCE since the last barrier
  std::vector<std::uint32_t> accumulator_pending_;  // [lane][memory]: WGMMAs into it not yet done
  ExecStats stats_;
};

const std::array<Engine::MemberFn, KILN_DTYPE_COUNT> Engine::kLoads = Engine::make_memory_table<false>();
const std::array<Engine::MemberFn, KILN_DTYPE_COUNT> Engine::kStores = Engine::make_memory_table<true>();
const std::array<Engine::MemberFn, KILN_DTYPE_COUNT> Engine::kCopies = Engine::make_copy_table();
const std::array<Engine::MemberFn, KILN_DTYPE_COUNT> Engine::kMatrixLoads = Engine::make_matrix_load_table();

}  // namespace

ExecStats run_program(const ProgramData& program, std::span<const kiln_arg> args, const LaunchGrid* grid,
                      const RunOptions& options) {
  return Engine(program, args, grid, options).run();
}

}  // namespace kiln::sdk
