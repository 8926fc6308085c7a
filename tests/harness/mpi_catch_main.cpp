// Catch2 main for MPI test programs, run under mpiexec with any number of ranks.
//
// Every rank runs every test case. After each case the ranks agree on whether it failed
// anywhere: if so it counts as failed on every rank, and the failure text of ranks 1..p-1 is
// forwarded to rank 0, which alone prints. Every rank exits nonzero if any rank failed.
#define MPITEST_CATCH_IMPLEMENTATION
#include <mpi.h>
#include "catch.hpp"
#include "stack_dump.h"

#include <unistd.h>

#include <csignal>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

// Harness traffic has its own communicator so that it can never match a test's messages.
MPI_Comm harness_comm = MPI_COMM_NULL;
int rank = 0;  // on MPI_COMM_WORLD and harness_comm
// Ranks other than 0 write Catch's console output here; each failed case's part is forwarded.
std::ostringstream captured;
// Rank 0 prints forwarded failures into the report only if the report is console text.
bool report_is_console = true;
std::size_t failed_cases = 0;                 // cases that failed on any rank
std::size_t failed_elsewhere = 0;             // cases that passed here but failed on another rank
volatile std::sig_atomic_t in_test_case = 0;  // read by the time limit's signal handler
std::streambuf* real_cout = nullptr;          // std::cout's buffer before any capture

// Gathers every rank's string at rank 0 (elsewhere the result is empty).
std::vector<std::string> gather_strings(const std::string& mine) {
  int p = 0;
  MPI_Comm_size(harness_comm, &p);
  const bool root = rank == 0;
  int len = static_cast<int>(mine.size());
  std::vector<int> lens(root ? p : 0), offsets(root ? p : 0);
  MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, harness_comm);
  int total = 0;
  for (std::size_t k = 0; k < lens.size(); ++k) {
    offsets[k] = total;
    total += lens[k];
  }
  std::vector<char> all(static_cast<std::size_t>(total) + 1);
  MPI_Gatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), offsets.data(), MPI_CHAR, 0,
              harness_comm);
  std::vector<std::string> out;
  for (std::size_t k = 0; k < lens.size(); ++k) out.emplace_back(&all[offsets[k]], lens[k]);
  return out;
}

// Catch's console banner, printed once before a process's first failure; not worth forwarding.
std::string without_banner(const std::string& text) {
  const std::string marker = "Run with -? for options\n\n";
  const auto at = text.find(marker);
  return at == std::string::npos ? text : text.substr(at + marker.size());
}

std::string prefixed(const std::string& text, int from) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line)) out += "[rank " + std::to_string(from) + "] " + line + '\n';
  return out;
}

class MpiListener : public mpitest::ListenerBase {
 public:
  using mpitest::ListenerBase::ListenerBase;

  // Catch reports a crash or a kill (SIGSEGV, SIGTERM from a timeout, ...) from inside its
  // signal handler, and then the process dies: no collectives then, each rank speaks for itself.
  mpitest::AssertionEndedResult assertionEnded(const Catch::AssertionStats& stats) override {
    if (stats.assertionResult.getResultType() == Catch::ResultWas::FatalErrorCondition)
      dying = true;
    return mpitest::AssertionEndedResult(true);  // (void)true on Catch2 3
  }

#ifdef MPITEST_SHARED_COUT
  // The simulated build runs every process in one OS process, which has one std::cout: Catch
  // holds the capture buffer from its start (its reporters are made before this event), so the
  // real one goes back before any process can run a test and print.
  void testRunStarting(const Catch::TestRunInfo& info) override {
    mpitest::ListenerBase::testRunStarting(info);
    std::cout.rdbuf(real_cout);
  }
#endif

  void testCaseStarting(const Catch::TestCaseInfo& info) override {
    mpitest::ListenerBase::testCaseStarting(info);
    in_test_case = 1;
  }

  void testCaseEnded(const Catch::TestCaseStats& stats) override {
    in_test_case = 0;
    if (dying) {
      std::cerr << prefixed(captured.str(), rank) << std::flush;
      return;
    }
    const int local = stats.totals.testCases.failed > 0 ? 1 : 0;
    int any = 0;
    MPI_Allreduce(&local, &any, 1, MPI_INT, MPI_MAX, harness_comm);
    const std::string mine = local ? without_banner(captured.str()) : std::string();
    captured.str("");  // so that each case forwards only its own output
    if (!any) return;
    ++failed_cases;
    if (!local && stats.totals.testCases.passed > 0) ++failed_elsewhere;
    const auto texts = gather_strings(mine);
    std::ostream& out = report_is_console ? std::cout : std::cerr;
    for (std::size_t k = 1; k < texts.size(); ++k)
      if (!texts[k].empty()) out << prefixed(texts[k], static_cast<int>(k));
    out.flush();
  }

