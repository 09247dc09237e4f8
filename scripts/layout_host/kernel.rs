// SPDX-License-Identifier: GPL-2.0

//! The few items of the kernel crate that `rust/layout.rs` uses, for its host build
//! (`scripts/layout`): the same names, x86-64's values.

/// Errors, as the kernel crate's `error` module names them.
pub mod error {
    /// An error code.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct Error(pub i32);

    /// The kernel crate's `Result`.
    pub type Result<T = (), E = Error> = core::result::Result<T, E>;

    /// Error codes.
    pub mod code {
        /// Invalid argument.
        pub const EINVAL: super::Error = super::Error(-22);
    }
}

/// Page geometry.
pub mod page {
    /// Bytes in a page (x86-64).
    pub const PAGE_SIZE: usize = 4096;
}

/// Constants of the C headers.
pub mod bindings {
    /// The highest order the page allocator hands out (x86-64's default
    /// `CONFIG_ARCH_FORCE_MAX_ORDER`, as the test kernel has it).
    pub const MAX_PAGE_ORDER: u32 = 10;
}
