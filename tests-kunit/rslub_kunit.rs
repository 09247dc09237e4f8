// SPDX-License-Identifier: GPL-2.0

//! rslub's KUnit suites, as a module of their own.
//!
//! The production module (`rslub.ko`) runs no tests. This module compiles the very same
//! source files of `rust/` (through `#[path]`) together with the suites in this folder,
//! so the suites exercise the real code; KUnit runs them when the module is loaded.

use kernel::prelude::*;

// The crate's modules, as `rust/rslub.rs` declares them.
#[path = "../rust/api.rs"]
mod api;
#[path = "../rust/arch.rs"]
mod arch;
#[path = "../rust/back/mod.rs"]
mod back;
#[path = "../rust/cache/mod.rs"]
mod cache;
#[path = "../rust/debug.rs"]
mod debug;
#[path = "../rust/debugfs.rs"]
mod debugfs;
#[path = "../rust/gfp.rs"]
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
mod slab;
#[path = "../rust/stats.rs"]
mod stats;
#[path = "../rust/topology.rs"]
mod topology;

// Helpers only the suites use.
mod common;
mod test_shim;

// The suites.
mod alloc_tests;
mod api_tests;
mod back_tests;
mod cpu_partial_tests;
mod debug_tests;
mod debugfs_tests;
mod fidelity_tests;
mod gfp_tests;
mod hotplug_tests;
mod kmalloc_tests;
mod layout_tests;
mod numa_tests;
mod params_tests;
mod race_tests;
mod slabfs_tests;
mod stress_tests;
mod typesafe_tests;
mod view_tests;
mod whole_tests;
// Last: a KASAN report (its cases make some on purpose) turns lockdep off for the rest
// of the boot.
mod sanitize_tests;

module! {
    type: RslubKunit,
    name: "rslub_kunit",
    authors: ["rslub developers"],
    description: "KUnit suites of rslub",
    license: "GPL",
    params: {
        stress_seconds: u32 {
            default: 3,
            description: "How long the rslub_stress suite runs (make test STRESS=60)",
        },
        full: bool {
            default: false,
            description: "The slow cases' whole sweeps, not a sample (make test FULL=1, CI)",
        },
    },
}

extern "C" {
    /// The `back=` parameter (`rust/param.c`).
    fn rslub_back_param() -> *const kernel::ffi::c_char;
}

/// The loaded test module; KUnit runs the suites on its own when the module comes up.
struct RslubKunit;

impl kernel::Module for RslubKunit {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        // The suites create caches with the default parameters; KUnit runs them once the
        // module is live, after this.
        let params = params::Params::new(params::RawParams::DEFAULT)?;
        // SAFETY: Called once, here, before anything else uses the crate.
        unsafe { load::init(params, c"rslub_kunit") }?;
        // `back=` (as rslub.ko's): `make test` runs the suites with the skb caches backed
        // while the guest sends traffic over loopback.
        // SAFETY: `rslub_back_param()` returns the module's string parameter, NUL
        // terminated and unchanged while the module lives.
        let names = unsafe { CStr::from_char_ptr(rslub_back_param()) };
        if let Err(e) = back::back_all(names) {
            pr_err!("invalid parameter back={names}: see the message above\n");
            load::exit();
            return Err(e);
        }
        Ok(Self)
    }
}

impl Drop for RslubKunit {
    fn drop(&mut self) {
        load::exit();
    }
}
