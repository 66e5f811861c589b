//! Where a rank sits inside its host (package, NUMA node), from hwloc, and the
//! levels of [`crate::runtime::Engine::cluster_info`] built from every rank's
//! place.
//!
//! A rank's package (NUMA node) is the one whose CPUs include the rank's whole
//! CPU binding. An unbound rank, or one bound across several packages, has no
//! package: placing it by the CPU it happens to run on would make the answer
//! change from run to run.

use crate::runtime::ClusterLevel;

/// Where one rank runs: its host index, and, when known, the logical index of
/// its package and NUMA node on that host.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) struct Place {
    pub host: u32,
    pub package: Option<u32>,
    pub numa: Option<u32>,
}

/// This process's `(package, NUMA node)` on its host, from hwloc; `(None,
/// None)` when hwloc is not built in or cannot tell.
pub(crate) fn my_package_numa() -> (Option<u32>, Option<u32>) {
    #[cfg(feature = "hwloc")]
    {
        use hwlocality::cpu::binding::CpuBindingFlags;
        let Ok(topology) = hwlocality::Topology::new() else {
            return (None, None);
        };
        let binding = topology
            .cpu_binding(CpuBindingFlags::PROCESS)
            .or_else(|_| topology.cpu_binding(CpuBindingFlags::THREAD));
        match binding {
            Ok(set) => place_of_cpuset(&topology, &set),
            Err(_) => (None, None),
        }
    }
    #[cfg(not(feature = "hwloc"))]
    {
        (None, None)
    }
}

/// The package and NUMA node (logical indices) whose CPUs include all of `set`.
#[cfg(feature = "hwloc")]
pub(crate) fn place_of_cpuset(
    topology: &hwlocality::Topology,
    set: &hwlocality::cpu::cpuset::CpuSet,
) -> (Option<u32>, Option<u32>) {
    use hwlocality::object::types::ObjectType;
    if set.is_empty() {
        return (None, None);
    }
    let within = |ty: ObjectType| {
        topology
            .objects_with_type(ty)
            .find(|o| o.cpuset().is_some_and(|c| c.includes(set)))
            .map(|o| o.logical_index() as u32)
    };
    (within(ObjectType::Package), within(ObjectType::NUMANode))
}

/// The package and NUMA node of the PU with OS index `pu`.
#[cfg(all(test, feature = "hwloc"))]
fn place_of_pu(topology: &hwlocality::Topology, pu: usize) -> (Option<u32>, Option<u32>) {
    let mut set = hwlocality::cpu::cpuset::CpuSet::new();
    set.set(pu);
    place_of_cpuset(topology, &set)
}

/// `me`'s levels below level 0, given every world rank's place: the host when
/// there are several hosts; then the package, when the ranks on `me`'s host
/// sit on more than one; then the NUMA node, when that splits the host's ranks
/// further than the level above. A level needs the place of every rank on the
/// host. Cluster ids are unique in the job (order of first appearance), so a
/// split by cluster id at any level groups exactly that level's clusters.
pub(crate) fn build_levels(me: usize, places: &[Place]) -> Vec<ClusterLevel> {
    let size = places.len();
    let mut levels = vec![ClusterLevel {
        cluster_id: 0,
        rank: me as i32,
        size: size as i32,
    }];
    // Ranks' keys at one level: a level is the grouping by key.
    let push = |levels: &mut Vec<ClusterLevel>, keys: &[Vec<u32>]| {
        let mut seen: Vec<&Vec<u32>> = Vec::new();
        for k in keys {
            if !seen.contains(&k) {
                seen.push(k);
            }
        }
        let mine = &keys[me];
        levels.push(ClusterLevel {
            cluster_id: seen.iter().position(|k| *k == mine).unwrap() as i32,
            rank: keys[..me].iter().filter(|k| *k == mine).count() as i32,
            size: keys.iter().filter(|k| *k == mine).count() as i32,
        });
    };
    let host = places[me].host;
    if places.iter().any(|p| p.host != host) {
        push(
            &mut levels,
            &places.iter().map(|p| vec![p.host]).collect::<Vec<_>>(),
        );
    }
    let on_host: Vec<&Place> = places.iter().filter(|p| p.host == host).collect();
    let distinct = |f: &dyn Fn(&Place) -> Option<Vec<u32>>| -> Option<usize> {
        let mut seen: Vec<Vec<u32>> = Vec::new();
        for p in &on_host {
            let k = f(p)?;
            if !seen.contains(&k) {
                seen.push(k);
            }
        }
        Some(seen.len())
    };
    let mut clusters_above = 1;
    let mut package_level = false;
    let package_key = |p: &Place| Some(vec![p.host, p.package?]);
    if let Some(n) = distinct(&package_key).filter(|&n| n > clusters_above) {
        clusters_above = n;
        package_level = true;
        // Other hosts' ranks only need distinct keys, not a known package.
        let keys: Vec<Vec<u32>> = places
            .iter()
            .map(|p| vec![p.host, p.package.map_or(u32::MAX, |x| x)])
            .collect();
        push(&mut levels, &keys);
    }
    // NUMA nodes inside packages (a NUMA node spanning packages does not nest
    // below them, so the key keeps the package when the package level is on).
    let numa_key = move |p: &Place| {
        let mut k = vec![p.host, p.numa?];
        if package_level {
            k.push(p.package?);
        }
        Some(k)
    };
    if distinct(&numa_key).is_some_and(|n| n > clusters_above) {
        let keys: Vec<Vec<u32>> = places
            .iter()
            .map(|p| numa_key(p).unwrap_or_else(|| vec![p.host, u32::MAX, u32::MAX, u32::MAX]))
            .collect();
        push(&mut levels, &keys);
    }
    levels
}

