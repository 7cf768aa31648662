#include "perf_options.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <limits>
#include <cctype>
#include <stdexcept>
#include <utility>
#include <vector>

namespace meshcomm::perf {

namespace {

const std::array<std::pair<const char*, DataType>, 20> kTypeNames = {{
    {"f32", DataType::f32}, {"float", DataType::f32}, {"f64", DataType::f64}, {"double", DataType::f64},
    {"f16", DataType::f16}, {"half", DataType::f16}, {"bf16", DataType::bf16}, {"bfloat16", DataType::bf16},
    {"i8", DataType::i8}, {"int8", DataType::i8}, {"u8", DataType::u8}, {"uint8", DataType::u8},
    {"i32", DataType::i32}, {"int32", DataType::i32}, {"u32", DataType::u32}, {"uint32", DataType::u32},
    {"i64", DataType::i64}, {"int64", DataType::i64}, {"u64", DataType::u64}, {"uint64", DataType::u64},
}};

}  // namespace

std::vector<std::string> split_list(std::string_view text) {
  std::vector<std::string> items;
  std::size_t begin = 0;
  for (std::size_t comma = text.find(','); comma != std::string_view::npos; comma = text.find(',', begin)) {
    items.emplace_back(text.substr(begin, comma - begin));
    begin = comma + 1;
  }
  items.emplace_back(text.substr(begin));
  return items;
}

std::size_t parse_size(const std::string& text, std::string_view option) {
  const auto fail = [&](std::string_view why) {
    throw std::invalid_argument(fmt::format("{} {} {}; give a whole number of bytes with an optional unit K, M or G "
                                            "(powers of 1024), such as 8, 64K, 1M or 2G",
                                            option, text, why));
  };
  std::uint64_t value = 0;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  // from_chars takes digits only: no sign, no spaces, so "-1" is not read as 2^64 - 1.
  const auto [unit_at, error] = std::from_chars(first, last, value);
  if (error == std::errc::invalid_argument) fail("is not a size");
  if (error == std::errc::result_out_of_range) fail("is more bytes than a size can hold (at most 2^64 - 1)");
  const std::string_view unit(unit_at, static_cast<std::size_t>(last - unit_at));
  unsigned shift = 0;
  if (unit == "K" || unit == "k") shift = 10;
  else if (unit == "M" || unit == "m") shift = 20;
  else if (unit == "G" || unit == "g") shift = 30;
  else if (!unit.empty()) fail("has an unknown unit '" + std::string(unit) + "'");
  if (value > (std::numeric_limits<std::size_t>::max() >> shift)) {
    fail("is more bytes than a size can hold (at most 2^64 - 1)");
  }
  return static_cast<std::size_t>(value) << shift;
}

std::optional<PerfOptions> parse_perf_options(int argc, char** argv, std::string_view program, bool quiet,
                                              int& exit_code) {
  PerfOptions options;
  CLI::App app{std::string(program) + ": meshcomm's nccl-tests-style benchmark (run it with mpirun)"};
  std::string min_bytes = "32M", max_bytes = "32M", step_bytes = "1M", type = "f32", op = "sum", backend = "mpi";
  int time_across = 3;
  int check = 1;
  app.add_option("-b,--minbytes", min_bytes, "smallest size (bytes; K, M, G suffixes)")->capture_default_str();
  app.add_option("-e,--maxbytes", max_bytes, "largest size")->capture_default_str();
  app.add_option("-f,--stepfactor", options.step_factor, "multiply the size by this each step (1: add -i)")
      ->capture_default_str()->check(CLI::Range(1.0, 1e6));
  app.add_option("-i,--stepbytes", step_bytes, "add this each step when -f is 1")->capture_default_str();
  app.add_option("-n,--iters", options.iterations, "timed iterations per size")->capture_default_str()
      ->check(CLI::Range(1, 1 << 24));
  app.add_option("-w,--warmup_iters", options.warmup, "untimed iterations first")->capture_default_str()
      ->check(CLI::Range(0, 1 << 24));
  app.add_option("-c,--check", check, "check results (0 or 1)")->capture_default_str()->check(CLI::Range(0, 1));
  app.add_option("-d,--datatype", type, "f32 f64 f16 bf16 i8 u8 i32 u32 i64 u64 (or nccl names)")
      ->capture_default_str();
  app.add_option("-o,--op", op, "sum prod min max avg")->capture_default_str();
  app.add_option("-r,--root", options.root, "root rank of broadcast")->capture_default_str();
  app.add_option("-a,--average", time_across, "time across ranks: 0 rank 0, 1 mean, 2 min, 3 max")
      ->capture_default_str()->check(CLI::Range(0, 3));
  std::string memory = "host";
  app.add_option("--memory", memory, "host, or cuda: device buffers (one GPU per rank with --backend nccl; ranks as "
                                     "threads share one GPU with --backend inproc)")
      ->capture_default_str()
      ->check(CLI::IsMember({"host", "cuda"}));
  app.add_option("--backend", backend,
                 "mpi (under mpirun), ucx (under mpirun, MPI only starting it), nccl (under mpirun, --memory cuda) "
                 "or inproc (ranks as threads, see -t); mpi,ucx measures both side by side, in the same repeats")
      ->capture_default_str()
      ->check(
          [](const std::string& list) -> std::string {
            const auto names = split_list(list);
            for (const auto& name : names) {
              if (name != "mpi" && name != "ucx" && name != "inproc" && name != "nccl") {
                return "'" + name + "' is not a backend; valid: mpi, ucx, nccl, inproc, or mpi,ucx";
              }
              if (names.size() > 1 && name != "mpi" && name != "ucx") {
                return "only mpi and ucx can be measured side by side, not " + list;
              }
            }
            auto sorted = names;
            std::sort(sorted.begin(), sorted.end());
            if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
              return "'" + list + "' names a backend twice";
            }
            return {};
          },
          "mpi|ucx|nccl|inproc|mpi,ucx");
  app.add_option("-t,--threads", options.threads, "ranks as threads of this process with --backend inproc")
      ->capture_default_str()->check(CLI::Range(1, 1024));
  std::string algorithms;
  app.add_option("--algo", algorithms,
                 "algorithm, or comma-separated algorithms measured side by side for each size; 'auto' is "
                 "meshcomm's selection (the default)");
  app.add_option("--repeat", options.repeats, "timed runs per size and algorithm; the median is reported")
      ->capture_default_str()->check(CLI::Range(1, 1000));
  app.add_option("--json", options.json_path, "write one JSON record per size and placement to this file");
  std::string buffers = "user";
  app.add_option("--buffers", buffers,
                 "user: plain page-aligned memory, as the tensors a trainer has; shared: meshcomm's "
                 "Communicator::allocate_shared (as nccl-tests can use ncclMemAlloc); both: every algorithm on each, "
                 "side by side")
      ->capture_default_str()->check(CLI::IsMember({"shared", "user", "both"}));
  std::string baseline = "mpi_best";
  app.add_option("--baseline", baseline,
                 "what the speedup column compares against: mpi_best (of Open MPI's blocking and "
                 "nonblocking call on user buffers, the one with the lower median at each size; host memory under "
                 "mpirun), native (meshcomm's native "
                 "algorithm, when --algo lists it) or none")
      ->capture_default_str()->check(CLI::IsMember({"mpi_best", "native", "none"}));
  app.add_flag("--new-input", options.new_input,
               "before each call, every rank that sends (a broadcast's root alone) writes new bytes over its input, "
               "as a trainer sends what it has just computed; the writes are timed with the calls, in every column "
               "alike (host memory). Without it the inputs stay as filled, as in nccl-tests and OSU");
  try {
    app.parse(argc, argv);
    options.min_bytes = parse_size(min_bytes, "-b");
    options.max_bytes = parse_size(max_bytes, "-e");
    options.step_bytes = parse_size(step_bytes, "-i");
    if (options.max_bytes < options.min_bytes) throw std::invalid_argument("-e must not be smaller than -b");
  } catch (const CLI::ParseError& error) {
    exit_code = quiet ? (error.get_exit_code() == 0 ? 0 : 2) : app.exit(error);
    return std::nullopt;
  } catch (const std::invalid_argument& error) {
    if (!quiet) std::fprintf(stderr, "%s: %s\n", std::string(program).c_str(), error.what());
    exit_code = 2;
    return std::nullopt;
  }
  bool type_known = false;
  for (const auto& [name, value] : kTypeNames) {
    if (type == name) {
      options.type = value;
      type_known = true;
    }
  }
  const std::array<std::pair<const char*, ReduceOp>, 5> ops = {
      {{"sum", ReduceOp::sum}, {"prod", ReduceOp::prod}, {"min", ReduceOp::min}, {"max", ReduceOp::max},
       {"avg", ReduceOp::avg}}};
  bool op_known = false;
  for (const auto& [name, value] : ops) {
    if (op == name) {
      options.op = value;
      op_known = true;
    }
  }
  if (!type_known || !op_known) {
    if (!quiet) {
      std::fprintf(stderr, "%s: %s; valid: %s\n", std::string(program).c_str(),
                   !type_known ? ("-d " + type + " is not a data type").c_str() : ("-o " + op + " is not an op").c_str(),
                   !type_known ? "f32 f64 f16 bf16 i8 u8 i32 u32 i64 u64" : "sum prod min max avg");
    }
    exit_code = 2;
    return std::nullopt;
  }
  options.check = check != 0;
  options.shared_buffers = buffers != "user";
  options.user_buffers = buffers != "shared";
  options.algorithms.clear();
  for (const auto& name : split_list(algorithms)) options.algorithms.emplace_back(name == "auto" ? "" : name);
  options.time_across = static_cast<TimeAcross>(time_across);
  options.backends.clear();
  for (const auto& name : split_list(backend)) {
    options.backends.push_back(name == "inproc" ? BackendKind::inproc
                               : name == "nccl" ? BackendKind::nccl
                               : name == "ucx"  ? BackendKind::ucx
                                                : BackendKind::mpi);
  }
  options.backend = options.backends.front();
  options.baseline = baseline == "mpi_best" ? Baseline::mpi_best
                     : baseline == "native" ? Baseline::native
                                            : Baseline::none;
  options.memory = memory == "cuda" ? MemoryKind::cuda : MemoryKind::host;
  if (options.memory == MemoryKind::cuda && options.new_input) {
    if (!quiet) {
      std::fprintf(stderr, "%s: --new-input writes host memory; valid with --memory host, not --memory cuda\n",
                   std::string(program).c_str());
    }
    exit_code = 2;
    return std::nullopt;
  }
  if (options.memory == MemoryKind::cuda) {
    // Device buffers are one kind; --buffers chooses among host buffers only.
    options.shared_buffers = true;
    options.user_buffers = false;
  }
  return options;
}

}  // namespace meshcomm::perf
