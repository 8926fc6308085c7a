// Janus Quicksort (rangecomm/jquick.hpp) on every backend: every input distribution, 64-bit
// keys, doubles with zeros of both signs and infinities, structs under a custom comparator,
// messages cut into pieces, sub-communicators, rank 0's parameters, isolation from the
// caller's traffic, and the errors for bad arguments. Each output is checked exactly: the
// multiset (all elements gathered and compared, and a checksum), the order across rank
// boundaries, and the balance ceil/floor(n/p) per rank.
#include <cstdint>
#include <rangecomm/jquick.hpp>
#include <string>
#include <vector>

#include "sort_util.hpp"

using rangecomm::JQuickOptions;
using rangecomm::SortBackend;
using namespace sorttest;

namespace {

const SortBackend kBackends[] = {SortBackend::range, SortBackend::native_create_group,
                                 SortBackend::native_split};

template <class T, class Compare = std::less<>>
void sort_and_check(Dist d, std::int64_t per, const JQuickOptions& opt,
                    MPI_Comm comm = MPI_COMM_WORLD, Compare comp = {}, std::uint64_t seed = 1) {
  INFO("backend " << rangecomm::to_string(opt.backend) << ", input " << name(d) << ", n/p " << per);
  auto in = make_input<T>(d, per, seed);
  auto out = in;
  int err = rangecomm::jquick_sort(out, comm, opt, comp);
  INFO(error_text(err));
  CHECK(err == MPI_SUCCESS);
  if (!mpitest::all_ranks(err == MPI_SUCCESS)) return;
  check_sorted(in, out, comm, comp, true);
}

int error_class(int code) {
  int cls = -1;
  MPI_Error_class(code, &cls);
  return cls;
}

}  // namespace

TEST_CASE("jquick sorts every input distribution on every backend", "[jquick]") {
  for (SortBackend b : kBackends) {
    JQuickOptions opt;
    opt.backend = b;
    for (Dist d : all_dists()) sort_and_check<std::uint64_t>(d, 300, opt);
    sort_and_check<std::uint64_t>(Dist::uniform, 1, opt);
    sort_and_check<std::uint64_t>(Dist::uniform, 3000, opt);
  }
}

TEST_CASE("jquick sorts 64-bit keys, doubles and structs with a custom comparator", "[jquick]") {
  for (SortBackend b : kBackends) {
    JQuickOptions opt;
    opt.backend = b;
    sort_and_check<std::int64_t>(Dist::uniform, 200, opt);
    sort_and_check<std::int64_t>(Dist::reverse, 200, opt);
    sort_and_check<double>(Dist::uniform, 200, opt);
    sort_and_check<double>(Dist::few_distinct, 200, opt);
    sort_and_check<Rec>(Dist::few_distinct, 200, opt, MPI_COMM_WORLD, RecDescending{});
    sort_and_check<Rec>(Dist::unbalanced, 200, opt, MPI_COMM_WORLD, RecDescending{});
    sort_and_check<Rec>(Dist::all_equal, 150, opt, MPI_COMM_WORLD, RecDescending{});
  }
}

// The overload without options throws on error; the ranks agree before checking, so a rank that
// threw never leaves the others waiting in a collective.
template <class T, class Compare>
void sort_default_and_check(Dist d, std::int64_t per, Compare comp) {
  auto in = make_input<T>(d, per, 7), out = in;
  std::string error;
  try {
    rangecomm::jquick_sort(out, MPI_COMM_WORLD, comp);
  } catch (const rangecomm::SortError& e) {
    error = e.what();
  }
  INFO(error);
  CHECK(error.empty());
  if (mpitest::all_ranks(error.empty())) check_sorted(in, out, MPI_COMM_WORLD, comp, true);
}

TEST_CASE("jquick without options: range communicators, std::less", "[jquick]") {
  sort_default_and_check<double>(Dist::uniform, 500, std::less<>{});
  sort_default_and_check<Rec>(Dist::few_distinct, 100, RecDescending{});
}

