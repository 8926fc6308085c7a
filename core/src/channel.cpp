#include "channel.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "errors.hpp"
#include "range.hpp"

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
  if (MPI_Comm_split_type(scratch, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) ==
          MPI_SUCCESS &&
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
  long long tag_ub = flag ? *static_cast<int*>(attr) : 32767;
  int lanes = lanes_from_environment();
  TagLayout layout;
  const char* why = nullptr;
  if (!TagLayout::make(tag_ub, lanes, &layout, &why))
    return raise(user, MPI_ERR_OTHER, "Create_Comm: MPI_TAG_UB = %lld, lanes = %d: %s", tag_ub,
                 lanes, why);

  ChannelRef ch(new Channel);
  ch->user_ = user;
  ch->layout_ = layout;
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
  for (Lane& lane : lanes_) {
    for (Parked& p : lane.parked) {
      // Receive and drop: a message nobody will ever receive must not stay in MPI.
      char sink;
      int count = 0;
      MPI_Get_count(&p.status, MPI_BYTE, &count);
      std::vector<char> buf(static_cast<size_t>(std::max(count, 1)));
      MPI_Mrecv(count > 0 ? buf.data() : &sink, count, MPI_BYTE, &p.message, MPI_STATUS_IGNORE);
    }
    MPI_Comm_free(&lane.comm);
  }
  lanes_.clear();
  auto& all = open_channels();
  all.erase(std::remove(all.begin(), all.end(), this), all.end());
}

bool Channel::register_range(RangeState* range, const RangeState** clash) {
  auto& bucket = live_[range->ctx];
  for (const RangeState* other : bucket) {
    if (common_members_upto2(*range, *other) >= 2) {
      *clash = other;
      return false;
    }
  }
  bucket.push_back(range);
  return true;
}

bool Channel::context_free_for(const RangeState& range) const {
  auto it = live_.find(range.ctx);
  if (it == live_.end()) return true;
  for (const RangeState* other : it->second)
    if (other != &range && common_members_upto2(range, *other) >= 2) return false;
  return true;
}

void Channel::unregister_range(RangeState* range) {
  auto it = live_.find(range->ctx);
  if (it == live_.end()) return;
  auto& bucket = it->second;
  auto pos = std::find(bucket.begin(), bucket.end(), range);
  if (pos != bucket.end()) {
    *pos = bucket.back();
    bucket.pop_back();
  }
  // An empty bucket stays: create/free cycles of the same range then allocate nothing here.
}

RangeState* Channel::find_range(std::uint32_t ctx, int root_source) const {
  auto it = live_.find(ctx);
  if (it == live_.end()) return nullptr;
  for (RangeState* r : it->second)
    if (r->from_root(root_source) != MPI_UNDEFINED) return r;
  return nullptr;
}

}  // namespace rangecomm::detail
