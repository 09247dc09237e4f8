// SPDX-License-Identifier: GPL-2.0

//! The machine's CPU and NUMA node counts, as rslub's sizing rules use them.

use crate::shim;

/// CPU and node counts read at one moment.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Topology {
    /// Present CPUs (`num_present_cpus()`).
    pub(crate) present_cpus: u32,
    /// Online CPUs (`num_online_cpus()`).
    #[cfg_attr(
        not(rslub_inject),
        expect(dead_code, reason = "only the suites use it")
    )]
    pub(crate) online_cpus: u32,
    /// Possible CPU ids (`nr_cpu_ids`).
    pub(crate) possible_cpus: u32,
    /// Online NUMA nodes (`num_online_nodes()`).
    pub(crate) online_nodes: u32,
}

impl Topology {
    /// Reads the current counts.
    pub(crate) fn read() -> Self {
        Self {
            present_cpus: shim::num_present_cpus(),
            online_cpus: shim::num_online_cpus(),
            possible_cpus: kernel::cpu::nr_cpu_ids(),
            online_nodes: shim::num_online_nodes(),
        }
    }

    /// The CPU count `min_objects` scales with, as SLUB's `calculate_order()` takes it:
    /// present CPUs, unless an architecture reports only one before onlining the others,
    /// then possible CPUs.
    pub(crate) fn scaling_cpus(&self) -> u32 {
        if self.present_cpus <= 1 {
            self.possible_cpus
        } else {
            self.present_cpus
        }
    }
}

/// The ids of the online NUMA nodes, in increasing order (`for_each_online_node()`). Node
/// ids may be sparse: the count of online nodes is not a bound on them.
pub(crate) fn online_nodes() -> impl Iterator<Item = u32> {
    // SAFETY: `nr_node_ids` is set during boot and never changes afterwards.
    let nr = unsafe { kernel::bindings::nr_node_ids };
    (0..nr).filter(|&n| shim::node_online(n as i32))
}
