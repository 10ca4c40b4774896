// The list scheduler against a plain one: each job at the earliest start that a scan of every node
// finds, with the same GPU choice. The scheduler's trees of node starts, found lazily and marked
// stale only where a placement can have moved them, must give the same placements, byte for byte.
#include "solve/schedule.hpp"

#include <catch2/catch.hpp>
#include <limits>
#include <numeric>
#include <random>

#include "solve/planning.hpp"

using namespace gpuplan;
using namespace gpuplan::solve;
using namespace gpuplan::testing;

namespace {

/// Per node, when each GPU is free and what shares it; every job scans every node of each type.
std::vector<Placement> scan_schedule(const solve::Problem& p, const std::vector<int>& order) {
  const FleetIndex& fleet = *p.fleet;
  size_t nodes = fleet.type_of_node.size();
  std::vector<std::vector<double>> free(nodes);
  std::vector<std::vector<GpuShare>> shares(nodes);
  for (size_t n = 0; n < nodes; ++n) {
    auto gpus = static_cast<size_t>(fleet.types[static_cast<size_t>(fleet.type_of_node[n])].gpus);
    free[n].assign(gpus, 0);
    shares[n].resize(gpus);
  }
  auto wide = [&](int s) {
    const Shape& shape = p.shapes[static_cast<size_t>(s)];
    return shape.occupancy == Occupancy::gpus && shape.gpus > 1;
  };
  std::vector<long> wide_waiting(fleet.types.size(), 0);
  for (const Job& job : p.jobs)
    for (int s : p.demand_shapes[static_cast<size_t>(job.demand)])
      if (wide(s)) ++wide_waiting[static_cast<size_t>(p.shapes[static_cast<size_t>(s)].type)];
  auto view_of = [&](size_t n) {
    const NodeType& type = fleet.types[static_cast<size_t>(fleet.type_of_node[n])];
    return NodeView{free[n].data(), shares[n].data(), p.max_sharing, &type.links, type.gpus};
  };

  std::vector<Placement> placements(p.jobs.size());
  for (int j : order) {
    const Job& job = p.jobs[static_cast<size_t>(j)];
    double start = std::numeric_limits<double>::infinity();
    int node = -1, chosen = -1;
    for (int s : p.demand_shapes[static_cast<size_t>(job.demand)]) {
      const Shape& shape = p.shapes[static_cast<size_t>(s)];
      for (int n : fleet.types[static_cast<size_t>(shape.type)].nodes) {
        double at = earliest_start(shape, view_of(static_cast<size_t>(n)));
        if (at < start || (at == start && n < node)) start = at, node = n, chosen = s;
      }
    }
    for (int s : p.demand_shapes[static_cast<size_t>(job.demand)])
      if (wide(s)) --wide_waiting[static_cast<size_t>(p.shapes[static_cast<size_t>(s)].type)];
    const Shape& shape = p.shapes[static_cast<size_t>(chosen)];
    auto n = static_cast<size_t>(node);
    GpuMask gpus = choose_gpus(shape, view_of(n), start, wide_waiting[static_cast<size_t>(shape.type)] > 0);
    double end = start + job.duration;
    if (shape.occupancy == Occupancy::shared) {
      auto gpu = static_cast<size_t>(std::countr_zero(gpus));
      add_share(shares[n][gpu], start, end, std::min(shape.memory_mib, shape.usable_mib[gpu]));
      free[n][gpu] = std::max(free[n][gpu], end);
    } else {
      GpuMask held =
          shape.occupancy == Occupancy::whole_node ? bit(static_cast<int>(free[n].size())) - 1 : gpus;
      for (GpuMask m = held; m; m &= m - 1) {
        auto gpu = static_cast<size_t>(std::countr_zero(m));
        free[n][gpu] = end;
        shares[n][gpu] = {end, {}};
      }
    }
    placements[static_cast<size_t>(j)] = {node, gpus, start};
  }
  return placements;
}

}  // namespace

TEST_CASE("pack's list schedule places every job where a scan of every node would, on 1, 9 and 70 nodes") {
  // One node, nine (two groups of the start trees' eight) and seventy (two levels above them).
  auto fleet = fleet_of({{"one", 1, 8},
                         {"nine", 9, 8, "pcie", "l4", 24576, "8.9", "12.6"},
                         {"seventy", 70, 4, "pcie", "a100", 40960, "8.0", "12.4"}});
  FleetIndex index = index_fleet(fleet);
  REQUIRE(index.types.size() == 3);
  solve::Problem p;
  p.fleet = &index;
  p.max_sharing = 3;
  // Per kind of job, its shape on each type: GPUs to itself, the whole node, a share of one GPU
  // of several sizes, and a share of two GPUs only.
  struct Kind {
    Occupancy occupancy;
    int gpus;
    std::int64_t mib;
    GpuMask eligible;  // 0: every GPU
  };
  std::vector<Kind> kinds = {{Occupancy::gpus, 1, 0, 0},          {Occupancy::gpus, 2, 0, 0},
                             {Occupancy::gpus, 3, 0, 0},          {Occupancy::whole_node, 1, 0, 0},
                             {Occupancy::shared, 1, 2000, 0},     {Occupancy::shared, 1, 5000, 0},
                             {Occupancy::shared, 1, 11000, 0},    {Occupancy::shared, 1, 19000, 0},
                             {Occupancy::shared, 1, 3000, 0b0110}};
  for (const Kind& kind : kinds) {
    p.demand_shapes.emplace_back();
    for (size_t t = 0; t < index.types.size(); ++t) {
      const NodeType& type = index.types[t];
      Shape shape;
      shape.type = static_cast<int>(t);
      shape.occupancy = kind.occupancy;
      shape.gpus = kind.gpus;
      shape.eligible = kind.eligible ? kind.eligible : bit(type.gpus) - 1;
      if (kind.occupancy == Occupancy::shared) {
        shape.memory_mib = shape.least_memory_mib = kind.mib;
        std::int64_t usable = fleet.nodes[static_cast<size_t>(type.nodes[0])].gpus[0].vram_mib * 9 / 10;
        shape.usable_mib.assign(static_cast<size_t>(type.gpus), 0);
        for (GpuMask m = shape.eligible; m; m &= m - 1)
          shape.usable_mib[static_cast<size_t>(std::countr_zero(m))] = usable;
      }
      p.demand_shapes.back().push_back(static_cast<int>(p.shapes.size()));
      p.shapes.push_back(shape);
    }
  }
  std::mt19937 random(20261206);
  for (int round = 0; round < 4; ++round) {
    p.jobs.clear();
    // Mostly shares, as under pack; whole seconds, so that starts tie often.
    std::vector<int> weight = {8, 3, 2, 1, 10, 10, 8, 6, 6};
    std::discrete_distribution<int> kind_of(weight.begin(), weight.end());
    for (int i = 0; i < 3000; ++i) p.jobs.push_back({kind_of(random), double(1 + random() % 900)});
    std::vector<int> order(p.jobs.size());
    std::iota(order.begin(), order.end(), 0);
    if (round == 0)
      order = longest_first(p);
    else
      std::shuffle(order.begin(), order.end(), random);
    Schedule listed = list_schedule(p, order);
    std::vector<Placement> scanned = scan_schedule(p, order);
    size_t differ = 0;
    for (size_t j = 0; j < scanned.size(); ++j) {
      const Placement& a = listed.placements[j];
      const Placement& b = scanned[j];
      if (a.node != b.node || a.gpus != b.gpus || a.start != b.start) ++differ;
    }
    INFO("round " << round);
    CHECK(differ == 0);
  }
}