/// The `oxmpi-ep` value's place suffix: `:PACKAGE:NUMA`, `-` for unknown.
pub(crate) fn encode(package: Option<u32>, numa: Option<u32>) -> String {
    let f = |x: Option<u32>| x.map_or_else(|| "-".to_string(), |x| x.to_string());
    format!(":{}:{}", f(package), f(numa))
}

/// Parses what follows the pid in an `oxmpi-ep` value (`""` from a peer that
/// publishes no place, else `PACKAGE:NUMA`).
pub(crate) fn decode(rest: &str) -> (Option<u32>, Option<u32>) {
    let mut it = rest.split(':').map(|s| s.parse().ok());
    (it.next().flatten(), it.next().flatten())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lv(cluster_id: i32, rank: i32, size: i32) -> ClusterLevel {
        ClusterLevel {
            cluster_id,
            rank,
            size,
        }
    }
    fn places(v: &[(u32, Option<u32>, Option<u32>)]) -> Vec<Place> {
        v.iter()
            .map(|&(host, package, numa)| Place {
                host,
                package,
                numa,
            })
            .collect()
    }

    #[test]
    fn one_package_adds_no_level() {
        let p = places(&[(0, Some(0), Some(0)); 4]);
        for me in 0..4 {
            assert_eq!(build_levels(me, &p), vec![lv(0, me as i32, 4)]);
        }
        // Unknown places (no hwloc, unbound ranks) add nothing either.
        let p = places(&[(0, None, None); 3]);
        assert_eq!(build_levels(1, &p), vec![lv(0, 1, 3)]);
    }

    #[test]
    fn two_packages_add_a_level() {
        // Ranks 0, 2 on package 0; 1, 3 on package 1; one NUMA node each.
        let p = places(&[
            (0, Some(0), Some(0)),
            (0, Some(1), Some(1)),
            (0, Some(0), Some(0)),
            (0, Some(1), Some(1)),
        ]);
        assert_eq!(build_levels(0, &p), vec![lv(0, 0, 4), lv(0, 0, 2)]);
        assert_eq!(build_levels(1, &p), vec![lv(0, 1, 4), lv(1, 0, 2)]);
        assert_eq!(build_levels(2, &p), vec![lv(0, 2, 4), lv(0, 1, 2)]);
        assert_eq!(build_levels(3, &p), vec![lv(0, 3, 4), lv(1, 1, 2)]);
        // One rank of unknown place: no package level.
        let mut q = p.clone();
        q[2].package = None;
        q[2].numa = None;
        assert_eq!(build_levels(0, &q), vec![lv(0, 0, 4)]);
    }

    #[test]
    fn numa_level_only_where_it_splits_further() {
        // One package, two NUMA nodes (sub-NUMA clustering): a NUMA level only.
        let p = places(&[
            (0, Some(0), Some(0)),
            (0, Some(0), Some(1)),
            (0, Some(0), Some(1)),
        ]);
        assert_eq!(build_levels(2, &p), vec![lv(0, 2, 3), lv(1, 1, 2)]);
        // Two packages of two NUMA nodes each: package level, then NUMA level.
        let p = places(&[
            (0, Some(0), Some(0)),
            (0, Some(0), Some(1)),
            (0, Some(1), Some(2)),
            (0, Some(1), Some(3)),
            (0, Some(0), Some(1)),
        ]);
        assert_eq!(
            build_levels(4, &p),
            vec![lv(0, 4, 5), lv(0, 2, 3), lv(1, 1, 2)]
        );
        assert_eq!(
            build_levels(3, &p),
            vec![lv(0, 3, 5), lv(1, 1, 2), lv(3, 0, 1)]
        );
    }

    #[test]
    fn hosts_times_packages() {
        // 2 hosts × 2 packages, ranks dealt round-robin: r on host r % 2,
        // package (r / 2) % 2; NUMA node = package.
        let p: Vec<Place> = (0..8u32)
            .map(|r| Place {
                host: r % 2,
                package: Some((r / 2) % 2),
                numa: Some((r / 2) % 2),
            })
            .collect();
        // Rank 5: host 1 (ranks 1,3,5,7), package 0 of host 1 (ranks 1,5).
        assert_eq!(
            build_levels(5, &p),
            vec![lv(0, 5, 8), lv(1, 2, 4), lv(1, 1, 2)]
        );
        // Rank 6: host 0 (0,2,4,6), package 1 of host 0 (2,6): ids in order of
        // first appearance: (h0,p0)=0 (h1,p0)=1 (h0,p1)=2 (h1,p1)=3.
        assert_eq!(
            build_levels(6, &p),
            vec![lv(0, 6, 8), lv(0, 3, 4), lv(2, 1, 2)]
        );
        // A host with one package gets only the host level, while the other
        // host still gets its package level.
        let mut q = p.clone();
        for x in q.iter_mut().filter(|x| x.host == 1) {
            x.package = Some(0);
            x.numa = Some(0);
        }
        assert_eq!(build_levels(5, &q), vec![lv(0, 5, 8), lv(1, 2, 4)]);
        assert_eq!(
            build_levels(6, &q),
            vec![lv(0, 6, 8), lv(0, 3, 4), lv(2, 1, 2)]
        );
    }

    #[test]
    fn ep_value_suffix_round_trips_and_old_values_parse() {
        assert_eq!(decode(&encode(Some(1), Some(3))[1..]), (Some(1), Some(3)));
        assert_eq!(decode(&encode(None, Some(0))[1..]), (None, Some(0)));
        assert_eq!(decode(""), (None, None));
    }

    #[cfg(feature = "hwloc")]
    #[test]
    fn synthetic_topology_places_every_pu() {
        use hwlocality::Topology;
        let topology = Topology::builder()
            .from_synthetic("pack:2 numa:2 core:2 pu:1")
            .unwrap()
            .build()
            .unwrap();
        // PUs 0..8: 2 per NUMA node, 4 per package.
        for pu in 0..8usize {
            assert_eq!(
                place_of_pu(&topology, pu),
                (Some(pu as u32 / 4), Some(pu as u32 / 2)),
                "PU {pu}"
            );
        }
        // A binding across two NUMA nodes of one package: package only.
        let mut set = hwlocality::cpu::cpuset::CpuSet::new();
        set.set(1usize);
        set.set(2usize);
        assert_eq!(place_of_cpuset(&topology, &set), (Some(0), None));
        // Across packages, or the whole machine: nothing.
        set.set(5usize);
        assert_eq!(place_of_cpuset(&topology, &set), (None, None));
        assert_eq!(place_of_cpuset(&topology, &topology.cpuset()), (None, None));
    }
}

