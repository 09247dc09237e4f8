// SPDX-License-Identifier: GPL-2.0

//! rslub's KUnit suites, as a module of their own.
//!
//! The production module (`rslub.ko`) runs no tests. This module compiles the very same
//! source files of `rust/` (through `#[path]`) together with the suites in this folder,
//! so the suites exercise the real code; KUnit runs them when the module is loaded.

use kernel::prelude::*;

#[path = "../rust/params.rs"]
mod params;
#[path = "../rust/shim.rs"]
mod shim;
#[path = "../rust/topology.rs"]
mod topology;

mod params_tests;

module! {
    type: RslubKunit,
    name: "rslub_kunit",
    authors: ["rslub developers"],
    description: "KUnit suites of rslub",
    license: "GPL",
}

/// The loaded test module; KUnit runs the suites on its own when the module comes up.
struct RslubKunit;

impl kernel::Module for RslubKunit {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        Ok(Self)
    }
}
