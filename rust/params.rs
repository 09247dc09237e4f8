// SPDX-License-Identifier: GPL-2.0

//! Module parameters: their defaults, their ranges, and the effective values.
//!
//! The raw values come from `insmod`/`modprobe` arguments, `/etc/modprobe.d` or the kernel
//! command line (`rslub.max_order=3`, read by `modprobe`). They are checked once, at load:
//! a value out of range fails the load with `EINVAL` and a message naming the parameter
//! and its allowed range. Nothing here depends on the running kernel beyond the topology
//! passed in, so the KUnit suites check the same code with any value.

use crate::debug::Spec;
use kernel::{bindings, fmt};

/// Highest page order the page allocator hands out (`MAX_PAGE_ORDER`).
pub(crate) const MAX_PAGE_ORDER: i32 = bindings::MAX_PAGE_ORDER as i32;
/// Highest `min_objects`: the most objects a slab may hold.
pub(crate) const MAX_OBJECTS: i32 = crate::layout::MAX_OBJS_PER_SLAB as i32;
/// Largest accepted `min_partial` override.
pub(crate) const MAX_MIN_PARTIAL: i32 = 1024;

/// The parameters as given, before validation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RawParams {
    /// `max_order`: highest page order of a slab.
    pub(crate) max_order: i32,
    /// `min_order`: lowest page order of a slab.
    pub(crate) min_order: i32,
    /// `min_objects`: objects a slab should hold at least; 0 is automatic.
    pub(crate) min_objects: i32,
    /// `min_partial`: partial slabs a node keeps before freeing empty ones; 0 is automatic.
    pub(crate) min_partial: i32,
}

impl RawParams {
    /// The values a load without arguments gets (the `module!` defaults): `max_order` is
    /// the page allocator's costly order (`PAGE_ALLOC_COSTLY_ORDER`), as in SLUB; 0 makes
    /// `min_objects` scale with the CPU count and lets each cache compute `min_partial`.
    pub(crate) const DEFAULT: Self = Self {
        max_order: 3,
        min_order: 0,
        min_objects: 0,
        min_partial: 0,
    };
}

/// Which defaults the caches take (the `profile=` parameter): classic SLUB 6.12's, or
/// rslub's tuned choices where they differ. `Documentation/design.rst` lists every
/// behaviour the profile sets and the 6.12 code it follows or departs from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Profile {
    /// 6.12's behaviour everywhere (the default): `min_partial` is
    /// `clamp(ilog2(size) / 2, 5, 10)`; an empty slab goes back to the page allocator when
    /// its node's partial list, counting the slab itself if it is on it, holds
    /// `min_partial` slabs; the remote walk goes zone by zone through the zonelist, also
    /// on one node; `remote_node_defrag_ratio` draws with the time-stamp counter
    /// (`get_cycles() % 1024`).
    Classic,
    /// rslub's choices: `min_partial` grows with the object size
    /// ([`crate::layout::min_partial_for`], seed thread 000); the empty slab's own place
    /// on the list does not count; each other node once, nearest first, no walk on one
    /// node (seed thread 003); the ratio's draw from the CRNG.
    Tuned,
}

impl Profile {
    /// The profile named `name` (`classic`, `tuned`; empty: the default, classic).
    pub(crate) fn parse(name: &[u8]) -> Result<Self, ProfileError> {
        match name {
            b"" | b"classic" => Ok(Self::Classic),
            b"tuned" => Ok(Self::Tuned),
            _ => Err(ProfileError),
        }
    }

    /// The profile's name, as `profile=` takes it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Classic => "classic",
            Self::Tuned => "tuned",
        }
    }
}

/// A `profile=` value that names no profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ProfileError;

impl fmt::Display for ProfileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("invalid parameter profile: must be classic (6.12's defaults) or tuned")
    }
}

/// A parameter value outside its allowed range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ParamError {
    /// The parameter's name, as given to `insmod`.
    pub(crate) name: &'static str,
    /// The value given.
    pub(crate) value: i32,
    /// Lowest allowed value.
    pub(crate) min: i32,
    /// Highest allowed value.
    pub(crate) max: i32,
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid parameter {}={}: allowed range is {}..={}",
            self.name, self.value, self.min, self.max
        )
    }
}

impl From<ParamError> for kernel::error::Error {
    fn from(_: ParamError) -> Self {
        kernel::error::code::EINVAL
    }
}