/// The hardware resource types `MPI_COMM_TYPE_HW_GUIDED` and
/// `MPI_COMM_TYPE_RESOURCE_GUIDED` accept (the `mpi_hw_resource_type` info
/// value), coarse to fine: `mpi_shared_memory` and `hwloc://Machine` (the
/// host), `hwloc://Package` (or `Socket`), `hwloc://NUMANode` (or `NUMA`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Resource {
    Machine,
    Package,
    Numa,
}

impl Resource {
    /// Coarse to fine: the order `MPI_COMM_TYPE_HW_UNGUIDED` tries them in.
    pub(crate) const ALL: [Resource; 3] = [Resource::Machine, Resource::Package, Resource::Numa];

    pub(crate) fn parse(s: &str) -> Option<Resource> {
        if s == "mpi_shared_memory" {
            return Some(Resource::Machine);
        }
        let kind = s.strip_prefix("hwloc://")?.to_ascii_lowercase();
        match kind.as_str() {
            "machine" => Some(Resource::Machine),
            "package" | "socket" => Some(Resource::Package),
            "numanode" | "numa" => Some(Resource::Numa),
            _ => None,
        }
    }

    /// The name `MPI_COMM_TYPE_HW_UNGUIDED` reports in the new communicator's info.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Resource::Machine => "hwloc://Machine",
            Resource::Package => "hwloc://Package",
            Resource::Numa => "hwloc://NUMANode",
        }
    }

    /// The split colour of a rank at `place`: equal exactly for ranks in the same
    /// resource; `None` when the rank is not restricted to one resource of this
    /// type (unbound, or bound across several).
    pub(crate) fn color(self, place: &Place) -> Option<i32> {
        let within = |idx: Option<u32>| {
            idx.map(|i| ((place.host as i64) * 4096 + i as i64).min(i32::MAX as i64) as i32)
        };
        match self {
            Resource::Machine => Some(place.host.min(i32::MAX as u32) as i32),
            Resource::Package => within(place.package),
            Resource::Numa => within(place.numa),
        }
    }
}