  // Catch counted only this rank's failures; move the cases that failed elsewhere to "failed".
  // The stats object is a non-const temporary inside Catch, so writing through it is defined.
  void testRunEnded(const Catch::TestRunStats& stats) override {
    auto& cases = const_cast<Catch::Counts&>(stats.totals.testCases);
    cases.passed -= failed_elsewhere;
    cases.failed += failed_elsewhere;
  }

 private:
  bool dying = false;
};

// Leaves out the test cases named in the file $MPITEST_EXCLUDE, one name per line (lines
// starting with # are comments): the simulated build lists there the cases whose oracle or
// features its MPI lacks, each with its reason (sim/exclusions/).
void exclude_listed(Catch::ConfigData& cfg) {
  const char* path = std::getenv("MPITEST_EXCLUDE");
  if (path == nullptr || *path == '\0') return;
  std::ifstream in(path);
  if (!in) {
    std::cerr << "mpitest: cannot read MPITEST_EXCLUDE file " << path << '\n';
    std::exit(2);
  }
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::string escaped;
    for (char c : line) {
      if (c == ',' || c == '\\' || c == '"') escaped += '\\';
      escaped += c;
    }
    cfg.testsOrTags.push_back("~\"" + escaped + "\"");  // entries without "," between: all apply
  }
}

int run_catch(int argc, char* argv[]) {
  Catch::Session session;
  // Only rank 0 prints. Catch takes its output stream from std::cout's buffer when it starts,
  // so swapping the buffer first captures everything the other ranks' Catch would print.
  const bool root = rank == 0;
  real_cout = std::cout.rdbuf();
  if (!root) std::cout.rdbuf(captured.rdbuf());
  int rc = session.applyCommandLine(argc, argv);
  if (rc == 0) {
    Catch::ConfigData& cfg = session.configData();
    exclude_listed(cfg);
    // plain console text is what gets forwarded, whatever rank 0 reports in
    if (!root) mpitest::report_plain_console(cfg);
    report_is_console = mpitest::reports_console(cfg);
    rc = session.run();
  }
  std::cout.rdbuf(real_cout);
  return rc;
}

// A hung job is killed from outside: meson kills mpiexec, and what the ranks would have printed
// is lost. So each rank stops itself after $MPITEST_TIME_LIMIT seconds, a little before that:
// the alarm prints every thread's stack of this rank (stack_dump.h), then becomes a SIGTERM,
// which Catch reports as a failure of the test case running then. Ranks waiting between test
// cases for the others wait two seconds more, so that the rank stuck inside a test case reports
// first.
char time_limit_note[128];

void on_time_limit(int) {
  static volatile std::sig_atomic_t deferred = 0;
  if (!in_test_case && !deferred) {
    deferred = 1;
    alarm(2);
    return;
  }
  (void)!write(STDERR_FILENO, time_limit_note, std::strlen(time_limit_note));
  stack_dump_print();
  std::raise(SIGTERM);
}

void arm_time_limit() {
  const char* limit = std::getenv("MPITEST_TIME_LIMIT");
  const int seconds = limit ? std::atoi(limit) : 0;
  if (seconds <= 0) return;
  char label[32];
  std::snprintf(label, sizeof label, "rank %d", rank);
  stack_dump_prepare(label);
  std::snprintf(
      time_limit_note, sizeof time_limit_note,
      "[rank %d] mpitest: MPITEST_TIME_LIMIT of %d s reached; its stacks, then stopping\n", rank,
      seconds);
  std::signal(SIGALRM, on_time_limit);
  alarm(static_cast<unsigned>(seconds));
}

}  // namespace

CATCH_REGISTER_LISTENER(MpiListener)

int main(int argc, char* argv[]) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  // Tests check MPI error codes themselves rather than having MPI abort the job.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_dup(MPI_COMM_WORLD, &harness_comm);
  MPI_Comm_rank(harness_comm, &rank);
  arm_time_limit();

  int rc = run_catch(argc, argv);
  if (rc == 0 && failed_cases > 0) rc = 1;
  // mpiexec may report any one rank's status, so every rank returns the worst one.
  int worst = 0;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, harness_comm);

  MPI_Comm_free(&harness_comm);
  MPI_Finalize();
  return worst;
}
