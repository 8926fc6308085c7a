// group_bench: creating a communicator for the first g processes of MPI_COMM_WORLD, for g from
// 2 to p, to show what general groups cost: rangecomm::Icomm_create_group for a group that is a
// range (ranks 0..g-1, made locally) and for one that is not (the same processes reversed, agreed
// in two all-reductions over the group), against MPI_Comm_create_group, MPI_Comm_split (over all of
// MPI_COMM_WORLD) and paper 003's user-level algorithm (MPI_Intercomm_create + MPI_Intercomm_merge,
// doubling the group each step from MPI_COMM_SELF).
//
// One sample is one creation + free; its time is the maximum over the group's members. The
// variants alternate within each repetition, so they see the same machine.
#include <mpi.h>

#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "bench_cli.hpp"
#include "rangecomm/rangecomm.hpp"

namespace {

int rank_ = 0, size_ = 1;

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  std::fprintf(stderr, "group_bench: rank %d: %s failed (%d)\n", rank_, what, rc);
  MPI_Abort(MPI_COMM_WORLD, 2);
}

// Paper 003: a communicator of world ranks members[0..g-1] built by merging intercommunicators,
// the blocks doubling each step. Collective over the members only.
MPI_Comm merge_tree(const std::vector<int>& members, int tag) {
  int g = static_cast<int>(members.size());
  int me = static_cast<int>(std::find(members.begin(), members.end(), rank_) - members.begin());
  MPI_Comm local;
  MPI_Comm_dup(MPI_COMM_SELF, &local);
  for (int step = 1; step < g; step *= 2) {
    int block = me / step, partner = block ^ 1;
    if (partner * step >= g) continue;  // no partner block this step
    MPI_Comm inter, merged;
    check(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, members[partner * step], tag, &inter),
          "MPI_Intercomm_create");
    check(MPI_Intercomm_merge(inter, block % 2, &merged), "MPI_Intercomm_merge");
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
    local = merged;
  }
  return local;
}

struct Variant {
  std::string name;
  std::function<void()> create_and_free;  // called by members (split: by everyone)
  bool everyone = false;
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  int reps = 30;
  benchcli::Output out;
  CLI::App app{
      "Creating a communicator for the first g processes, g = 2..p: rangecomm "
      "Icomm_create_group (range and non-range groups) against MPI_Comm_create_group, "
      "MPI_Comm_split and paper 003's Intercomm_create/merge algorithm.",
      "group_bench"};
  app.add_option("--reps", reps, "samples per variant and group size")
      ->check(benchcli::at_least(1, 1000000))
      ->capture_default_str();
  benchcli::add_output_options(app, &out);
  int exit_code = 0;
  if (!benchcli::parse(app, argc, argv, &exit_code)) return exit_code;
  rangecomm::Comm world;
  check(rangecomm::Create_Comm(MPI_COMM_WORLD, &world), "Create_Comm");
  MPI_Group world_group;
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);

  std::vector<int> sizes;
  for (int g = 2; g < size_; g *= 2) sizes.push_back(g);
  if (size_ >= 2) sizes.push_back(size_);
  std::vector<benchcli::Row> rows;
  for (int g : sizes) {
    if (rank_ == 0) std::fprintf(stderr, "group_bench: groups of %d\n", g);
    std::vector<int> up(g), down(g);
    std::iota(up.begin(), up.end(), 0);
    for (int i = 0; i < g; ++i) down[i] = g - 1 - i;
    bool member = rank_ < g;
    MPI_Group reversed;
    MPI_Group_incl(world_group, g, down.data(), &reversed);
    int tag = 0;
    std::vector<Variant> variants = {
        {"range",
         [&] {
           rangecomm::Comm c;
           rangecomm::Request r;
           check(rangecomm::Icomm_create_group(world, up.data(), g, tag, &c, &r), "Icomm (range)");
           check(rangecomm::Wait(&r, MPI_STATUS_IGNORE), "Wait (range)");
         }},
        {"general",
         [&] {
           rangecomm::Comm c;
           rangecomm::Request r;
           check(rangecomm::Icomm_create_group(world, down.data(), g, tag, &c, &r), "Icomm");
           check(rangecomm::Wait(&r, MPI_STATUS_IGNORE), "Wait (general)");
         }},
        {"create_group",
         [&] {
           MPI_Comm c;
           check(MPI_Comm_create_group(MPI_COMM_WORLD, reversed, tag, &c), "MPI_Comm_create_group");
           MPI_Comm_free(&c);
         }},
        {"split",
         [&] {
           MPI_Comm c;
           check(MPI_Comm_split(MPI_COMM_WORLD, member ? 0 : MPI_UNDEFINED, -rank_, &c), "split");
           if (c != MPI_COMM_NULL) MPI_Comm_free(&c);
         },
         true},
        {"intercomm_merge",
         [&] {
           MPI_Comm c = merge_tree(down, tag);
           MPI_Comm_free(&c);
         }},
    };
    std::vector<std::vector<double>> samples(variants.size());
    for (int rep = 0; rep < reps + 1; ++rep) {  // the first round warms up
      for (size_t k = 0; k < variants.size(); ++k) {
        size_t v = (k + static_cast<size_t>(rep)) % variants.size();
        ++tag;
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (member || variants[v].everyone) variants[v].create_and_free();
        double mine = member ? (MPI_Wtime() - t0) * 1e6 : 0, worst = 0;
        MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (rep > 0) samples[v].push_back(worst);
      }
    }
    double native = benchcli::stats(samples[2]).median;  // create_group
    for (size_t v = 0; v < variants.size(); ++v) {
      benchcli::Stats st = benchcli::stats(samples[v]);
      rows.push_back(benchcli::make_row("group_create", variants[v].name, std::to_string(g), size_,
                                        st.median, st.min, st.max, st.median / native));
    }
    MPI_Group_free(&reversed);
  }
  if (rank_ == 0) {
    nlohmann::json settings{{"reps", reps}, {"sizes", sizes}};
    benchcli::emit("group_bench", out, rows, settings, false, [&] {
      std::printf(
          "group_bench: %d ranks; us per creation + free of a communicator of the first "
          "g processes,\nmax over its members; ratio = median / median of "
          "MPI_Comm_create_group\n",
          size_);
      std::printf("%6s %-16s %12s %12s %12s %10s\n", "g", "variant", "median_us", "min_us",
                  "max_us", "ratio");
      for (const benchcli::Row& r : rows)
        std::printf("%6s %-16s %12.3f %12.3f %12.3f %10.4f\n", r.param.c_str(), r.variant.c_str(),
                    r.median, r.min, r.max, r.ratio);
    });
  }
  MPI_Group_free(&world_group);
  world = rangecomm::Comm();
  MPI_Finalize();
  return 0;
}
