// What every benchmark driver in bench/ shares: options through CLI11, statistics over repeated
// samples, and the result rows as a table, CSV (the columns tools/showcase_experiments.py reads)
// or JSON (nlohmann::json). Header-only; MPI must be initialised before parse().
#pragma once

#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace benchcli {

enum class Format { table, csv, json };

// One result: a statistic over repeated samples of one variant at one parameter. ratio is the
// variant against the native MPI figure measured in the same run (as the driver defines it).
struct Row {
  std::string experiment, variant, param;
  int ranks = 0;
  double median = 0, min = 0, max = 0, ratio = 1;
  std::string unit = "us", note;
};

inline Row make_row(std::string experiment, std::string variant, std::string param, int ranks,
                    double median, double min, double max, double ratio, std::string unit = "us",
                    std::string note = "") {
  Row r;
  r.experiment = std::move(experiment);
  r.variant = std::move(variant);
  r.param = std::move(param);
  r.ranks = ranks;
  r.median = median, r.min = min, r.max = max, r.ratio = ratio;
  r.unit = std::move(unit);
  r.note = std::move(note);
  return r;
}

// The median, minimum and maximum of samples (sorted in place).
struct Stats {
  double median = 0, min = 0, max = 0;
};
inline Stats stats(std::vector<double>& samples) {
  if (samples.empty()) return {};
  std::sort(samples.begin(), samples.end());
  size_t n = samples.size();
  double med = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
  return {med, samples.front(), samples.back()};
}

// What went wrong in a driver's run: calls that failed (each reported on standard error with
// the rank and the error's text from `describe`: MPI_Error_string, or rangecomm::Error_string
// for the library's own codes) and wrong results the driver counts with add(). total() is
// collective over MPI_COMM_WORLD: every rank gets the sum, for the exit status.
class Failures {
 public:
  using Describe = int (*)(int code, char* text, int* length);
  Failures(const char* driver, Describe describe) : driver_(driver), describe_(describe) {}

  void check(int rc, const char* what) {
    if (rc == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (describe_(rc, text, &len) != MPI_SUCCESS)
      len = std::snprintf(text, sizeof text, "error code %d", rc);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::fprintf(stderr, "%s: rank %d: %s failed: %.*s\n", driver_, rank, what, len, text);
    ++count_;
  }
  void add() { ++count_; }
  int total() const {
    int sum = 0;
    MPI_Allreduce(&count_, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    return sum;
  }

 private:
  const char* driver_;
  Describe describe_;
  int count_ = 0;
};

// Checks for counts and sizes: 1.. (or 0..) up to a bound, with a readable message.
inline CLI::Range at_least(long long low, long long high = (1LL << 40)) {
  return CLI::Range(low, high);
}

// --format and --output, which every driver has.
struct Output {
  std::string format_name = "table";
  std::string file;  // also write CSV (or JSON with --format json) here
  Format format() const {
    return format_name == "csv"    ? Format::csv
           : format_name == "json" ? Format::json
                                   : Format::table;
  }
};
inline void add_output_options(CLI::App& app, Output* out) {
  app.add_option("--format", out->format_name, "output on rank 0: table, csv or json")
      ->check(CLI::IsMember({"table", "csv", "json"}))
      ->capture_default_str();
  app.add_option("--output,--csv", out->file,
                 "also write the rows to this file (CSV, or JSON with --format json)");
}

// Parses the command line on every rank (they all see the same argv). Returns true to go on;
// false, with MPI finalised, when main should return *exit_code at once: 0 after --help
// (printed by rank 0), 1 after a bad option (one line on rank 0's standard error).
inline bool parse(CLI::App& app, int argc, char** argv, int* exit_code) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  try {
    app.parse(argc, argv);
    return true;
  } catch (const CLI::CallForHelp&) {
    if (rank == 0) std::fputs(app.help().c_str(), stdout);
    *exit_code = 0;
  } catch (const CLI::ParseError& e) {
    if (rank == 0) std::fprintf(stderr, "%s: %s (see --help)\n", app.get_name().c_str(), e.what());
    *exit_code = 1;
  }
  MPI_Finalize();
  return false;
}

inline void write_csv(std::FILE* f, const std::vector<Row>& rows, bool unit_and_note) {
  std::fputs("experiment,variant,param,ranks,median_us,min_us,max_us,ratio_vs_native", f);
  std::fputs(unit_and_note ? ",unit,note\n" : "\n", f);
  for (const Row& r : rows) {
    std::fprintf(f, "%s,%s,%s,%d,%.6g,%.6g,%.6g,%.6g", r.experiment.c_str(), r.variant.c_str(),
                 r.param.c_str(), r.ranks, r.median, r.min, r.max, r.ratio);
    if (unit_and_note) std::fprintf(f, ",%s,%s", r.unit.c_str(), r.note.c_str());
    std::fputc('\n', f);
  }
}

inline nlohmann::json to_json(const std::string& driver, const std::vector<Row>& rows,
                              const nlohmann::json& settings) {
  nlohmann::json out{{"driver", driver}, {"settings", settings}, {"rows", nlohmann::json::array()}};
  for (const Row& r : rows)
    out["rows"].push_back({{"experiment", r.experiment},
                           {"variant", r.variant},
                           {"param", r.param},
                           {"ranks", r.ranks},
                           {"median", r.median},
                           {"min", r.min},
                           {"max", r.max},
                           {"ratio_vs_native", r.ratio},
                           {"unit", r.unit},
                           {"note", r.note}});
  return out;
}

// Writes rows as the chosen format to standard output (rank 0 only) and to out.file if given.
// table() prints the driver's own human-readable table.
template <class Table>
void emit(const std::string& driver, const Output& out, const std::vector<Row>& rows,
          const nlohmann::json& settings, bool unit_and_note, Table table) {
  auto write = [&](std::FILE* f) {
    if (out.format() == Format::json)
      std::fprintf(f, "%s\n", to_json(driver, rows, settings).dump(2).c_str());
    else
      write_csv(f, rows, unit_and_note);
  };
  if (!out.file.empty()) {
    if (std::FILE* f = std::fopen(out.file.c_str(), "w")) {
      write(f);
      std::fclose(f);
    } else {
      std::fprintf(stderr, "%s: cannot write %s\n", driver.c_str(), out.file.c_str());
    }
  }
  if (out.format() == Format::table)
    table();
  else
    write(stdout);
}

}  // namespace benchcli
