#pragma once
// Host threads near the GPU: the run binds itself to the CPUs of the GPU's NUMA node, so host
// memory it touches (pageable buffers, the driver's staging copies) lands on that node and a
// second run sees the same distances (docs/timing.md, "Host affinity").
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace memlab::bench {

/// "0-3,8,10-11" -> {0,1,2,3,8,10,11}. Throws memlab::error on text that is not a CPU list.
std::vector<int> parse_cpu_list(std::string const& text);

/// Binds this process to the CPUs sysfs lists as local to the PCI device `pci_bus_id`
/// ("0000:65:00.0"), intersected with the CPUs it may use now. Never throws: the record's
/// `host_affinity` says what happened ({"applied": true, "cpus": "0-47", "numa_node": 0} or
/// {"applied": false, "reason": ...}), and the run goes on unbound.
nlohmann::json bind_near_device(std::string const& pci_bus_id);

}  // namespace memlab::bench
