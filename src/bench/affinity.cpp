#include "bench/affinity.hpp"

#include <sched.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

#include "memlab/error.hpp"

namespace memlab::bench {

std::vector<int> parse_cpu_list(std::string const& text) {
  std::vector<int> cpus;
  std::stringstream in(text);
  std::string part;
  auto number = [&](std::string const& s) {
    if (s.empty() || !std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); }) || s.size() > 6)
      throw error("not a CPU list: '" + text + "'");
    return std::stoi(s);
  };
  while (std::getline(in, part, ',')) {
    part.erase(std::remove_if(part.begin(), part.end(), [](unsigned char c) { return std::isspace(c); }), part.end());
    if (part.empty()) continue;
    auto const dash = part.find('-');
    int const lo = number(part.substr(0, dash));
    int const hi = dash == std::string::npos ? lo : number(part.substr(dash + 1));
    if (hi < lo) throw error("not a CPU list: '" + text + "'");
    for (int c = lo; c <= hi; ++c) cpus.push_back(c);
  }
  if (cpus.empty()) throw error("not a CPU list: '" + text + "'");
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

nlohmann::json bind_near_device(std::string const& pci_bus_id) {
  std::string const dir = "/sys/bus/pci/devices/" + pci_bus_id + "/";
  std::string list;
  if (!(std::ifstream(dir + "local_cpulist") >> list))
    return {{"applied", false}, {"reason", "no " + dir + "local_cpulist"}};
  int node = -1;
  (void)(std::ifstream(dir + "numa_node") >> node);
  std::vector<int> local;
  try {
    local = parse_cpu_list(list);
  } catch (std::exception const& e) {
    return {{"applied", false}, {"reason", e.what()}};
  }
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return {{"applied", false}, {"reason", "sched_getaffinity failed"}};
  cpu_set_t want;
  CPU_ZERO(&want);
  int count = 0;
  for (int c : local)
    if (c < CPU_SETSIZE && CPU_ISSET(c, &allowed)) {
      CPU_SET(c, &want);
      ++count;
    }
  if (count == 0) return {{"applied", false}, {"reason", "none of the GPU's local CPUs (" + list + ") is allowed to this process"}};
  if (sched_setaffinity(0, sizeof want, &want) != 0) return {{"applied", false}, {"reason", "sched_setaffinity failed"}};
  return {{"applied", true}, {"cpus", list}, {"cpus_used", count}, {"numa_node", node}};
}

}  // namespace memlab::bench
