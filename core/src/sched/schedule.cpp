// Building a schedule: its steps and rounds, its scratch blocks, the datatypes it holds, and the
// pool of emptied schedules that new_schedule() takes from.
#include "sched/schedule.hpp"

#include <algorithm>
#include <cstdint>

#include "util/type_facts.hpp"

namespace rangecomm::detail {

void Schedule::send(const void* buf, int count, MPI_Datatype type, int peer) {
  steps_.push_back(send_step(buf, count, type, peer));
}

void Schedule::recv(void* buf, int count, MPI_Datatype type, int peer) {
  steps_.push_back(recv_step(buf, count, type, peer));
}

void Schedule::copy(const void* in, int in_count, MPI_Datatype in_type, void* out, int out_count,
                    MPI_Datatype out_type) {
  steps_.push_back(
      {Step::Kind::copy, 0, in, out, in_count, in_type, out_count, out_type, MPI_OP_NULL});
}

void Schedule::reduce(const void* in, void* out, int count, MPI_Datatype type, MPI_Op op) {
  steps_.push_back({Step::Kind::reduce, 0, in, out, count, type, 0, MPI_DATATYPE_NULL, op});
}

void Schedule::end_round() {
  size_t begin = round_ends_.empty() ? 0 : round_ends_.back();
  if (steps_.size() > begin) round_ends_.push_back(steps_.size());
}

void* ScratchBlocks::get(int count, MPI_Datatype type) {
  TypeFacts t = type_facts(type);
  size_t bytes = count > 0 ? static_cast<size_t>(t.true_extent + (count - 1) * t.extent) : 0;
  bytes = std::max<size_t>(bytes, 1);
  if (used_ == blocks_.size()) blocks_.push_back({nullptr, 0});
  Block& block = blocks_[used_++];
  if (block.capacity < bytes) {
    // uninitialised: every byte is written before it is read
    block.bytes.reset(new char[bytes]);
    block.capacity = bytes;
  }
  // Integer arithmetic: with an absolute-address type (MPI_BOTTOM) true_lb is an address, and
  // the pointer it gives lies outside the block (MPI adds true_lb back).
  return reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(block.bytes.get()) -
                                 static_cast<std::uintptr_t>(t.true_lb));
}

size_t ScratchBlocks::capacity() const {
  size_t total = 0;
  for (const Block& b : blocks_) total += b.capacity;
  return total;
}

int Schedule::hold_datatypes() {
  auto hold = [this](MPI_Datatype& t) -> int {  // MPI_SUCCESS may be an enumerator (SMPI)
    if (t == MPI_DATATYPE_NULL || type_facts(t).predefined) return MPI_SUCCESS;
    for (auto& [user, dup] : held_)
      if (user == t) {
        t = dup;
        return MPI_SUCCESS;
      }
    MPI_Datatype dup;
    int rc = MPI_Type_dup(t, &dup);
    if (rc != MPI_SUCCESS) return rc;
    held_.emplace_back(t, dup);
    t = dup;
    return MPI_SUCCESS;
  };
  for (Step& step : steps_) {
    int rc = hold(step.type);
    if (rc == MPI_SUCCESS) rc = hold(step.out_type);
    if (rc != MPI_SUCCESS) return rc;
  }
  return MPI_SUCCESS;
}

Schedule::~Schedule() { reset(); }

void Schedule::reset() {
  for (auto& held : held_) MPI_Type_free(&held.second);
  held_.clear();
  for (MPI_Op op : held_ops_) release_op(op);
  held_ops_.clear();
  steps_.clear();
  round_ends_.clear();
  requests_.clear();
  deferred_.clear();
  scratch_.release();
}

namespace {
// Schedules waiting for reuse, with their scratch blocks: a program that repeats a collective on
// long vectors then neither allocates nor faults in fresh pages for each call (measured: a
// 256 KiB Scan on 8 ranks took 4x native while every call got new scratch memory). A few
// schedules suffice, as a process runs few collectives at once; the memory they keep is
// bounded (a schedule over the bound is freed at once).
// Never destroyed: pooled schedules stay reachable at exit (leak checkers see no leak), and a
// schedule released during static destruction still finds a live pool.
std::vector<Schedule*>& g_schedule_pool = *new std::vector<Schedule*>;
constexpr size_t kPoolSize = 8;
constexpr size_t kPoolScratchBytes = size_t{32} << 20;
size_t g_pool_scratch_bytes = 0;
}  // namespace

void Schedule::Recycle::operator()(Schedule* s) const {
  s->reset();
  size_t bytes = s->scratch_capacity();
  if (g_schedule_pool.size() < kPoolSize && g_pool_scratch_bytes + bytes <= kPoolScratchBytes) {
    g_schedule_pool.push_back(s);
    g_pool_scratch_bytes += bytes;
  } else {
    delete s;
  }
}

SchedulePtr new_schedule() {
  if (g_schedule_pool.empty()) return SchedulePtr(new Schedule);
  Schedule* s = g_schedule_pool.back();
  g_schedule_pool.pop_back();
  g_pool_scratch_bytes -= s->scratch_capacity();
  return SchedulePtr(s);
}

}  // namespace rangecomm::detail