TEST_CASE("jquick cuts transfers into messages of at most max_message_bytes", "[jquick]") {
  for (SortBackend b : kBackends) {
    JQuickOptions opt, small = opt;
    rangecomm::JQuickStats whole_stats, cut_stats;
    opt.backend = small.backend = b;
    opt.stats = &whole_stats;
    small.stats = &cut_stats;
    small.max_message_bytes = 3 * sizeof(Rec) + 5;  // 3 elements per message
    sort_and_check<Rec>(Dist::few_distinct, 400, opt, MPI_COMM_WORLD, RecDescending{});
    sort_and_check<Rec>(Dist::few_distinct, 400, small, MPI_COMM_WORLD, RecDescending{});
    std::int64_t msgs[2] = {whole_stats.messages, cut_stats.messages};
    MPI_Allreduce(MPI_IN_PLACE, msgs, 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (mpitest::world_size() > 1) CHECK(msgs[1] > msgs[0]);
  }
}

// Groups above slot_group_max take counts and samples in separate rounds of single-value
// collectives; with 0 every group does, with 4 the first level of 5-8 ranks does and the later
// levels use slots, so both kinds meet in one sort.
TEST_CASE("jquick sorts with and without slot buffers", "[jquick]") {
  for (int slot_max : {0, 4}) {
    for (SortBackend b : kBackends) {
      JQuickOptions opt;
      opt.backend = b;
      opt.slot_group_max = slot_max;
      INFO("slot_group_max " << slot_max);
      for (Dist d : all_dists()) sort_and_check<std::uint64_t>(d, 300, opt);
      sort_and_check<Rec>(Dist::few_distinct, 200, opt, MPI_COMM_WORLD, RecDescending{});
    }
  }
}

// Groups up to slot_direct_max send their slots member to member instead of all-reducing them.
// Both give every member the same buffer, so with one seed they place elements that compare
// equal but differ identically; with 3, groups of 4 or more ranks all-reduce and the smaller
// ones below them send directly, in the same sort.
TEST_CASE("jquick sorts alike with slots sent directly and all-reduced", "[jquick]") {
  for (SortBackend b : kBackends) {
    INFO("backend " << rangecomm::to_string(b));
    const auto in = make_input<Rec>(Dist::few_distinct, 300, 11);
    std::vector<std::vector<Rec>> out;
    for (int direct_max : {0, 3, 8}) {
      INFO("slot_direct_max " << direct_max);
      JQuickOptions opt;
      opt.backend = b;
      opt.slot_direct_max = direct_max;
      for (Dist d : all_dists()) sort_and_check<std::uint64_t>(d, 300, opt);
      out.push_back(in);
      REQUIRE(rangecomm::jquick_sort(out.back(), MPI_COMM_WORLD, opt, RecDescending{}) ==
              MPI_SUCCESS);
    }
    for (std::size_t k = 1; k < out.size(); ++k) {
      REQUIRE(out[k].size() == out[0].size());
      bool same = true;
      for (std::size_t i = 0; i < out[0].size(); ++i)
        same = same && out[k][i].key == out[0][i].key && out[k][i].rank == out[0][i].rank &&
               out[k][i].payload == out[0][i].payload;
      CHECK(same);
    }
  }
}

// With slot buffers every received run is placed at its global position, so elements that
// compare equal but differ end up where the same seed put them last time, whatever order the
// messages arrived in.
TEST_CASE("jquick places equal-comparing elements the same way in every run", "[jquick]") {
  for (SortBackend b : kBackends) {
    JQuickOptions opt;
    opt.backend = b;
    INFO("backend " << rangecomm::to_string(b));
    const auto in = make_input<Rec>(Dist::few_distinct, 300, 7);
    auto first = in, second = in;
    REQUIRE(rangecomm::jquick_sort(first, MPI_COMM_WORLD, opt, RecDescending{}) == MPI_SUCCESS);
    REQUIRE(rangecomm::jquick_sort(second, MPI_COMM_WORLD, opt, RecDescending{}) == MPI_SUCCESS);
    REQUIRE(first.size() == second.size());
    bool same = true;
    for (std::size_t i = 0; i < first.size(); ++i)
      same = same && first[i].key == second[i].key && first[i].rank == second[i].rank &&
             first[i].payload == second[i].payload;
    CHECK(same);
  }
}

// The halves of the world (evens, odds) sort at the same time. Made by MPI_Comm_split for the
// native backends and by MPI_Comm_create_group for ranges: Open MPI 4.1 does not put
// MPI_TAG_UB on communicators from MPI_Comm_split, and core's Create_Comm then refuses them
// (reported; docs/jquick.md).
TEST_CASE("jquick sorts on sub-communicators, two at once", "[jquick]") {
  const int me = mpitest::world_rank(), p = mpitest::world_size();
  MPI_Comm split_half = MPI_COMM_NULL, group_half = MPI_COMM_NULL;
  REQUIRE(MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &split_half) == MPI_SUCCESS);
  MPI_Group world_group, half_group;
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  int range[1][3] = {{me % 2, p - 1 - (p - 1 - me % 2) % 2, 2}};
  MPI_Group_range_incl(world_group, 1, range, &half_group);
  REQUIRE(MPI_Comm_create_group(MPI_COMM_WORLD, half_group, 4, &group_half) == MPI_SUCCESS);
  MPI_Group_free(&half_group);
  MPI_Group_free(&world_group);
  for (SortBackend b : kBackends) {
    JQuickOptions opt;
    opt.backend = b;
    MPI_Comm half = b == SortBackend::range ? group_half : split_half;
    INFO("backend " << rangecomm::to_string(b));
    auto in = make_input<std::uint64_t>(Dist::uniform, 250, 3), out = in;
    int err = rangecomm::jquick_sort(out, half, opt);
    INFO(error_text(err));
    CHECK(err == MPI_SUCCESS);
    if (mpitest::all_ranks(err == MPI_SUCCESS)) check_sorted(in, out, half, std::less<>{}, true);
  }
  MPI_Comm_free(&group_half);
  MPI_Comm_free(&split_half);
}

