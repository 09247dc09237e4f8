// SPDX-License-Identifier: GPL-2.0

//! The module-wide `back` debugfs file: one line per kernel cache rslub backs or drains
//! ([`super::show`]); writing `name` backs the kernel cache `name`, `-name` unbacks it,
//! `?name` checks it, `drain` destroys the rslub caches of unbacked caches whose objects
//! are all freed (`Documentation/backing.rst`).
//!
//! The backing owns it, so that the module's exit can remove it between closing the
//! backing and looking at what is backed ([`super::exit`]): removing a debugfs file waits
//! for the reads and writes in progress, which do not hold the module.

use crate::debugfs::read_text;
use core::pin::Pin;
use kernel::{
    debugfs::{Dir, File},
    error::code::{EBUSY, EINVAL},
    fmt,
    prelude::*,
    uaccess::UserSliceReader,
};

/// The `back` file; removed when dropped.
pub(super) type BackFile = Pin<KBox<File<()>>>;

/// Makes the `back` file under `root`.
pub(super) fn new(root: &Dir) -> Result<BackFile> {
    KBox::pin_init(
        root.read_write_callback_file(c"back", (), &show, &store),
        GFP_KERNEL,
    )
}

fn show(_: &(), f: &mut fmt::Formatter<'_>) -> fmt::Result {
    super::show(f)
}

fn store(_: &(), r: &mut UserSliceReader) -> Result {
    // The module's own `back=` first: a load that fails must leave nothing backed.
    if !super::loaded() {
        return Err(EBUSY);
    }
    let mut buf = [0u8; 64];
    let s = read_text(r, &mut buf)?;
    if s == "drain" {
        super::release_drained();
        return Ok(());
    }
    let (op, name) = match s.as_bytes().first() {
        Some(b'-') => (b'-', &s[1..]),
        Some(b'?') => (b'?', &s[1..]),
        _ => (b'+', s),
    };
    if name.is_empty() || name.contains(|c: char| c.is_whitespace() || c == ',') {
        return Err(EINVAL);
    }
    let name = kernel::str::CString::try_from_fmt(fmt!("{name}"))?;
    match op {
        b'-' => super::unback_name(&name).map(|_| ()),
        b'?' => super::check_name(&name),
        _ => super::back_name(&name),
    }
}
