// The parts of Catch2 the tests use, from Catch2 2 (one header) or Catch2 3 (a library with
// one header per part), and the few names of the MPI-aware main that differ between the two.
#pragma once

#if __has_include(<catch2/catch_test_macros.hpp>)
#define MPITEST_CATCH_MAJOR 3
#include <catch2/catch_test_macros.hpp>
#else
#define MPITEST_CATCH_MAJOR 2
#ifdef MPITEST_CATCH_IMPLEMENTATION
#define CATCH_CONFIG_RUNNER  // Catch2 2 compiles its implementation into the main's unit
#endif
#include <catch2/catch.hpp>
#endif

#ifdef MPITEST_CATCH_IMPLEMENTATION
#if MPITEST_CATCH_MAJOR == 3
#include <catch2/catch_config.hpp>
#include <catch2/catch_session.hpp>
#include <catch2/catch_test_case_info.hpp>
#include <catch2/reporters/catch_reporter_event_listener.hpp>
#include <catch2/reporters/catch_reporter_registrars.hpp>
#endif

namespace mpitest {

#if MPITEST_CATCH_MAJOR == 3
using ListenerBase = Catch::EventListenerBase;
using AssertionEndedResult = void;  // Catch2 3's assertionEnded returns nothing

// Console text, uncoloured, to the standard output: what a rank other than 0 writes.
inline void report_plain_console(Catch::ConfigData& cfg) {
  cfg.reporterSpecifications.clear();  // Catch2 3 then uses its default, the console reporter
  cfg.defaultOutputFilename.clear();
  cfg.defaultColourMode = Catch::ColourMode::None;
}

// Whether the run reports console text to the standard output.
inline bool reports_console(const Catch::ConfigData& cfg) {
  const auto& specs = cfg.reporterSpecifications;
  if (specs.empty()) return cfg.defaultOutputFilename.empty();
  return specs.size() == 1 && specs[0].name() == "console" && !specs[0].outputFile() &&
         cfg.defaultOutputFilename.empty();
}
#else
using ListenerBase = Catch::TestEventListenerBase;
using AssertionEndedResult = bool;

inline void report_plain_console(Catch::ConfigData& cfg) {
  cfg.reporterName = "console";
  cfg.outputFilename.clear();
  cfg.useColour = Catch::UseColour::No;
}

inline bool reports_console(const Catch::ConfigData& cfg) {
  return cfg.reporterName == "console" && cfg.outputFilename.empty();
}
#endif

}  // namespace mpitest
#endif  // MPITEST_CATCH_IMPLEMENTATION
