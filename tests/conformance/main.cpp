// The driver of the conformance test (docs/conformance.md): makes the pairs of communicators
// (native MPI, and the library's over the same processes in the same order), derives each case
// from the seed and its number, runs it on both and compares everything it produced.
//
//   conformance [--seed S] [--cases N] [--first F] [--max-bytes B] [--thresholds scaled]
//               [--only coll|p2p] [--verbose] [--keep-going]
// or the environment variables CONFORMANCE_SEED, _CASES, _FIRST, _MAX_BYTES, _THRESHOLDS.
#include <rangecomm.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "../harness/stack_dump.h"
#include "conformance.hpp"

namespace conf {

void init_ops();
void free_ops();

void complete(std::vector<MPI_Request>& reqs, int method, std::vector<int>& errors,
              std::vector<MPI_Status>& statuses) {
  const int n = (int)reqs.size();
  errors.assign(n, MPI_SUCCESS);
  statuses.assign(n, MPI_Status{});
  if (n == 0) return;
  auto from_statuses = [&](int rc, const std::vector<int>& which) {
    for (int i : which)
      errors[i] = rc == MPI_ERR_IN_STATUS ? err_class(statuses[i].MPI_ERROR) : err_class(rc);
  };
  std::vector<int> all(n);
  for (int i = 0; i < n; ++i) all[i] = i;
  int rc, flag = 0;
  switch (method) {
    case WAITALL:
      rc = MPI_Waitall(n, reqs.data(), statuses.data());
      from_statuses(rc, all);
      if (rc == MPI_ERR_IN_STATUS)  // MPI may return before the others completed
        for (int i = 0; i < n; ++i)
          if (errors[i] == MPI_ERR_PENDING) errors[i] = err_class(MPI_Wait(&reqs[i], &statuses[i]));
      break;
    case WAIT_IN_ORDER:
    case WAIT_IN_REVERSE:
      for (int k = 0; k < n; ++k) {
        int i = method == WAIT_IN_ORDER ? k : n - 1 - k;
        errors[i] = err_class(MPI_Wait(&reqs[i], &statuses[i]));
      }
      break;
    case TESTALL:  // until done
      do rc = MPI_Testall(n, reqs.data(), &flag, statuses.data());
      while (rc == MPI_SUCCESS && !flag);
      from_statuses(rc, all);
      if (rc == MPI_ERR_IN_STATUS)  // the ones still pending
        for (int i = 0; i < n; ++i)
          if (errors[i] == MPI_ERR_PENDING) errors[i] = err_class(MPI_Wait(&reqs[i], &statuses[i]));
      break;
    case WAITANY:
    case TESTANY:
      for (int k = 0; k < 4 * n + 4; ++k) {
        int idx = MPI_UNDEFINED;
        MPI_Status st{};
        if (method == WAITANY) {
          rc = MPI_Waitany(n, reqs.data(), &idx, &st);
        } else {
          do rc = MPI_Testany(n, reqs.data(), &idx, &flag, &st);
          while (rc == MPI_SUCCESS && !flag);
        }
        if (idx == MPI_UNDEFINED) break;
        errors[idx] = err_class(rc);
        statuses[idx] = st;
      }
      break;
    default: {  // Waitsome, Testsome
      std::vector<int> idx(n);
      std::vector<MPI_Status> sts(n);
      for (int k = 0; k < 4 * n + 4; ++k) {
        int outcount = MPI_UNDEFINED;
        if (method == WAITSOME) {
          rc = MPI_Waitsome(n, reqs.data(), &outcount, idx.data(), sts.data());
        } else {
          do rc = MPI_Testsome(n, reqs.data(), &outcount, idx.data(), sts.data());
          while (rc == MPI_SUCCESS && outcount == 0);
        }
        if (outcount == MPI_UNDEFINED) break;
        for (int j = 0; j < outcount; ++j) {
          statuses[idx[j]] = sts[j];
          errors[idx[j]] = rc == MPI_ERR_IN_STATUS ? err_class(sts[j].MPI_ERROR) : err_class(rc);
        }
      }
      break;
    }
  }
}

std::string Case::describe() const {
  std::string s;
  for (size_t i = 0; i < ops.size(); ++i) s += fmt("  op %zu: %s\n", i, ops[i]->describe().c_str());
  static const char* methods[] = {"MPI_Waitall",  "MPI_Wait in order", "MPI_Wait in reverse",
                                  "MPI_Testall",  "MPI_Waitany",       "MPI_Testany",
                                  "MPI_Waitsome", "MPI_Testsome"};
  s += fmt("  nonblocking collectives completed by %s", methods[completion]);
  return s;
}

}  // namespace conf