TEST_CASE("jquick takes the seed, sample sizes and message size of rank 0", "[jquick]") {
  const int me = mpitest::world_rank();
  for (SortBackend b : kBackends) {
    JQuickOptions opt;
    opt.backend = b;
    opt.seed = 1000u + static_cast<unsigned>(me);
    opt.samples_per_log_p = 1 + me;
    opt.samples_min = 3 + 2 * me;
    opt.elements_per_sample = 1 + me;
    opt.max_message_bytes = 8 * (1 + me);  // rank 0's: 1 element per message
    rangecomm::JQuickStats stats;
    opt.stats = &stats;
    sort_and_check<std::uint64_t>(Dist::unbalanced, 400, opt);
    // Two processes sort as one two-process base case (counts exchanged first), more as levels.
    if (mpitest::world_size() > 2) CHECK(stats.levels >= 1);
    if (mpitest::world_size() == 2) {
      CHECK(stats.levels == 0);
      CHECK(stats.pair_cases == 1);
    }
    CHECK(stats.seconds >= stats.create_seconds);
  }
}

TEST_CASE("jquick leaves the caller's traffic on the communicator alone", "[jquick]") {
  const int me = mpitest::world_rank(), p = mpitest::world_size();
  for (SortBackend b : kBackends) {
    JQuickOptions opt;
    opt.backend = b;
    int got = -1, flag = 0;
    MPI_Request req = MPI_REQUEST_NULL;
    REQUIRE(MPI_Irecv(&got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &req) ==
            MPI_SUCCESS);
    sort_and_check<std::uint64_t>(Dist::uniform, 200, opt);
    MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
    CHECK(flag == 0);  // nothing of the sort's reached the wildcard receive
    MPI_Barrier(MPI_COMM_WORLD);
    int token = 1000 + me;
    MPI_Send(&token, 1, MPI_INT, (me + 1) % p, 5, MPI_COMM_WORLD);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK(got == 1000 + (me + p - 1) % p);
  }
}

// The sort's ranges live on its own duplicate of the communicator, so ranges the caller keeps
// alive (here the whole communicator at depth 1 and its halves at depth 2, the shapes the
// sort's own subgroups take) never clash with them.
TEST_CASE("jquick runs while the caller holds ranges of the same communicator", "[jquick]") {
  const int p = mpitest::world_size(), me = mpitest::world_rank();
  rangecomm::Comm world, whole, half;
  REQUIRE(rangecomm::Create_Comm(MPI_COMM_WORLD, &world) == MPI_SUCCESS);
  REQUIRE(rangecomm::Split_Comm(world, 0, p - 1, &whole) == MPI_SUCCESS);
  if (me < p / 2)
    REQUIRE(rangecomm::Split_Comm(whole, 0, p / 2 - 1, &half) == MPI_SUCCESS);
  else
    REQUIRE(rangecomm::Split_Comm(whole, p / 2, p - 1, &half) == MPI_SUCCESS);
  JQuickOptions opt;
  sort_and_check<std::uint64_t>(Dist::uniform, 300, opt);
  sort_and_check<std::uint64_t>(Dist::few_distinct, 300, opt);
  CHECK_MPI(rangecomm::Comm_free(&half));
  CHECK_MPI(rangecomm::Comm_free(&whole));
}

TEST_CASE("jquick reports bad arguments with MPI error classes", "[jquick]") {
  std::vector<int> v = {3, 1, 2};
  JQuickOptions opt;
  CHECK(error_class(rangecomm::jquick_sort(v, MPI_COMM_NULL, opt)) == MPI_ERR_COMM);
  opt.backend = static_cast<SortBackend>(99);
  CHECK(error_class(rangecomm::jquick_sort(v, MPI_COMM_WORLD, opt)) == MPI_ERR_ARG);
  CHECK(v == std::vector<int>{3, 1, 2});  // untouched

  // Without options the error goes through the error handler (MPI_ERRORS_RETURN here), then
  // is thrown.
  int thrown = MPI_SUCCESS;
  try {
    rangecomm::jquick_sort(v, MPI_COMM_NULL);
  } catch (const rangecomm::SortError& e) {
    thrown = e.code();
  }
  CHECK(error_class(thrown) == MPI_ERR_COMM);

  if (mpitest::world_size() >= 2) {
    const int me = mpitest::world_rank(), p = mpitest::world_size();
    MPI_Comm local = MPI_COMM_NULL, inter = MPI_COMM_NULL;
    const int colour = me < p / 2 ? 0 : 1;
    REQUIRE(MPI_Comm_split(MPI_COMM_WORLD, colour, me, &local) == MPI_SUCCESS);
    REQUIRE(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, colour == 0 ? p / 2 : 0, 17, &inter) ==
            MPI_SUCCESS);
    opt.backend = SortBackend::range;
    CHECK(error_class(rangecomm::jquick_sort(v, inter, opt)) == MPI_ERR_COMM);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
  }
}
