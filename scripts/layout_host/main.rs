// SPDX-License-Identifier: GPL-2.0

//! `scripts/layout SIZE [ALIGN] [options]`: the layout what-if of `rust/layout.rs` on the
//! host, without a boot. The same rule (the same source file) as the debugfs file
//! `layout_whatif`: for a cache of SIZE-byte objects aligned to ALIGN, every slab order
//! with the objects it holds and what it leaves unused, marking the order rslub's
//! parameters choose and the order the kernel's allocator chooses with its defaults.
//!
//! Options: `--cpus N` (the machine the cache would live on; default: this host's CPUs),
//! `--max-order N` (3), `--min-order N` (0), `--min-objects N` (0: from the CPUs), as the
//! module parameters of the same names.

#[expect(
    dead_code,
    reason = "the host command uses the order rule and the what-if only"
)]
#[path = "../../rust/layout.rs"]
mod layout;

use std::process::exit;

fn usage() -> ! {
    eprintln!(
        "usage: layout SIZE [ALIGN] [--cpus N] [--max-order N] [--min-order N] [--min-objects N]"
    );
    exit(2)
}

fn number(s: Option<String>) -> u32 {
    s.and_then(|s| s.parse().ok()).unwrap_or_else(|| usage())
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut positional = Vec::new();
    let mut cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    let (mut max_order, mut min_order, mut min_objects) = (3, 0, 0);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--cpus" => cpus = number(args.next()),
            "--max-order" => max_order = number(args.next()),
            "--min-order" => min_order = number(args.next()),
            "--min-objects" => min_objects = number(args.next()),
            "-h" | "--help" => usage(),
            _ => positional.push(number(Some(a))),
        }
    }
    let (size, align) = match positional[..] {
        [size] => (size, 0),
        [size, align] => (size, align),
        _ => usage(),
    };
    if min_order > max_order || max_order > layout::MAX_PAGE_ORDER {
        eprintln!(
            "layout: orders must satisfy min-order <= max-order <= {}",
            layout::MAX_PAGE_ORDER
        );
        exit(2);
    }
    let rslub = layout::OrderRules {
        min_order,
        max_order,
        min_objects: if min_objects == 0 {
            layout::auto_min_objects(cpus)
        } else {
            min_objects
        },
    };
    match layout::WhatIf::new(size, align, rslub, layout::kernel_rules(cpus)) {
        Ok(w) => print!("{w}"),
        Err(_) => {
            eprintln!("layout: no cache of {size}-byte objects aligned to {align} (EINVAL)");
            exit(1);
        }
    }
}
