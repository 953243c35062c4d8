#include "report/catalog.hpp"

#include <map>
#include <set>

#include "report/record_view.hpp"

namespace memlab::report::detail {

namespace {

std::map<std::string, technique> const& techniques() {
  static std::map<std::string, technique> const t = [] {
    std::map<std::string, technique> m;
    m["ceilings"] = {
        "The yardsticks every other section is measured against, taken in this run: the "
        "device-to-device cudaMemcpy bandwidth (the practical DRAM ceiling, well below the "
        "datasheet figure) and the FP32 FMA peak of a register-only kernel. Ratios to peer and "
        "the roofline use these measured numbers, not the datasheet.",
        "", "", "", {}};
    m["coalescing.offset"] = {
        "A warp's 32 loads are served in 32-byte sectors; when the warp's addresses start off a "
        "sector boundary, each request touches one more sector than it needs. The Guide's "
        "offsetCopy shifts a copy by 0..32 floats: aligned offsets (multiples of 8 floats) need "
        "4 sectors per request, the others 5, so the model predicts about 4/5 of the aligned "
        "bandwidth, and less than that loss where L2 absorbs the overlap.",
        "Seed 000 §9.2.1.3 (Best Practices Guide, Tesla V100): about **790 GB/s** with no offset "
        "or an offset that is a multiple of 8; misaligned offsets load 5 sectors per request "
        "instead of 4, about **4/5** of the aligned bandwidth.",
        "V100", "GB/s", {{"aligned (offset 0)", 790.0, "0"}}};
    m["coalescing.stride"] = {
        "strideCopy reads every stride-th float, so a warp spreads its 32 loads over up to 32 "
        "sectors and uses only 4 bytes of each 32 fetched. Effective bandwidth falls roughly as "
        "1/stride until every lane has its own sector (stride 8 and beyond), where it levels off.",
        "Seed 000 §9.2.1.4: stride 2 gives 50% load/store efficiency on V100; bandwidth keeps "
        "falling until each of the 32 threads loads its own 32-byte segment.",
        "V100", "", {}};
    m["coalescing.vector"] = {
        "The same copy with 4-, 8- and 16-byte elements per thread. Wider loads issue fewer "
        "instructions for the same bytes, which matters once the copy is bound by the load/store "
        "pipeline rather than by DRAM.",
        "", "", "", {}};
    m["gemm.seed_thread_tile"] = {
        "Seed 001's first kernels: each thread computes a TILE_SIZE×TILE_SIZE block of C "
        "straight from global memory. Small tiles reuse each loaded value a few times; large "
        "ones need TILE_SIZE² accumulators, exceed the register file and spill to local memory, "
        "which is the cliff in the table (registers and spill bytes are shown beside each time).",
        "Seed 001 (Tesla P100), time per multiply for TILE_SIZE 1, 2, 4, 8, 16, 32, 64: "
        "**3.28, 2.27, 2.11, 2.08, 7.37, 25.8, 83.6 ms**: fastest near 8, then the spill cliff.",
        "P100", "ms",
        {{"1", 3.282611, "1"}, {"2", 2.271091, "2"}, {"4", 2.107053, "4"}, {"8", 2.077536, "8"},
         {"16", 7.368474, "16"}, {"32", 25.815271, "32"}, {"64", 83.601498, "64"}}};
    m["gemm.seed_smem_tile"] = {
        "Shared-memory tiling (seed 001 §3, seed 004): a block stages a tile of A and a tile of "
        "B in shared memory and every thread reuses them tile-width times, so global traffic "
        "falls by the tile width. Width 1 is all overhead; the gain grows with the tile until the "
        "block size limit (32×32 threads).",
        "Seed 001 (Tesla P100), tile width 1, 2, 4, 8, 16, 32: **62.4, 10.85, 2.77, 2.11, 1.85, "
        "1.93 ms**.",
        "P100", "ms",
        {{"1", 62.395489, "1"}, {"2", 10.850624, "2"}, {"4", 2.765997, "4"}, {"8", 2.107232, "8"},
         {"16", 1.849939, "16"}, {"32", 1.928793, "32"}}};
    m["gemm.guide_ab"] = {
        "The Guide's C = A·B for a thin A (M×32) and B (32×N), reported as effective bandwidth. "
        "simpleMultiply reads A's row with a stride across the warp; coalescedMultiply stages a "
        "tile of A in shared memory with coalesced loads; sharedABMultiply also stages B, so "
        "each element of B is read from DRAM once per block instead of once per row.",
        "Seed 000 §9.2.3.2 (Tesla V100): **119.9 GB/s** (no optimization), **144.4 GB/s** "
        "(tile of A in shared memory), **195.5 GB/s** (tiles of A and B in shared memory).",
        "V100", "GB/s",
        {{"simpleMultiply", 119.9, "simple|naive"},
         {"coalescedMultiply", 144.4, "coalesced"},
         {"sharedABMultiply", 195.5, "shared_ab|sharedab|shared"}}};
    m["gemm.guide_aat"] = {
        "C = A·Aᵀ: the second operand is read down columns, so the simple kernel strides through "
        "memory by a whole row per lane. Reading a tile coalesced and transposing it through "
        "shared memory fixes the global access but makes a warp hit one shared-memory bank 32 "
        "times; padding the tile to [w][w+1] spreads the column over all 32 banks.",
        "Seed 000 §9.2.3.3 (Tesla V100): **12.8 GB/s** (strided), **140.2 GB/s** (coalesced via "
        "shared memory), **199.4 GB/s** (padded tile, no bank conflicts).",
        "V100", "GB/s",
        {{"strided", 12.8, "simple|strided|naive"},
         {"coalesced", 140.2, "coalesced"},
         {"padded", 199.4, "padded|pad"}}};
    m["gemm.ladder"] = {
        "The FP32 GEMM ladder from one output per thread to a multistage cp.async pipeline, each "
        "rung against cuBLAS SGEMM (pedantic FP32, never TF32) measured in the same run. Each "
        "step removes one bottleneck: uncoalesced loads, global traffic (shared tiles), "
        "shared-memory traffic (register blocking), instruction count (vector loads), bank "
        "conflicts, and load latency (the asynchronous pipeline).",
        "", "", "", {}};
    m["transfer.bandwidth"] = {
        "Host↔device copies over PCIe. Pageable memory is first copied by the driver into a "
        "pinned staging buffer, so it pays an extra host memcpy and cannot overlap; pinned "
        "(cudaHostAlloc), registered (cudaHostRegister) and write-combined memory are DMA'd "
        "directly. Small copies are latency-bound, so bandwidth only saturates at megabytes.",
        "Seed 000 §9.1: the Guide contrasts device memory (898 GB/s on V100) with PCIe x16 Gen3 "
        "(16 GB/s) and recommends pinned memory for the highest host↔device bandwidth.",
        "", "", {}};
    m["transfer.batching"] = {
        "Each cudaMemcpy has a fixed cost of microseconds, so many small transfers waste the link. "
        "Packing them into one buffer (with the pack and unpack kernels counted) trades that "
        "per-call latency for one large copy.",
        "", "", "", {}};
    m["transfer.overlap"] = {
        "Staged concurrent copy and execute: the data is split into nStreams chunks, and each "
        "stream copies its chunk in, runs the kernel on it and copies it out, so copies of one "
        "chunk overlap the kernel of another. The Guide's model gives tE + tT/nStreams when the "
        "kernel time tE dominates and tT + tE/nStreams otherwise; the copy engines "
        "(asyncEngineCount) bound how much can overlap.",
        "Seed 000 §9.1.3: staged copy/execute with the model tE + tT/nStreams (tE ≥ tT).", "", "",
        {}};
    m["transfer.zerocopy"] = {
        "Zero-copy: a kernel reads or writes mapped pinned host memory directly over PCIe. It "
        "wins when each byte crosses once and coalesced (no separate copy), and loses when the "
        "kernel touches the same data twice, since nothing is cached on the device.",
        "", "", "", {}};
    m["transfer.uva"] = {
        "Unified virtual addressing: one address space for host and device, so "
        "cudaPointerGetAttributes can tell where any pointer lives, and with two GPUs "
        "peer-to-peer copies can bypass the host.",
        "", "", "", {}};
    m["smem"] = {
        "Shared memory is 32 banks of 4 bytes; a warp's request is served in one pass unless two "
        "lanes hit different words of the same bank, which serializes it into as many passes as "
        "the worst bank has words (stride s gives gcd(s, 32)-way conflicts, so odd strides are "
        "free). Lanes reading the same word are served by one broadcast.",
        "", "", "", {}};
    m["smem.reverse"] = {
        "Seed 003's first example: each block reverses its slice of an array through shared "
        "memory, declared statically (size known at compile time) or dynamically (the third "
        "launch parameter). One dynamic allocation can also be carved into arrays of int, float "
        "and char, provided each piece starts at an offset aligned for its type.",
        "", "", "", {}};
    m["smem.bank_multicast"] = {
        "Several lanes reading the same 32-bit word are served together (a broadcast for the "
        "whole warp, a multicast for groups), so lanes sharing words do not conflict; only "
        "distinct words in one bank cost extra passes.",
        "", "", "", {}};
    m["constant.serialization"] = {
        "The other side of constant memory: when the lanes of a warp read different addresses, "
        "the constant cache serves one address per pass, so a warp touching 32 distinct words "
        "takes about 32 times as long as a uniform read; the read-only global path does not "
        "serialize this way.",
        "", "", "", {}};
    m["async.copy_alignment"] = {
        "Seed 002 notes that the asynchronous copy can use its hardware path only for "
        "suitably aligned chunks: 4-, 8- and 16-byte elements, with and without "
        "cuda::aligned_size_t<16> telling the compiler the alignment. Without the promise the "
        "copy may fall back to element-wise loads and stores.",
        "", "", "", {}};
    m["reduce"] = {
        "Parallel sum, seed 003's ladder: interleaved addressing (divergent warps and bank "
        "conflicts), sequential addressing, adding during the load, warp shuffles for the last "
        "32 values, several elements per thread with 16-byte loads, and one launch for any "
        "length. A large sum is bandwidth-bound, so the target is the copy ceiling, with CUB "
        "DeviceReduce as the peer.",
        "", "", "", {}};
    m["transpose"] = {
        "Transpose reads rows and writes columns, so one side is always strided in a naive "
        "kernel. Staging a 32×32 tile in shared memory makes both global sides coalesced but "
        "reads the tile down a column (a 32-way bank conflict); padding to [32][33] or an XOR "
        "swizzle removes it. The plain copy of the same bytes is the ceiling and cublasSgeam "
        "the peer.",
        "", "", "", {}};
    m["constant"] = {
        "Constant memory is cached and broadcast: when every lane of a warp reads the same "
        "address it costs one read, but different addresses are serialized. A convolution "
        "filter, read uniformly by all lanes, is the textbook fit.",
        "", "", "", {}};
    m["registers"] = {
        "Capping registers (__launch_bounds__, -maxrregcount) raises occupancy but can force "
        "spills to local memory; the table shows registers, spill bytes and occupancy beside the "
        "time, so the trade is visible.",
        "", "", "", {}};
    m["layout"] = {
        "Array of structures against structure of arrays: a kernel that touches some fields of "
        "each particle wastes the bandwidth of the fields it skips when they are interleaved "
        "(AoS); SoA keeps each field contiguous and coalesced, and AoSoA keeps warp-sized "
        "blocks of each field together.",
        "", "", "", {}};
    m["async.copy_compute"] = {
        "Copy a batch to shared memory, then compute on it. The plain version stalls each thread "
        "on its loads; memcpy_async (cooperative groups, cuda::barrier, cuda::pipeline, and "
        "Hopper's bulk copy completing on an mbarrier) lets the copy of the next batch run "
        "under the compute of this one, which pays when copy and compute cost about the same.",
        "", "", "", {}};
    m["async.warp_entanglement"] = {
        "Seed 002 §6: commit and arrive-on are warp-collective in effect; when a diverged warp "
        "issues them lane by lane, the pipeline sees several batches where a converged warp "
        "would make one, and waits longer.",
        "", "", "", {}};
    m["l2.persist"] = {
        "The Guide's sliding-window benchmark: a kernel streams a large region while repeatedly "
        "touching a smaller persistent one. An access-policy window marks the persistent lines "
        "to stay in the L2 set-aside: it helps while the region fits, and with hitRatio 1 past "
        "that it thrashes; lowering hitRatio so only the set-aside's worth is persisting avoids it.",
        "Seed 000 §9.2.2 (the Guide's GPU, 30 MB L2 set-aside): **+50%** while the persistent region "
        "fits the set-aside, about **−10%** from thrashing once it exceeds it with hitRatio 1; "
        "tuning num_bytes (20 MB) and hitRatio keeps the gain past it.",
        "", "", {}};
    return m;
  }();
  return t;
}

bool has_rows(nlohmann::json const& record, std::string const& exp) {
  for (auto const& r : arr(record, "rows"))
    if (str(r, "experiment") == exp && str(r, "skipped").empty() && num(r, "median_ms")) return true;
  return false;
}

nlohmann::json seed_json(technique const* t) {
  auto a = nlohmann::json::array();
  if (!t) return a;
  for (auto const& v : t->seed_values) a.push_back({{"label", v.label}, {"value", v.value}, {"match", v.match}});
  return a;
}

}  // namespace

technique const* find_technique(std::string const& id) {
  auto const& t = techniques();
  auto it = t.find(id);
  if (it != t.end()) return &it->second;
  auto dot = id.find('.');
  if (dot != std::string::npos) {
    it = t.find(id.substr(0, dot));
    if (it != t.end()) return &it->second;
  }
  return nullptr;
}

std::vector<plot_spec> plan_plots(nlohmann::json const& record) {
  std::vector<plot_spec> plots;
  std::set<std::string> planned;  // experiments with a dedicated plot
  auto add = [&](plot_spec p) {
    for (auto const& e : p.experiments) planned.insert(e);
    plots.push_back(std::move(p));
  };
  auto sweep = [&](std::string const& exp, std::string const& file, std::string const& title,
                   nlohmann::json hints) {
    if (!has_rows(record, exp)) return;
    hints["experiment"] = exp;
    add({file, title, "sweep", {exp}, std::move(hints)});
  };

  sweep("coalescing.offset", "coalescing_offset.png", "Copy bandwidth against offset, with the sector model",
        {{"x", {"offset"}}, {"xlabel", "offset (elements of 4 bytes)"}, {"y", "gbps"}, {"model", true}, {"ceiling", true}});
  sweep("coalescing.stride", "coalescing_stride.png", "Copy bandwidth against stride, with the sector model",
        {{"x", {"stride"}}, {"xlabel", "stride (elements of 4 bytes)"}, {"y", "gbps"}, {"model", true}, {"ceiling", true}});
  sweep("transfer.bandwidth", "transfer_bandwidth.png", "Host-device bandwidth against transfer size",
        {{"x", {"bytes", "size", "size_bytes", "transfer_bytes", "n_bytes"}}, {"xlabel", "transfer size"},
         {"y", "gbps"}, {"logx", true}, {"facet", "direction"}, {"model", true}, {"model_keys", {"link_gbps"}}});
  sweep("transfer.batching", "transfer_batching.png", "N small transfers against one packed transfer",
        {{"x", {"pieces", "n", "count", "transfers"}}, {"xlabel", "number of pieces"}, {"y", "median_ms"},
         {"logx", true}, {"logy", true}, {"facet", "direction"}, {"model", true}});
  sweep("transfer.overlap", "transfer_overlap.png", "Staged copy/execute time against nStreams, with the models",
        {{"x", {"streams", "nstreams", "n_streams", "nStreams"}}, {"xlabel", "nStreams (concurrent streams)"},
         {"y", "median_ms"}, {"facet", "variant"}, {"model", true}, {"model_keys", {"ms", "guide_ms"}}});
  sweep("l2.persist", "l2_persist.png", "Sliding-window benchmark against the persistent region's size",
        {{"x", {"persist_fraction", "persist_bytes", "persistent_bytes", "region_bytes", "region", "size"}},
         {"xlabel", "persistent region / persisting-L2 set-aside"}, {"y", "auto"}, {"vline_x", 1.0},
         {"vline_label", "region = set-aside"}, {"model", true}, {"model_keys", {"floor_ms"}}});
  for (auto const* id : {"gemm.seed_thread_tile", "gemm.seed_smem_tile"}) {
    if (!has_rows(record, id)) continue;
    auto const* t = find_technique(id);
    add({std::string(id).substr(5) + ".png",
         std::string("Seed 001's tile sweep: ") + (t ? t->seed_device : "") + " against this GPU",
         "seed_bars",
         {id},
         {{"experiment", id},
          {"x", {"tile", "tile_size", "TILE_SIZE", "tile_width", "width"}},
          {"y", "median_ms"},
          {"seed", seed_json(t)},
          {"seed_device", t ? t->seed_device : ""},
          {"seed_unit", t ? t->seed_unit : ""}}});
  }
  for (auto const* id : {"gemm.guide_ab", "gemm.guide_aat"}) {
    if (!has_rows(record, id)) continue;
    auto const* t = find_technique(id);
    add({std::string(id).substr(5) + ".png", std::string("The Guide's ") + id + " kernels: V100 against this GPU",
         "seed_bars", {id},
         {{"experiment", id}, {"x", "variant"}, {"y", "gbps"}, {"seed", seed_json(t)},
          {"seed_device", t ? t->seed_device : ""}, {"seed_unit", t ? t->seed_unit : ""}}});
  }
  if (has_rows(record, "gemm.ladder"))
    add({"gemm_ladder.png", "GEMM ladder as % of cuBLAS SGEMM", "ladder", {"gemm.ladder"},
         {{"experiment", "gemm.ladder"}}});

  // The timeline of one staged run: any row carrying extra.timeline, preferring transfer.overlap.
  std::string timeline_exp;
  for (auto const& r : arr(record, "rows")) {
    auto const& ex = obj(r, "extra");
    if (ex.contains("timeline") && ex["timeline"].is_array() && !ex["timeline"].empty()) {
      std::string e = str(r, "experiment");
      if (timeline_exp.empty() || e == "transfer.overlap") timeline_exp = e;
      if (e == "transfer.overlap") break;
    }
  }
  if (!timeline_exp.empty())
    add({"transfer_timeline.png", "Timeline of one staged copy/execute run", "timeline", {timeline_exp},
         {{"experiment", timeline_exp}}});

  // Every other experiment with a parameter swept over 3 or more values gets a generic sweep.
  std::set<std::string> seen;
  for (auto const& r : arr(record, "rows")) {
    std::string e = str(r, "experiment");
    if (e.empty() || planned.count(e) || seen.count(e) || !has_rows(record, e)) continue;
    seen.insert(e);
    std::map<std::string, std::set<double>> values;
    for (auto const& q : arr(record, "rows")) {
      if (str(q, "experiment") != e || !num(q, "median_ms")) continue;
      auto const& p = obj(q, "params");
      for (auto it = p.begin(); it != p.end(); ++it)
        if (it->is_number()) values[it.key()].insert(it->get<double>());
    }
    bool swept = false;
    for (auto const& [k, v] : values) swept |= v.size() >= 3;
    if (!swept) continue;
    std::string file;
    for (char c : e) file += (c == '.' ? '_' : c);
    add({file + ".png", e + ": every variant across its parameters", "sweep", {e},
         {{"experiment", e}, {"x", nlohmann::json::array()}, {"y", "auto"}, {"model", true}}});
  }

  // Host-device rows are left out: their bytes cross PCIe, so the DRAM roof does not bound them.
  bool roof = false;
  for (auto const& r : arr(record, "rows"))
    if (num(r, "flops").value_or(0) > 0 && num(r, "bytes").value_or(0) > 0 && num(r, "median_ms") &&
        str(r, "experiment").rfind("transfer.", 0) != 0)
      roof = true;
  if (roof)
    plots.insert(plots.begin(), {"roofline.png", "Roofline: every device kernel with declared flops and bytes",
                                 "roofline", {""}, {{"exclude_prefixes", {"transfer."}}}});
  return plots;
}

}  // namespace memlab::report::detail
