// SPDX-License-Identifier: GPL-2.0

//! rslub's benchmarks, as a module of their own: rslub against the kernel's kmem_cache in
//! the same boot, and the four seed experiments. They run while the module loads and
//! print `RESULT` lines that `make bench` (scripts/bench/bench.sh) collects; the module then
//! stays loaded, doing nothing, until removed.
//!
//! Like the KUnit module, it compiles the very same sources of `rust/`.

use kernel::prelude::*;

// The crate's modules, as `rust/rslub.rs` declares them.
#[path = "../rust/api.rs"]
mod api;
#[path = "../rust/arch.rs"]
mod arch;
#[path = "../rust/back/mod.rs"]
#[expect(dead_code, reason = "the benchmarks back caches by handle only")]
mod back;
#[path = "../rust/cache/mod.rs"]
mod cache;
#[path = "../rust/debug.rs"]
mod debug;
#[path = "../rust/debugfs.rs"]
mod debugfs;
#[path = "../rust/gfp.rs"]
#[expect(dead_code, reason = "the benchmarks call the C API, not `Gfp::KERNEL`")]
mod gfp;
#[path = "../rust/inject.rs"]
mod inject;
#[path = "../rust/layout.rs"]
mod layout;
#[path = "../rust/load.rs"]
mod load;
#[path = "../rust/mm.rs"]
mod mm;
#[path = "../rust/node.rs"]
mod node;
#[path = "../rust/params.rs"]
#[expect(
    dead_code,
    reason = "the load message of the main module is not printed here"
)]
mod params;
#[path = "../rust/percpu.rs"]
mod percpu;
#[path = "../rust/registry.rs"]
mod registry;
#[path = "../rust/sanitize.rs"]
mod sanitize;
#[path = "../rust/shim.rs"]
mod shim;
#[path = "../rust/slab.rs"]
#[expect(
    dead_code,
    reason = "only the suites count the slabs awaiting a grace period"
)]
mod slab;
#[path = "../rust/stats.rs"]
mod stats;
#[path = "../rust/topology.rs"]
mod topology;

// Helpers shared with the KUnit module: threads, pinning, the clock.
#[path = "../tests-kunit/test_shim.rs"]
#[expect(dead_code, reason = "the benchmarks use some of the test helpers only")]
mod test_shim;

mod bench;
#[path = "kmem.rs"]
mod bench_kmem;

module! {
    type: RslubBench,
    name: "rslub_bench",
    authors: ["rslub developers"],
    description: "Benchmarks of rslub against the kernel's kmem_cache",
    license: "GPL",
    params: {
        suite: u32 {
            default: 0,
            description: "0: side by side and seeds 000-002; 1: seed 003; 2: wall clock; \
                3: fast paths and pair (the RSLUB_HARDENED=n build); 4: seed 001 on all CPUs at once; \
                5: the hooks' cost alone (also in 0)",
        },
    },
}

/// The loaded benchmark module.
struct RslubBench;

impl kernel::Module for RslubBench {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let params = params::Params::new(params::RawParams::DEFAULT)?;
        // SAFETY: Called once, here, before anything else uses the crate.
        unsafe { load::init(params, c"rslub_bench") }?;
        let run = || -> Result {
            match module_parameters::suite.value() {
                0 => {
                    bench::side_by_side()?;
                    bench::fast_paths(false)?;
                    bench::hook_cost()?;
                    bench::seed000()?;
                    bench::seed001()?;
                    bench::seed002()?;
                    bench::memory()?;
                }
                1 => bench::seed003()?,
                2 => bench::wallclock()?,
                3 => bench::fast_paths(true)?,
                5 => bench::hook_cost()?,
                _ => bench::seed001_parallel()?,
            }
            Ok(())
        };
        // The module does not come up on failure: undo the registry here.
        run().inspect_err(|_| load::exit())?;
        pr_info!("done\n");
        Ok(Self)
    }
}

impl Drop for RslubBench {
    fn drop(&mut self) {
        load::exit();
    }
}