using namespace conf;

namespace {

struct CommPair {
  std::string name;
  std::vector<int> members;  // world ranks in communicator order
  MPI_Comm native = MPI_COMM_NULL, lib = MPI_COMM_NULL;
  int rank = -1;  // this process's rank in it, -1 outside
};

void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) die("%s failed with error class %d", what, err_class(rc));
}

// The native twin: MPI_Comm_split of the world with the members in order.
MPI_Comm native_twin(const std::vector<int>& members, int wr) {
  int key = -1;
  for (size_t i = 0; i < members.size(); ++i)
    if (members[i] == wr) key = (int)i;
  MPI_Comm c = MPI_COMM_NULL;
  check(MPI_Comm_split(MPI_COMM_WORLD, key >= 0 ? 0 : MPI_UNDEFINED, key, &c), "MPI_Comm_split");
  return c;
}

std::vector<CommPair> make_comms(int P, int wr) {
  std::vector<CommPair> v;
  CommPair world;
  world.name = "range 0..P-1 of MPI_COMM_WORLD";
  for (int i = 0; i < P; ++i) world.members.push_back(i);
  check(MPI_Comm_dup(MPI_COMM_WORLD, &world.native), "MPI_Comm_dup");
  check(MPIX_Comm_create_range(MPI_COMM_WORLD, 0, P - 1, 1, &world.lib), "create_range");
  v.push_back(world);
  if (P >= 3) {
    CommPair s;
    int first = P >= 7 ? 0 : P >= 4 ? 1 : 0, stride = P >= 7 ? 3 : 2;
    s.name = fmt("strided range %d..%d:%d of MPI_COMM_WORLD", first, P - 1, stride);
    for (int i = first; i < P; i += stride) s.members.push_back(i);
    s.native = native_twin(s.members, wr);
    check(MPIX_Comm_create_range(MPI_COMM_WORLD, first, P - 1, stride, &s.lib), "create_range");
    v.push_back(s);
  }
  if (P >= 2) {
    CommPair s;
    int first = 1, last = P >= 4 ? P - 2 : P - 1;
    s.name = fmt("range %d..%d of the range of the world", first, last);
    for (int i = first; i <= last; ++i) s.members.push_back(i);
    s.native = native_twin(s.members, wr);
    MPI_Comm parent = v[0].lib;
    check(MPIX_Comm_create_range(parent, first, last, 1, &s.lib), "create_range of a range");
    v.push_back(s);

    CommPair g;
    g.name = "group of the world in reverse order";
    for (int i = P - 1; i >= 0; --i) g.members.push_back(i);
    g.native = native_twin(g.members, wr);
    MPI_Group wg, rg;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    std::vector<int> ranks = g.members;
    MPI_Group_incl(wg, P, ranks.data(), &rg);
    MPI_Request req;
    check(MPIX_Icomm_create_group(MPI_COMM_WORLD, rg, 5, &g.lib, &req), "Icomm_create_group");
    check(MPI_Wait(&req, MPI_STATUS_IGNORE), "MPI_Wait");
    MPI_Group_free(&rg);
    MPI_Group_free(&wg);
    v.push_back(g);
  }
  for (CommPair& c : v) {
    for (size_t i = 0; i < c.members.size(); ++i)
      if (c.members[i] == wr) c.rank = (int)i;
    if ((c.rank >= 0) != (c.native != MPI_COMM_NULL) || (c.rank >= 0) != (c.lib != MPI_COMM_NULL))
      die("membership of %s", c.name.c_str());
    if (c.rank < 0) continue;
    int flag = 0, r1, r2, s1, s2;
    MPIX_Comm_is_range(c.lib, &flag);
    if (!flag) die("%s: not a library communicator", c.name.c_str());
    MPIX_Comm_is_range(c.native, &flag);
    if (flag) die("%s: the native twin is a library communicator", c.name.c_str());
    MPI_Comm_rank(c.native, &r1);
    MPI_Comm_rank(c.lib, &r2);
    MPI_Comm_size(c.native, &s1);
    MPI_Comm_size(c.lib, &s2);
    if (r1 != c.rank || r2 != c.rank || s1 != (int)c.members.size() || s2 != s1)
      die("%s: ranks %d/%d/%d, sizes %d/%d", c.name.c_str(), r1, r2, c.rank, s1, s2);
    MPI_Comm_set_errhandler(c.native, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(c.lib, MPI_ERRORS_RETURN);
  }
  return v;
}

// Every rank derives the same case from (seed, number).
Case make_case(uint64_t seed, long number, const std::vector<CommPair>& comms, const Limits& lim,
               int* kinds) {
  Rng rng(mix(seed, (uint64_t)number));
  Case cs;
  int n = (int)comms.size();
  cs.comm_index = n == 1 || rng.chance(40) ? 0 : (int)rng.range(1, n - 1);
  int p = (int)comms[cs.comm_index].members.size();
  int nops = rng.chance(20) ? (int)rng.range(2, 3) : 1;
  for (int i = 0; i < nops; ++i) {
    bool coll = lim.coll && (!lim.p2p || rng.chance(60));
    cs.ops.push_back(coll ? gen_collective(rng, p, lim) : gen_p2p(rng, p, lim));
    kinds[coll ? 0 : 1]++;
  }
  cs.completion = (int)rng.range(0, NUM_COMPLETIONS - 1);
  return cs;
}

// Whether n is in the comma-separated list.
bool listed(const char* list, int n) {
  for (const char* p = list; *p != '\0';) {
    char* end = nullptr;
    long v = strtol(p, &end, 10);
    if (end == p) return false;
    if (v == n) return true;
    p = *end == ',' ? end + 1 : end;
  }
  return false;
}

Outcome run_case(Case& cs, MPI_Comm comm, int rank, int size, bool lib, uint64_t seed) {
  static const bool trace = getenv("CONFORMANCE_TRACE") != nullptr;  // where a case hangs
  if (trace) fprintf(stderr, "rank %d: %s run starts\n", rank, lib ? "library" : "native");
  Outcome out;
  Ctx ctx{comm, rank, size, lib, 0};
  // CONFORMANCE_OPS=i,j,...: only these operations of the case (narrowing a failure down)
  static const char* only_ops = getenv("CONFORMANCE_OPS");
  std::vector<MPI_Request> reqs;
  for (size_t i = 0; i < cs.ops.size(); ++i) {
    if (only_ops != nullptr && !listed(only_ops, (int)i)) continue;
    ctx.seed = mix(mix(seed, (uint64_t)rank), i);
    cs.ops[i]->start(ctx, out, reqs);
    if (cs.ops[i]->fenced() && i + 1 < cs.ops.size())
      out.ints("barrier after point-to-point: error class", {err_class(MPI_Barrier(comm))});
  }
  std::vector<int> errors;
  std::vector<MPI_Status> statuses;
  complete(reqs, cs.completion, errors, statuses);
  if (!errors.empty()) out.ints("nonblocking collectives: completion error classes", errors);
  for (auto& op : cs.ops) op->finish(ctx, out);
  if (trace) fprintf(stderr, "rank %d: %s run ends\n", rank, lib ? "library" : "native");
  return out;
}

// A case that never ends: say which one, and where in it this rank is, before the test's time
// limit kills the job.
volatile sig_atomic_t g_case = -1;
enum Phase { BEFORE, NATIVE_RUN, MAKING_DUP, LIBRARY_RUN, COMPARING, LIMIT_PASSED };
const char* const kPhases[] = {"before it",
                               "in its native run",
                               "making its dup",
                               "in its library run",
                               "comparing outcomes with the other ranks",
                               "before it (the run's limit passed between cases)"};
volatile sig_atomic_t g_phase = BEFORE;
char g_alarm_text[256];
void on_alarm(int) {
  char buf[400];
  int n = snprintf(buf, sizeof buf,
                   "conformance: the time limit ran out at case %ld, this rank was %s (%s)\n",
                   (long)g_case, kPhases[g_phase], g_alarm_text);
  if (n > 0) (void)!write(2, buf, (size_t)n);
  stack_dump_print();
  _exit(3);
}

long arg_or_env(int argc, char** argv, const char* opt, const char* env, long fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (strcmp(argv[i], opt) == 0) return strtol(argv[i + 1], nullptr, 0);
  if (const char* v = getenv(env)) return strtol(v, nullptr, 0);
  return fallback;
}
std::string str_arg_or_env(int argc, char** argv, const char* opt, const char* env) {
  for (int i = 1; i + 1 < argc; ++i)
    if (strcmp(argv[i], opt) == 0) return argv[i + 1];
  if (const char* v = getenv(env)) return v;
  return "";
}
bool flag_arg(int argc, char** argv, const char* opt) {
  for (int i = 1; i < argc; ++i)
    if (strcmp(argv[i], opt) == 0) return true;
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  const uint64_t seed = (uint64_t)arg_or_env(argc, argv, "--seed", "CONFORMANCE_SEED", 1);
  const long cases = arg_or_env(argc, argv, "--cases", "CONFORMANCE_CASES", 1000);
  const long first = arg_or_env(argc, argv, "--first", "CONFORMANCE_FIRST", 0);
  Limits lim;
  lim.max_bytes = arg_or_env(argc, argv, "--max-bytes", "CONFORMANCE_MAX_BYTES", 1 << 20);
  std::string only = str_arg_or_env(argc, argv, "--only", "CONFORMANCE_ONLY");
  if (only == "coll") lim.p2p = false;
  if (only == "p2p") lim.coll = false;
  const bool scaled =
      str_arg_or_env(argc, argv, "--thresholds", "CONFORMANCE_THRESHOLDS") == "scaled";
  const bool verbose = flag_arg(argc, argv, "--verbose");
  const bool keep_going = flag_arg(argc, argv, "--keep-going");
  // The library reads its thresholds at their first use: set them before anything runs.
  if (scaled) scale_thresholds();

  MPI_Init(&argc, &argv);
  int wr, P;
  MPI_Comm_rank(MPI_COMM_WORLD, &wr);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  int linked = 0;
  MPIX_Comm_is_range(MPI_COMM_WORLD, &linked);  // resolves only with the library in front
  // Errors of request arrays (MPI_ERR_IN_STATUS) reach MPICH's handler of MPI_COMM_WORLD.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  init_units();
  init_ops();
  static std::vector<char> bsend(8 << 20);
  MPI_Buffer_attach(bsend.data(), (int)bsend.size());
  std::vector<CommPair> comms = make_comms(P, wr);

  long limit = arg_or_env(argc, argv, "--time-limit", "MPITEST_TIME_LIMIT", 0);
  long case_limit = arg_or_env(argc, argv, "--case-time-limit", "CONFORMANCE_CASE_TIME_LIMIT", 0);
  char label[32];
  snprintf(label, sizeof label, "rank %d", wr);
  stack_dump_prepare(label);
  signal(SIGALRM, on_alarm);
  snprintf(g_alarm_text, sizeof g_alarm_text,
           "seed %llu; rerun it alone: --seed %llu --first <case> --cases 1 --verbose",
           (unsigned long long)seed, (unsigned long long)seed);
  double t0 = MPI_Wtime();
  if (wr == 0) {
    printf(
        "conformance: seed %llu, cases %ld..%ld, %d ranks, max %ld bytes per buffer, %s "
        "thresholds; communicators:",
        (unsigned long long)seed, first, first + cases - 1, P, lim.max_bytes,
        scaled ? "scaled" : "default");
    for (auto& c : comms) printf(" [%s]", c.name.c_str());
    printf("\n");
    fflush(stdout);
  }
  const double slow = getenv("CONFORMANCE_SLOW") ? atof(getenv("CONFORMANCE_SLOW")) : 0;
  int kinds[2] = {0, 0};
  long mismatches = 0, ran = 0;
  for (long k = first; k < first + cases; ++k) {
    g_case = (sig_atomic_t)k;
    g_phase = BEFORE;
    if (limit > 0 || case_limit > 0) {
      long left = limit > 0 ? limit - (long)(MPI_Wtime() - t0) : case_limit;
      if (case_limit > 0) left = std::min(left, case_limit);
      if (left <= 0) {  // past the limit between cases: re-arming would never end
        g_phase = LIMIT_PASSED;
        raise(SIGALRM);
      }
      alarm((unsigned)left);
    }
    Case cs = make_case(seed, k, comms, lim, kinds);
    CommPair& cp = comms[cs.comm_index];
    if (verbose && wr == 0)
      printf("case %ld on %s%s:\n%s\n", k, cp.name.c_str(), k % 2 ? " (a dup made for it)" : "",
             cs.describe().c_str()),
          fflush(stdout);
    std::string diff;
    if (cp.rank >= 0) {
      uint64_t cseed = mix(seed ^ 0x5eedull, (uint64_t)k);
      int size = (int)cp.members.size();
      double t1 = MPI_Wtime();
      g_phase = NATIVE_RUN;
      Outcome native = run_case(cs, cp.native, cp.rank, size, false, cseed);
      double t2 = MPI_Wtime();
      // Odd cases run on a dup made for the case, so that every message of the case is the
      // first one of its sender to its receiver there: collectives' small first messages travel
      // inside their senders' bindings, the others after a binding of their own.
      MPI_Comm lib = cp.lib;
      g_phase = MAKING_DUP;
      if (k % 2 == 1) check(MPI_Comm_dup(cp.lib, &lib), "MPI_Comm_dup of the library communicator");
      g_phase = LIBRARY_RUN;
      Outcome lib_outcome = run_case(cs, lib, cp.rank, size, true, cseed);
      if (lib != cp.lib) check(MPI_Comm_free(&lib), "MPI_Comm_free of the case's dup");
      double t3 = MPI_Wtime();
      diff = compare(native, lib_outcome);
      ++ran;
      // Where the time of a run goes: cases slower than CONFORMANCE_SLOW seconds.
      if (slow > 0 && cp.rank == 0 && t3 - t1 > slow)
        printf("conformance: case %ld took %.2f s natively, %.2f s on the library:\n%s\n", k,
               t2 - t1, t3 - t2, cs.describe().c_str()),
            fflush(stdout);
    }
    g_phase = COMPARING;
    int bad = diff.empty() ? INT_MAX : wr, lowest;
    MPI_Allreduce(&bad, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (lowest != INT_MAX) {
      ++mismatches;
      if (wr == lowest)
        printf(
            "conformance: MISMATCH seed %llu case %ld on %s%s (%zu ranks, this process is rank "
            "%d there, world rank %d):\n%s\n",
            (unsigned long long)seed, k, cp.name.c_str(), k % 2 ? " (a dup made for it)" : "",
            cp.members.size(), cp.rank, wr, cs.describe().c_str());
      fflush(stdout);
      MPI_Barrier(MPI_COMM_WORLD);
      if (!diff.empty())
        printf("conformance: seed %llu case %ld, rank %d (world rank %d): %s\n",
               (unsigned long long)seed, k, cp.rank, wr, diff.c_str());
      fflush(stdout);
      MPI_Barrier(MPI_COMM_WORLD);
      if (wr == lowest)
        printf(
            "conformance: rerun this case alone with --seed %llu --first %ld --cases 1 "
            "--verbose%s\n",
            (unsigned long long)seed, k, scaled ? " --thresholds scaled" : "");
      fflush(stdout);
      if (!keep_going) break;
    }
  }
  alarm(0);
  double t = MPI_Wtime() - t0;
  for (auto c = comms.rbegin(); c != comms.rend(); ++c) {  // children before parents
    if (c->native != MPI_COMM_NULL) MPI_Comm_free(&c->native);
    if (c->lib != MPI_COMM_NULL) MPI_Comm_free(&c->lib);
  }
  void* b;
  int bs;
  MPI_Buffer_detach(&b, &bs);
  free_ops();
  free_units();
  long total_ran = 0;
  MPI_Reduce(&ran, &total_ran, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (wr == 0) {
    if (mismatches == 0)
      printf(
          "conformance: %ld cases (%d collective and %d point-to-point operations) identical "
          "on native and library communicators in %.1f s\n",
          cases, kinds[0], kinds[1], t);
    else
      printf("conformance: %ld mismatching case%s\n", mismatches, mismatches > 1 ? "s" : "");
  }
  MPI_Finalize();
  (void)linked;
  return mismatches == 0 ? 0 : 1;
}
