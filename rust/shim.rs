// SPDX-License-Identifier: GPL-2.0

//! Safe wrappers of the C shim (`rust/shim.c`).
//!
//! The kernel exposes some of what rslub needs only as inline functions or macros,
//! which bindgen cannot turn into callable Rust. The shim gives each of them a real
//! symbol; this module declares those symbols and wraps each in a safe function. No
//! other module calls the shim directly.

mod ffi {
    extern "C" {
        pub(super) fn rslub_num_present_cpus() -> u32;
        pub(super) fn rslub_num_online_nodes() -> u32;
    }
}

/// Number of present CPUs (`num_present_cpus()`).
pub(crate) fn num_present_cpus() -> u32 {
    // SAFETY: `num_present_cpus()` only reads the present CPU mask; it has no precondition.
    unsafe { ffi::rslub_num_present_cpus() }
}

/// Number of online NUMA nodes (`num_online_nodes()`).
pub(crate) fn num_online_nodes() -> u32 {
    // SAFETY: `num_online_nodes()` only reads the online node count; it has no precondition.
    unsafe { ffi::rslub_num_online_nodes() }
}
