// Reduction operations as schedules see them: which are predefined (so commutative without
// asking MPI), and the user-defined ones in use by running schedules, whose MPI_Op_free
// (Defer_op_free) waits until the last of those schedules ends.
#include "sched/schedule.hpp"

#include <algorithm>

#include "rangecomm/embedding.hpp"

namespace rangecomm::detail {

namespace {

// User-defined operations used by running schedules (few at a time: a linear list), and those
// whose MPI_Op_free was deferred until their last schedule ends.
struct OpUse {
  MPI_Op op;
  int schedules;
  bool free_when_unused;
};
std::vector<OpUse> g_op_uses;

OpUse* find_op_use(MPI_Op op) {
  for (OpUse& u : g_op_uses)
    if (u.op == op) return &u;
  return nullptr;
}

// The predefined reduction operations, all commutative (MPI_REPLACE and MPI_NO_OP, predefined
// for one-sided accumulates, are not commutative in MPICH).
bool predefined_reduction(MPI_Op op) {
  static const MPI_Op kReductions[] = {MPI_SUM,  MPI_MAX,  MPI_MIN,    MPI_PROD,
                                       MPI_LAND, MPI_BAND, MPI_LOR,    MPI_BOR,
                                       MPI_LXOR, MPI_BXOR, MPI_MINLOC, MPI_MAXLOC};
  for (MPI_Op p : kReductions)
    if (op == p) return true;
  return false;
}

bool predefined_op(MPI_Op op) {
  return predefined_reduction(op) || op == MPI_REPLACE || op == MPI_NO_OP || op == MPI_OP_NULL;
}

}  // namespace

void release_op(MPI_Op op) {
  OpUse* u = find_op_use(op);
  if (u == nullptr || --u->schedules > 0) return;
  MPI_Op dead = u->op;
  bool free_it = u->free_when_unused;
  *u = g_op_uses.back();
  g_op_uses.pop_back();
  if (free_it) MPI_Op_free(&dead);
}

void Schedule::hold_ops() {
  for (const Step& step : steps_) {
    if (step.kind != Step::Kind::reduce || predefined_op(step.op)) continue;
    if (std::find(held_ops_.begin(), held_ops_.end(), step.op) != held_ops_.end()) continue;
    held_ops_.push_back(step.op);
    if (OpUse* u = find_op_use(step.op))
      ++u->schedules;
    else
      g_op_uses.push_back({step.op, 1, false});
  }
}

bool defer_op_free(MPI_Op op) {
  OpUse* u = find_op_use(op);
  if (u == nullptr) return false;
  u->free_when_unused = true;
  return true;
}

bool commutative(MPI_Op op) {
  if (predefined_reduction(op)) return true;  // without asking MPI
  int c = 1;
  MPI_Op_commutative(op, &c);
  return c != 0;
}

}  // namespace rangecomm::detail

namespace rangecomm {

bool Defer_op_free(MPI_Op op) { return detail::defer_op_free(op); }

}  // namespace rangecomm
