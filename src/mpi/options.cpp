#include "mpi/options.hpp"

#include <algorithm>
#include <cctype>

#include <CLI/CLI.hpp>

#include "bench/experiment.hpp"  // usage_error
#include "bench/runner.hpp"      // split_fields

namespace memlab::mpi {

using bench::usage_error;

namespace {

constexpr std::int64_t max_bytes = std::int64_t{4} << 30;  // link.nccl's axis bound

std::string collective_list() {
  std::string out;
  for (link::collective c : link::all_collectives) out += (out.empty() ? "" : ", ") + std::string(link::collective_name(c));
  return out;
}

void check_size(std::int64_t v, std::string const& token) {
  if (v < 4 || v > max_bytes || v % 4 != 0)
    throw usage_error("--bytes: " + token + " (" + std::to_string(v) +
                      " bytes) is not a multiple of 4 (floats) in [4, 4G]");
}

}  // namespace

std::int64_t parse_size(std::string const& text) {
  auto bad = [&] { return usage_error("--bytes: cannot read '" + text + "' as a size (e.g. 8, 64K, 16M, 4G, 2^20)"); };
  if (text.empty()) throw bad();
  if (text.rfind("2^", 0) == 0) {
    std::string const e = text.substr(2);
    if (e.empty() || e.size() > 2 || !std::all_of(e.begin(), e.end(), [](unsigned char c) { return std::isdigit(c); }))
      throw bad();
    int const k = std::stoi(e);
    if (k > 40) throw bad();
    return std::int64_t{1} << k;
  }
  std::size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  if (digits == 0 || digits > 12) throw bad();
  std::int64_t v = std::stoll(text.substr(0, digits));
  std::string const unit = text.substr(digits);
  if (unit.size() > 1) throw bad();
  if (!unit.empty()) {
    switch (std::toupper(static_cast<unsigned char>(unit[0]))) {
      case 'K': v <<= 10; break;
      case 'M': v <<= 20; break;
      case 'G': v <<= 30; break;
      default: throw bad();
    }
  }
  return v;
}

std::vector<std::int64_t> parse_bytes(std::string const& text) {
  if (text.empty()) throw usage_error("--bytes: no size given");
  std::vector<std::int64_t> out;
  for (std::string const& item : bench::split_fields(text, ',')) {
    if (item.empty()) throw usage_error("--bytes: empty item in '" + text + "'");
    auto const parts = bench::split_fields(item, ':');
    if (parts.size() == 1) {
      std::int64_t const v = parse_size(item);
      check_size(v, item);
      out.push_back(v);
      continue;
    }
    if (parts.size() > 3) throw usage_error("--bytes: '" + item + "' is not SIZE, LO:HI or LO:HI:FACTOR");
    std::int64_t const lo = parse_size(parts[0]), hi = parse_size(parts[1]);
    std::int64_t factor = 2;
    if (parts.size() == 3) {
      std::string const& f = parts[2];
      if (f.empty() || f.size() > 4 || !std::all_of(f.begin(), f.end(), [](unsigned char c) { return std::isdigit(c); }) ||
          std::stoll(f) < 2)
        throw usage_error("--bytes: the factor in '" + item + "' must be an integer of at least 2");
      factor = std::stoll(f);
    }
    if (hi < lo) throw usage_error("--bytes: '" + item + "' ends below its start");
    check_size(lo, parts[0]);
    check_size(hi, parts[1]);
    for (std::int64_t v = lo; v <= hi; v *= factor) out.push_back(v);  // LO x F^k: multiples of 4, <= HI
  }
  std::vector<std::int64_t> unique;
  for (std::int64_t v : out)
    if (std::find(unique.begin(), unique.end(), v) == unique.end()) unique.push_back(v);
  return unique;
}

std::vector<link::collective> parse_collectives(std::string const& text) {
  std::vector<link::collective> out;
  for (std::string const& name : bench::split_fields(text, ',')) {
    if (name == "all") {
      for (link::collective c : link::all_collectives)
        if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
      continue;
    }
    link::collective c{};
    if (!link::collective_from_name(name, &c))
      throw usage_error("--collectives: unknown collective '" + name + "' (one of: " + collective_list() + ", all)");
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  }
  if (out.empty()) throw usage_error("--collectives: no collective named");
  return out;
}

options parse_options(std::vector<std::string> const& args) {
  options o;
  std::string collectives = "all", bytes;
  CLI::App app{"memlab-mpi", "memlab-mpi"};
  app.set_help_flag();  // -h is an ordinary flag: every rank prints usage_text() and exits 0
  app.add_flag("-h,--help", o.help);
  app.add_option("-c,--collectives", collectives);
  app.add_option("-b,--bytes", bytes);
  app.add_option("-o,--output", o.output_dir)->check([](std::string const& v) {
    return v.empty() ? std::string("needs a folder") : std::string();
  });
  app.add_flag("--allow-shared-gpu", o.allow_shared_gpu)->disable_flag_override();
  app.add_option("--seed", o.seed)->check([](std::string const& v) {
    bool const digits = !v.empty() && std::all_of(v.begin(), v.end(), [](unsigned char c) { return std::isdigit(c); });
    return digits ? std::string() : "'" + v + "' is not a non-negative integer";
  });
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them last first
  try {
    app.parse(reversed);
  } catch (CLI::ParseError const& e) {
    throw usage_error(std::string(e.what()) + " (memlab-mpi --help)");
  }
  o.collectives = parse_collectives(collectives);
  if (app.count("--bytes") > 0) o.bytes = parse_bytes(bytes);
  return o;
}

std::string usage_text() {
  return "memlab-mpi: NCCL collectives with one process per GPU, NCCL's unique id shared through MPI\n"
         "usage: mpirun -np N [-H host1:G,host2:G] memlab-mpi [options]\n"
         "  -c, --collectives LIST  comma list of " + collective_list() + " or all (default: all)\n"
         "  -b, --bytes LIST        sizes: SIZE, LO:HI (doubling) or LO:HI:FACTOR, e.g. 8:4G or 1M,64M\n"
         "                          (nccl-tests' size: the larger buffer of one rank; default 8 B to 1 GiB)\n"
         "  -o, --output DIR        rank 0 writes DIR/run.json (default: memlab-mpi-results)\n"
         "      --allow-shared-gpu  let ranks of one host share a GPU (NCCL refuses this unless each\n"
         "                          rank has its own NCCL_HOSTID; docs/link.md)\n"
         "      --seed N            run seed of the inputs (default 20261122)\n"
         "exit status: 0 every row verified, 1 a row failed or NCCL/CUDA failed, 2 bad arguments,\n"
         "77 a host without a GPU or with more ranks than GPUs\n";
}

gpu_choice gpu_for_rank(int local_rank, int local_ranks, int visible_gpus, bool allow_shared_gpu) {
  gpu_choice g;
  if (visible_gpus <= 0) {
    g.error = "no GPU visible to this process (CUDA_VISIBLE_DEVICES, driver)";
    return g;
  }
  if (local_rank < 0 || local_ranks <= 0 || local_rank >= local_ranks) {
    g.error = "local rank " + std::to_string(local_rank) + " of " + std::to_string(local_ranks) + " is not a rank";
    return g;
  }
  if (local_ranks > visible_gpus && !allow_shared_gpu) {
    g.error = std::to_string(local_ranks) + " ranks on this host but " + std::to_string(visible_gpus) + " GPU" +
              (visible_gpus == 1 ? "" : "s") + " visible: start at most one rank per GPU (mpirun --map-by ppr:" +
              std::to_string(visible_gpus) + ":node), or pass --allow-shared-gpu";
    return g;
  }
  g.device = local_rank % visible_gpus;
  g.shared = local_ranks - g.device > visible_gpus;  // rank device + visible_gpus exists
  return g;
}

}  // namespace memlab::mpi
