// limit_bench: how many communicators a process can hold alive before creation fails, and what
// one costs in memory, native MPI against range communicators (checks the claim that ranges are
// not limited like MPI's communicators). Four variants, each on every rank, one after the other:
//
//  native_world  MPI_Comm_dup(MPI_COMM_WORLD) in a loop (collective; p members each)
//  range_world   live range communicators of two or more members made from the world range,
//                all of them at once: every strided range of the p ranks that holds this
//                process, then the same again one nesting level deeper (under the copy of the
//                whole range), and so on. Members create the same ranges in the same order.
//  native_self   MPI_Comm_dup(MPI_COMM_SELF) in a loop (local; 1 member each)
//  range_self    rangecomm::Split_Comm(world, me, me) in a loop (local; 1 member each)
//
// Each loop stops at the first failed creation (MPI_ERRORS_RETURN is set, so the error code is
// reported, not fatal) or at --max live communicators. Memory per communicator is measured two
// ways, each as growth over the loop divided by the count: VmRSS (/proc/self/status), and heap
// bytes in use (mallinfo2). The handle array is touched before the first reading, and freed
// memory is returned to the system (malloc_trim) between variants. RSS growth can still hide
// memory that an earlier variant freed and this one reuses, and counts whole pages; the heap
// figure does neither, but misses memory an MPI library maps by itself.
//
// Output on rank 0: a table, or CSV rows (--format csv, --csv FILE)
//   experiment,variant,param,ranks,median_us,min_us,max_us,ratio_vs_native,unit,note
// where median/min/max are over ranks and the unit column says what they hold: experiment
// alive = count of live communicators, memory = RSS bytes per communicator, heap = malloc'd
// bytes per communicator, create = microseconds
// per creation (median over batches on each rank). ratio_vs_native compares range_X with
// native_X. note says why the loop stopped. Benchmarks measure: the exit status is nonzero
// only for bad arguments.

#include <malloc.h>
#include <mpi.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "bench_cli.hpp"
#include "rangecomm/rangecomm.hpp"

namespace {

struct Options {
  long max = 1000000;   // stop every variant at this many live communicators
  long batch = 1000;    // creations per timing sample
  long time_limit = 0;  // seconds per variant, checked every batch; 0: none
  std::string variants = "native_world,range_world,native_self,range_self";
  benchcli::Output out;
  bool wants(const std::string& v) const {
    return ("," + variants + ",").find("," + v + ",") != std::string::npos;
  }
};

void add_options(CLI::App& app, Options* o) {
  using benchcli::at_least;
  app.add_option("--max", o->max, "stop each variant at this many live communicators")
      ->check(at_least(1, 100000000))
      ->capture_default_str();
  app.add_option("--batch", o->batch, "creations per timing sample")
      ->check(at_least(1, 100000000))
      ->capture_default_str();
  app.add_option("--time-limit", o->time_limit,
                 "stop a variant after this many seconds (checked every batch; 0: none)")
      ->check(at_least(0, 100000000))
      ->capture_default_str();
  app.add_option("--variants", o->variants, "native_world,range_world,native_self,range_self")
      ->capture_default_str();
  benchcli::add_output_options(app, &o->out);
  app.footer(
      "Rows (experiment,variant,param,ranks,median_us,min_us,max_us,ratio_vs_native,unit,note):\n"
      "median/min/max are over ranks; unit: alive = count, memory = RSS bytes per communicator,\n"
      "heap = malloc'd bytes per communicator, create = us per creation. param = p for *_world\n"
      "(communicators drawn from the p ranks), 1 for *_self.");
}

int rank_ = 0, size_ = 1;

// Resident set size of this process in bytes (VmRSS), or -1 if /proc is not there.
long rss_bytes() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long kb = -1;
  while (std::fgets(line, sizeof line, f))
    if (std::sscanf(line, "VmRSS: %ld kB", &kb) == 1) break;
  std::fclose(f);
  return kb < 0 ? -1 : kb * 1024;
}

