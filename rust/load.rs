// SPDX-License-Identifier: GPL-2.0

//! Loading and unloading, the same for every module built from these sources: the
//! registry of caches first (`crate::registry`), then the backing of kernel caches on top
//! of it (`crate::back`), with its `back` file in the registry's debugfs directory; going
//! away, the reverse. Neither layer reaches into the other's start or end.

use crate::{back, params::Params, registry};
use kernel::prelude::*;

/// Starts the registry with `params` and the debugfs directory `debugfs_name`, then the
/// backing. On failure nothing is left. [`exit`] undoes it.
///
/// # Safety
///
/// Must be called exactly once, in the module initialiser, before any other function of
/// the crate.
pub(crate) unsafe fn init(params: Params, debugfs_name: &CStr) -> Result {
    // SAFETY: Called once, first (caller).
    unsafe { registry::init(params, debugfs_name) }?;
    // SAFETY: Called once, after the registry and before any other use of the backing.
    if let Err(e) = registry::root().and_then(|root| unsafe { back::init(&root) }) {
        registry::exit();
        return Err(e);
    }
    Ok(())
}

/// Undoes [`init`]: the backing closes and checks that nothing is backed, then the
/// registry goes.
pub(crate) fn exit() {
    back::exit();
    registry::exit();
}