/// The first resource type, coarse to fine, that splits `members` (world
/// ranks) into strict subsets: some member is inside a resource of the type,
/// and not all members are in the same one. `None` when no type does.
pub(crate) fn unguided_level(members: &[u32], places: &[Place]) -> Option<Resource> {
    Resource::ALL.into_iter().find(|r| {
        let colors: Vec<Option<i32>> = members
            .iter()
            .map(|&w| r.color(&places[w as usize]))
            .collect();
        colors.iter().any(Option::is_some) && colors.iter().any(|c| *c != colors[0])
    })
}

#[cfg(test)]
mod resource_tests {
    use super::*;

    fn p(host: u32, package: Option<u32>, numa: Option<u32>) -> Place {
        Place {
            host,
            package,
            numa,
        }
    }

    #[test]
    fn resource_names_parse_and_colour_by_place() {
        assert_eq!(
            Resource::parse("mpi_shared_memory"),
            Some(Resource::Machine)
        );
        assert_eq!(Resource::parse("hwloc://Socket"), Some(Resource::Package));
        assert_eq!(Resource::parse("hwloc://numanode"), Some(Resource::Numa));
        assert_eq!(Resource::parse("hwloc://L3Cache"), None);
        assert_eq!(Resource::parse("@dont-thread-on-me@"), None);
        let a = p(0, Some(1), Some(1));
        let b = p(1, Some(1), Some(1));
        assert_ne!(
            Resource::Package.color(&a),
            Resource::Package.color(&b),
            "same package index on two hosts"
        );
        assert_eq!(Resource::Machine.color(&a), Some(0));
        assert_eq!(
            Resource::Numa.color(&p(0, None, None)),
            None,
            "an unbound rank is in no NUMA node"
        );
    }

    #[test]
    fn unguided_takes_the_first_level_that_splits() {
        // Two hosts: the host level splits.
        let two_hosts = [p(0, None, None), p(1, None, None)];
        assert_eq!(unguided_level(&[0, 1], &two_hosts), Some(Resource::Machine));
        // One host, two packages.
        let packages = [p(0, Some(0), Some(0)), p(0, Some(1), Some(1))];
        assert_eq!(unguided_level(&[0, 1], &packages), Some(Resource::Package));
        // One package, two NUMA nodes.
        let numas = [p(0, Some(0), Some(0)), p(0, Some(0), Some(1))];
        assert_eq!(unguided_level(&[0, 1], &numas), Some(Resource::Numa));
        // Unbound ranks on one host: nothing splits them into strict subsets.
        let unbound = [p(0, None, None), p(0, None, None)];
        assert_eq!(unguided_level(&[0, 1], &unbound), None);
        // A member-only view: ranks outside the communicator do not count.
        assert_eq!(unguided_level(&[0], &two_hosts), None);
    }
}