// Bytes the process holds from malloc (small chunks and separately mapped large ones).
long heap_bytes() {
  struct mallinfo2 m = mallinfo2();
  return static_cast<long>(m.uordblks + m.hblkhd);
}

std::string error_text(int rc) {
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  rangecomm::Error_string(rc, msg, &len);
  int cls = 0;
  MPI_Error_class(rc, &cls);
  char cls_msg[MPI_MAX_ERROR_STRING];
  int cls_len = 0;
  MPI_Error_string(cls, cls_msg, &cls_len);
  return std::string(msg, len) + " [class: " + std::string(cls_msg, cls_len) + "]";
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

// What one rank saw in one variant.
struct Outcome {
  long count = 0;         // live communicators when the loop stopped
  double bytes_each = 0;  // RSS growth / count
  double heap_each = 0;   // heap growth / count
  double create_us = 0;   // median over batches of the time per creation
  bool failed = false;    // stopped by an error (else by --max or by running out of ranges)
  std::string note;
};

// Runs create(i) (returns an MPI code) until it fails, --max is reached or --time-limit has
// passed, timing batches. A collective variant agrees on the time limit, so that all ranks stop
// after the same creation.
Outcome run_loop(const Options& o, bool collective, const std::function<int(long)>& create) {
  const long max = o.max, batch = o.batch;
  const double start = MPI_Wtime();
  Outcome out;
  std::vector<double> per_creation;
  long rss0 = rss_bytes(), heap0 = heap_bytes();
  double t0 = MPI_Wtime();
  while (out.count < max) {
    int rc = create(out.count);
    if (rc == -1) {  // the variant has nothing more to create
      out.note = "no more distinct ranges";
      break;
    }
    if (rc != MPI_SUCCESS) {
      out.failed = true;
      out.note = "failed: " + error_text(rc);
      break;
    }
    ++out.count;
    if (rank_ == 0 && out.count % 10000 == 0)  // progress for long loops (Open MPI: 65528)
      std::fprintf(stderr, "limit_bench:   %ld alive\n", out.count);
    if (out.count % batch == 0) {
      double t1 = MPI_Wtime();
      per_creation.push_back((t1 - t0) * 1e6 / batch);
      t0 = t1;
      int over = o.time_limit > 0 && t1 - start > o.time_limit;
      if (collective) MPI_Allreduce(MPI_IN_PLACE, &over, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
      if (over) {
        out.note = "stopped at --time-limit";
        break;
      }
    }
  }
  if (per_creation.empty() && out.count > 0)
    per_creation.push_back((MPI_Wtime() - t0) * 1e6 / out.count);
  if (out.note.empty()) out.note = "stopped at --max";
  long rss1 = rss_bytes(), heap1 = heap_bytes();
  out.bytes_each = out.count > 0 && rss0 >= 0 ? double(rss1 - rss0) / out.count : 0;
  out.heap_each = out.count > 0 ? double(heap1 - heap0) / out.count : 0;
  out.create_us = median(per_creation);
  return out;
}

// Gives freed memory back to the system, so the next variant's RSS growth is its own.
void settle() {
  malloc_trim(0);
  MPI_Barrier(MPI_COMM_WORLD);
}

Outcome native_dup(MPI_Comm base, const Options& o) {
  std::vector<MPI_Comm> comms(static_cast<size_t>(std::min(o.max, 200000L)), MPI_COMM_NULL);
  Outcome out = run_loop(o, base != MPI_COMM_SELF, [&](long i) {
    if (static_cast<size_t>(i) >= comms.size()) comms.push_back(MPI_COMM_NULL);
    return MPI_Comm_dup(base, &comms[i]);
  });
  for (MPI_Comm& c : comms)
    if (c != MPI_COMM_NULL) MPI_Comm_free(&c);
  return out;
}

// Every strided range first..last (stride s) of 0..p-1 with two or more members.
struct Triple {
  int first, last, stride;
};
std::vector<Triple> multi_member_ranges(int p) {
  std::vector<Triple> out;
  for (int f = 0; f < p; ++f)
    for (int l = f + 1; l < p; ++l)
      for (int s = 1; s <= l - f; ++s)
        if ((l - f) % s == 0) out.push_back({f, l, s});
  return out;
}

// range_world: level by level, every multi-member range of the level's copy of the whole
// range; the copy of the whole range (0..p-1, stride 1) is the parent of the next level.
Outcome range_world(const rangecomm::Comm& world, const Options& o) {
  const std::vector<Triple> ranges = multi_member_ranges(size_);
  std::vector<rangecomm::Comm> comms(static_cast<size_t>(std::min(o.max, 1000000L)));
  rangecomm::Comm level_parent = world, next_parent;
  size_t next = 0;  // index into ranges within the current level
  long made = 0;    // slots of comms used (this process's memberships)
  const long max_levels = 1000000;
  long level = 0;
  Outcome out = run_loop(o, false, [&](long) -> int {
    // Find the next range of which this process is a member (others get the null range).
    for (;;) {
      if (ranges.empty()) return -1;  // p = 1: no range of two or more members exists
      if (next == ranges.size()) {
        next = 0;
        level_parent = next_parent;
        if (++level >= max_levels || level_parent.is_null()) return -1;
      }
      const Triple& t = ranges[next++];
      int me = rank_;
      if (me < t.first || me > t.last || (me - t.first) % t.stride != 0) continue;
      if (static_cast<size_t>(made) >= comms.size()) comms.emplace_back();
      rangecomm::Comm& slot = comms[made];
      int rc = rangecomm::Split_Comm(level_parent, t.first, t.last, t.stride, &slot);
      if (rc != MPI_SUCCESS) return rc;
      if (t.first == 0 && t.last == size_ - 1 && t.stride == 1) next_parent = slot;
      ++made;
      return MPI_SUCCESS;
    }
  });
  char extra[64];
  std::snprintf(extra, sizeof extra, " (at nesting level %ld)", level + 1);
  out.note += extra;
  return out;
}

Outcome range_self(const rangecomm::Comm& world, const Options& o) {
  std::vector<rangecomm::Comm> comms(static_cast<size_t>(std::min(o.max, 1000000L)));
  return run_loop(o, false, [&](long i) {
    if (static_cast<size_t>(i) >= comms.size()) comms.emplace_back();
    return rangecomm::Split_Comm(world, rank_, rank_, &comms[i]);
  });
}

struct Row {
  std::string experiment, variant;
  int param;
  double med, min, max, ratio;
  std::string unit, note;
};

// Gathers one value per rank to rank 0 and returns its median, min, max there.
void over_ranks(double mine, double* med, double* mn, double* mx) {
  std::vector<double> all(size_);
  MPI_Gather(&mine, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  *med = median(all);
  *mn = *std::min_element(all.begin(), all.end());
  *mx = *std::max_element(all.begin(), all.end());
}

// Rank 0's note, plus how many ranks stopped for a different reason.
std::string note_of(const Outcome& out) {
  int failed = out.failed ? 1 : 0, failed_ranks = 0;
  MPI_Reduce(&failed, &failed_ranks, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  std::string note = out.note;
  for (char& c : note)
    if (c == ',' || c == '\n' || c == '"') c = ';';
  return note + " (" + std::to_string(failed_ranks) + " of " + std::to_string(size_) +
         " ranks stopped by an error)";
}

void add_rows(std::vector<Row>* rows, const std::string& variant, int members, const Outcome& out) {
  std::string note = note_of(out);
  const double values[4] = {double(out.count), out.bytes_each, out.heap_each, out.create_us};
  const char* experiments[4] = {"alive", "memory", "heap", "create"};
  const char* units[4] = {"count", "bytes", "bytes", "us"};
  for (int k = 0; k < 4; ++k) {
    Row r{experiments[k], variant, members, 0, 0, 0, 1.0, units[k], note};
    over_ranks(values[k], &r.med, &r.min, &r.max);
    rows->push_back(r);
  }
}

// ratio_vs_native of range_X rows = median / median of native_X in the same experiment.
void set_ratios(std::vector<Row>* rows) {
  for (Row& r : *rows) {
    if (r.variant.rfind("range_", 0) != 0) continue;
    std::string native = "native_" + r.variant.substr(6);
    for (const Row& n : *rows)
      if (n.experiment == r.experiment && n.variant == native && n.med != 0)
        r.ratio = r.med / n.med;
  }
}

std::vector<benchcli::Row> to_rows(const std::vector<Row>& rows) {
  std::vector<benchcli::Row> out;
  for (const Row& r : rows)
    out.push_back(benchcli::make_row(r.experiment, r.variant, std::to_string(r.param), size_, r.med,
                                     r.min, r.max, r.ratio, r.unit, r.note));
  return out;
}

void print_table(const std::vector<Row>& rows) {
  std::printf("limit_bench: %d ranks; median [min..max] over ranks\n", size_);
  std::printf("%-8s %-13s %7s %14s %14s %14s %10s %6s  %s\n", "exp", "variant", "members", "median",
              "min", "max", "range/nat", "unit", "why the loop stopped (rank 0)");
  for (const Row& r : rows)
    std::printf("%-8s %-13s %7d %14.6g %14.6g %14.6g %10.4g %6s  %s\n", r.experiment.c_str(),
                r.variant.c_str(), r.param, r.med, r.min, r.max, r.ratio, r.unit.c_str(),
                r.experiment == "alive" ? r.note.c_str() : "");
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  Options o;
  CLI::App app{
      "Communicators alive before creation fails, and memory per communicator: native "
      "MPI (MPI_Comm_dup of MPI_COMM_WORLD / MPI_COMM_SELF) against range communicators "
      "(overlapping ranges of two or more members / single-member ranges).",
      "limit_bench"};
  add_options(app, &o);
  int exit_code = 0;
  if (!benchcli::parse(app, argc, argv, &exit_code)) return exit_code;
  // Creation failures are what we measure: they must come back as codes, not abort.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  rangecomm::Comm world;
  int rc = rangecomm::Create_Comm(MPI_COMM_WORLD, &world);
  if (rc != MPI_SUCCESS) {
    std::fprintf(stderr, "limit_bench: Create_Comm failed: %s\n", error_text(rc).c_str());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }

  std::vector<Row> rows;
  auto run = [&](const char* variant, int members, const std::function<Outcome()>& f) {
    if (!o.wants(variant)) return;
    if (rank_ == 0) std::fprintf(stderr, "limit_bench: %s\n", variant);
    settle();
    Outcome out = f();
    settle();
    add_rows(&rows, variant, members, out);
  };
  // Ranges first: MPI libraries keep freed communicators in pools of their own, which a later
  // variant's RSS growth would not show.
  run("range_world", size_, [&] { return range_world(world, o); });
  run("range_self", 1, [&] { return range_self(world, o); });
  run("native_self", 1, [&] { return native_dup(MPI_COMM_SELF, o); });
  run("native_world", size_, [&] { return native_dup(MPI_COMM_WORLD, o); });
  set_ratios(&rows);

  if (rank_ == 0) {
    nlohmann::json settings{
        {"max", o.max}, {"batch", o.batch}, {"time_limit", o.time_limit}, {"variants", o.variants}};
    benchcli::emit("limit_bench", o.out, to_rows(rows), settings, true, [&] { print_table(rows); });
    std::fflush(stdout);
  }
  world = rangecomm::Comm();
  MPI_Finalize();
  return 0;
}
