#include "wire/channel.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "util/errors.hpp"

namespace rangecomm::detail {

std::vector<Channel*>& open_channels() {
  static std::vector<Channel*> channels;
  return channels;
}

namespace {
int lanes_from_environment() {
  const char* v = std::getenv("RANGECOMM_LANES");
  return v ? std::atoi(v) : 4;
}

// RANGECOMM_TAG_BITS (17..31) makes the library use fewer tag bits than MPI_TAG_UB allows, as
// a network with a small tag space would (tests run the 23-bit layout of Open MPI's UCX with it).
long long capped_tag_ub(long long tag_ub) {
  const char* v = std::getenv("RANGECOMM_TAG_BITS");
  int bits = v ? std::atoi(v) : 0;
  if (bits < 17 || bits > 31) return tag_ub;
  return std::min(tag_ub, (1LL << bits) - 1);
}

// Communicators the channel keeps are made with MPI_Comm_create_group over the whole group, not
// with MPI_Comm_dup or a split: Open MPI 4 agrees on a new context id with a nonblocking
// allreduce on the parent when it dups or splits, which registers libnbc's progress function
// until the parent is freed, and Open MPI then polls it in every later progress call of the
// program, also on real communicators (about 110 instructions each). create_group agrees with
// point-to-point messages. The tag only separates concurrent create_group calls on `user`.
constexpr int kCreateTag = 0x7c0;

int whole_copy(MPI_Comm user, MPI_Group all, MPI_Comm* out) {
  return MPI_Comm_create_group(user, all, kCreateTag, out);
}

// True when every process of `user` shares one node. The split runs on a temporary copy, so
// the nonblocking allreduce inside it registers libnbc only until that copy is freed. Asked
// once at open, where the call is collective anyway; a failure only means "not known".
bool on_one_node(MPI_Comm user, MPI_Group all, int size) {
  MPI_Comm scratch = MPI_COMM_NULL;
  if (whole_copy(user, all, &scratch) != MPI_SUCCESS) return false;
  MPI_Comm_set_errhandler(scratch, MPI_ERRORS_RETURN);
  bool one = false;
  MPI_Comm node = MPI_COMM_NULL;
  if (MPI_Comm_split_type(scratch, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS &&
      node != MPI_COMM_NULL) {
    int node_size = 0;
    MPI_Comm_size(node, &node_size);
    one = node_size == size;
    MPI_Comm_free(&node);
  }
  MPI_Comm_free(&scratch);
  return one;
}
}  // namespace

int Channel::open(MPI_Comm user, ChannelRef* out) {
  int inter = 0;
  int rc = MPI_Comm_test_inter(user, &inter);
  if (rc != MPI_SUCCESS) return raise_mpi(MPI_COMM_WORLD, rc, "Create_Comm: invalid communicator");
  if (inter) return raise(user, MPI_ERR_COMM, "Create_Comm: intercommunicators have no ranges");

  void* attr = nullptr;
  int flag = 0;
  MPI_Comm_get_attr(user, MPI_TAG_UB, &attr, &flag);
  // MPI defines MPI_TAG_UB on MPI_COMM_WORLD; Open MPI does not copy it to communicators made by
  // MPI_Comm_split or MPI_Comm_create, whose tags still have the same bound.
  if (!flag) MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &attr, &flag);
  int user_tag_ub = flag ? *static_cast<int*>(attr) : 32767;
  long long tag_ub = capped_tag_ub(user_tag_ub);
  int lanes = lanes_from_environment();
  TagLayout layout;
  const char* why = nullptr;
  if (!TagLayout::make(tag_ub, lanes, &layout, &why))
    return raise(user, MPI_ERR_OTHER, "Create_Comm: MPI_TAG_UB = %lld, lanes = %d: %s", tag_ub,
                 lanes, why);

