// SPDX-License-Identifier: GPL-2.0

//! rslub: a kmem cache allocator in the classic SLUB design, as an out-of-tree module.
//!
//! This is the module's entry point: it reads and validates the module parameters and
//! reports the effective configuration. The production module runs no tests; the KUnit
//! suites live in `tests-kunit/` and are built into a separate module, `rslub_kunit.ko`,
//! from these same source files.

use kernel::prelude::*;

mod params;
mod shim;
mod topology;

use params::{Params, RawParams};

module! {
    type: Rslub,
    name: "rslub",
    authors: ["rslub developers"],
    description: "kmem cache allocator in the classic SLUB design",
    license: "GPL",
    params: {
        max_order: i32 {
            default: crate::params::RawParams::DEFAULT.max_order,
            description: "Highest page order of a slab (0..=MAX_PAGE_ORDER, default 3)",
        },
        min_order: i32 {
            default: crate::params::RawParams::DEFAULT.min_order,
            description: "Lowest page order of a slab (0..=max_order, default 0)",
        },
        min_objects: i32 {
            default: crate::params::RawParams::DEFAULT.min_objects,
            description: "Objects a slab should hold at least (0..=32767; 0 = 4 * (fls(CPUs) + 1))",
        },
        min_partial: i32 {
            default: crate::params::RawParams::DEFAULT.min_partial,
            description: "Partial slabs a node keeps (0..=1024; 0 = per cache, from the object size)",
        },
    },
}

/// The loaded module.
struct Rslub {
    params: Params,
}

impl kernel::Module for Rslub {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let raw = RawParams {
            max_order: module_parameters::max_order.value(),
            min_order: module_parameters::min_order.value(),
            min_objects: module_parameters::min_objects.value(),
            min_partial: module_parameters::min_partial.value(),
        };
        let params = Params::new(raw).inspect_err(|e| pr_err!("{e}\n"))?;
        let topo = topology::Topology::read();
        pr_info!("loaded: {}\n", params.effective(topo.scaling_cpus()));
        pr_info!(
            "machine: {} CPUs ({} possible), {} NUMA nodes online\n",
            topo.present_cpus,
            topo.possible_cpus,
            topo.online_nodes,
        );
        Ok(Self { params })
    }
}

impl Drop for Rslub {
    fn drop(&mut self) {
        pr_info!("unloaded (max_order={})\n", self.params.max_order());
    }
}