/// Checks that `value` lies in `min..=max`.
fn check(name: &'static str, value: i32, min: i32, max: i32) -> Result<u32, ParamError> {
    if (min..=max).contains(&value) {
        // `min` is never negative, so neither is `value`.
        Ok(value.unsigned_abs())
    } else {
        Err(ParamError {
            name,
            value,
            min,
            max,
        })
    }
}

pub(crate) use crate::layout::auto_min_objects;

/// Validated parameters.
///
/// # Invariants
///
/// `min_order <= max_order <= MAX_PAGE_ORDER`, `min_objects <= MAX_OBJECTS` and
/// `min_partial <= MAX_MIN_PARTIAL`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Params {
    max_order: u32,
    min_order: u32,
    min_objects: u32,
    min_partial: u32,
    debug: Spec,
    profile: Profile,
}

impl Params {
    /// Validates `raw`, naming the first parameter out of range.
    pub(crate) fn new(raw: RawParams) -> Result<Self, ParamError> {
        let max_order = check("max_order", raw.max_order, 0, MAX_PAGE_ORDER)?;
        let min_order = check("min_order", raw.min_order, 0, raw.max_order)?;
        let min_objects = check("min_objects", raw.min_objects, 0, MAX_OBJECTS)?;
        let min_partial = check("min_partial", raw.min_partial, 0, MAX_MIN_PARTIAL)?;
        // INVARIANT: each value was checked against its range just above; `min_order`
        // against `max_order`.
        Ok(Self {
            max_order,
            min_order,
            min_objects,
            min_partial,
            debug: Spec::NONE,
            profile: Profile::Classic,
        })
    }

    /// These parameters with the defaults of `profile`.
    pub(crate) fn with_profile(self, profile: Profile) -> Self {
        Self { profile, ..self }
    }

    /// Whose defaults the caches take.
    pub(crate) fn profile(&self) -> Profile {
        self.profile
    }

    /// These parameters with the `debug=` option `debug` (parsed by [`Spec::parse`]).
    pub(crate) fn with_debug(self, debug: Spec) -> Self {
        Self { debug, ..self }
    }

    /// The `debug=` option: which caches get which debug checks.
    pub(crate) fn debug(&self) -> Spec {
        self.debug
    }

    /// Highest page order of a slab.
    pub(crate) fn max_order(&self) -> u32 {
        self.max_order
    }

    /// Lowest page order of a slab.
    pub(crate) fn min_order(&self) -> u32 {
        self.min_order
    }

    /// The `min_objects` override, or `None` when automatic.
    pub(crate) fn min_objects_override(&self) -> Option<u32> {
        (self.min_objects != 0).then_some(self.min_objects)
    }

    /// The order rules of a cache on a machine with `cpus` CPUs.
    pub(crate) fn order_rules(&self, cpus: u32) -> crate::layout::OrderRules {
        crate::layout::OrderRules {
            min_order: self.min_order(),
            max_order: self.max_order(),
            min_objects: self.min_objects(cpus),
        }
    }

    /// Effective `min_objects` on a machine with `cpus` CPUs.
    pub(crate) fn min_objects(&self, cpus: u32) -> u32 {
        self.min_objects_override()
            .unwrap_or_else(|| auto_min_objects(cpus))
    }

    /// The `min_partial` override, or `None` when each cache computes its own.
    pub(crate) fn min_partial_override(&self) -> Option<u32> {
        (self.min_partial != 0).then_some(self.min_partial)
    }

    /// The effective values on a machine with `cpus` CPUs, for printing.
    pub(crate) fn effective(&self, cpus: u32) -> Effective<'_> {
        Effective { params: self, cpus }
    }
}

/// Formats the effective parameters as the load message shows them, for example
/// `max_order=3 min_order=0 min_objects=16 (auto) min_partial=auto`.
pub(crate) struct Effective<'a> {
    params: &'a Params,
    cpus: u32,
}

impl fmt::Display for Effective<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = self.params;
        write!(
            f,
            "max_order={} min_order={} min_objects={}",
            p.max_order(),
            p.min_order(),
            p.min_objects(self.cpus)
        )?;
        if p.min_objects_override().is_none() {
            f.write_str(" (auto)")?;
        }
        match p.min_partial_override() {
            Some(v) => write!(f, " min_partial={v}")?,
            None => f.write_str(" min_partial=auto")?,
        }
        write!(f, " profile={}", p.profile.name())?;
        if p.debug != Spec::NONE {
            write!(f, " debug={}", p.debug)?;
        }
        Ok(())
    }
}