  ChannelRef ch(new Channel);
  ch->user_ = user;
  ch->layout_ = layout;
  ch->user_tag_ub_ = user_tag_ub;
  MPI_Comm_rank(user, &ch->root_rank_);
  MPI_Comm_size(user, &ch->root_size_);
  MPI_Group all = MPI_GROUP_NULL;
  rc = MPI_Comm_group(user, &all);
  if (rc != MPI_SUCCESS) return raise_mpi(user, rc, "Create_Comm: the group of the communicator");
  for (int i = 0; i < lanes; ++i) {
    Lane lane;
    rc = whole_copy(user, all, &lane.comm);
    if (rc != MPI_SUCCESS) {
      MPI_Group_free(&all);
      ch->close();
      return raise_mpi(user, rc, "Create_Comm: creating the communicator for a lane");
    }
    MPI_Comm_set_errhandler(lane.comm, MPI_ERRORS_RETURN);
    char name[MPI_MAX_OBJECT_NAME];
    std::snprintf(name, sizeof name, "rangecomm lane %d", i);
    MPI_Comm_set_name(lane.comm, name);
    ch->lanes_.push_back(std::move(lane));
  }
  ch->one_node_ = on_one_node(user, all, ch->root_size_);
  MPI_Group_free(&all);
  open_channels().push_back(&*ch);
  *out = std::move(ch);
  return MPI_SUCCESS;
}

Channel::~Channel() { close(); }

void Channel::close() {
  for (Parked& p : parked_) {
    if (p.message == MPI_MESSAGE_NULL) continue;  // it came with a binding: not in MPI
    // Receive and drop: a message nobody will ever receive must not stay in MPI.
    char sink;
    int count = 0;
    MPI_Get_count(&p.status, MPI_BYTE, &count);
    std::vector<char> buf(static_cast<size_t>(std::max(count, 1)));
    MPI_Mrecv(count > 0 ? buf.data() : &sink, count, MPI_BYTE, &p.message, MPI_STATUS_IGNORE);
  }
  parked_.clear();
  for (Lane& lane : lanes_) MPI_Comm_free(&lane.comm);
  lanes_.clear();
  auto& all = open_channels();
  all.erase(std::remove(all.begin(), all.end(), this), all.end());
}

int Channel::acquire_slot(int lane) {
  if (next_high_.empty()) {
    next_high_.assign(static_cast<size_t>(layout_.lanes()), 0);
    free_slots_.resize(static_cast<size_t>(layout_.lanes()));
  }
  auto& released = free_slots_[static_cast<size_t>(lane)];
  if (!released.empty()) {
    int slot = released.back();
    released.pop_back();
    return slot;
  }
  int& high = next_high_[static_cast<size_t>(lane)];
  if (high >= layout_.control_high()) return -1;
  return (high++ << layout_.lane_bits) | lane;
}

void Channel::release_slot(int slot) {
  free_slots_[static_cast<size_t>(layout_.lane_of(slot))].push_back(slot);
}

namespace {
std::uint64_t slot_key(int source, int slot) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(source)) << 32) |
         static_cast<std::uint32_t>(slot);
}
}  // namespace

bool Channel::bind(int source, int slot, const CommId& id, CommId* replaced) {
  auto [it, fresh] = by_slot_.try_emplace(slot_key(source, slot), id);
  bool replacing = !fresh && it->second != id;
  if (replacing) {
    *replaced = it->second;
    by_comm_.erase({source, it->second});
    it->second = id;
  }
  by_comm_[{source, id}] = slot;
  return replacing;
}

const CommId* Channel::bound_comm(int source, int slot) const {
  auto it = by_slot_.find(slot_key(source, slot));
  return it == by_slot_.end() ? nullptr : &it->second;
}

int Channel::bound_slot(int source, const CommId& id) const {
  auto it = by_comm_.find({source, id});
  return it == by_comm_.end() ? -1 : it->second;
}

void Channel::enroll(const CommId& id, RangeState* range) { enrolled_.put(id, range); }

void Channel::withdraw(const CommId& id, const RangeState* range) { enrolled_.remove(id, range); }

RangeState* Channel::find(const CommId& id) const { return enrolled_.find(id); }

}  // namespace rangecomm::detail
