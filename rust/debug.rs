// SPDX-License-Identifier: GPL-2.0

//! Debug caches, as SLUB's `slub_debug`: what a debug object looks like, how it is
//! checked, how a problem is reported, and the `debug=` option that turns it on.
//!
//! A cache created with any of the flags `F` ([`layout::SANITY`]), `Z`
//! ([`layout::RED_ZONE`]), `P` ([`layout::POISON`]) or `U` ([`layout::STORE_USER`]),
//! or named by the `debug=` module parameter, is a *debug cache*. It never has a CPU
//! active slab: every allocation and free takes its node's lock and runs the checks
//! there (`rust/cache/debug_paths.rs`), as SLUB's debug caches leave its fast paths.
//!
//! A debug object, in its stride ([`Layout`]):
//!
//! ```text
//! 0            object_size      inuse        free pointer   track_offset
//! | object      | red zone (Z)   | (Z or P)    | alloc + free owner records (U) |
//! ```
//!
//! - `Z`: the red zone holds [`RED_ACTIVE`] while the object is allocated and
//!   [`RED_INACTIVE`] while it is free; a free whose red zone is not `RED_ACTIVE` was
//!   written past its end (or is free already).
//! - `P`: a free object holds [`POISON_FREE`] with [`POISON_END`] in its last byte; an
//!   allocation finding anything else there means the object was written while free.
//! - `U`: each object keeps where (call chain, CPU, task, time) it was last allocated and
//!   freed; reports print both.
//! - `F`: every free checks that the pointer is the start of an object of this cache's
//!   slabs and not already free (a walk of its slab's free list), every allocation that
//!   the free pointer it follows is one; `validate` walks every slab.
//!
//! An object found bad is *left out*: never handed out again and never freed, so its slab
//! stays. Each problem is reported once, when found, and counted (`debug_errors`).

use crate::{layout::Layout, shim};
use core::ptr;
use kernel::{fmt, prelude::*};

pub(crate) use crate::layout::{DEBUG_FLAGS, POISON, RED_ZONE, SANITY, STORE_USER};

/// Poison of a free object's bytes (`POISON_FREE`).
pub(crate) const POISON_FREE: u8 = 0x6b;
/// Poison of a free object's last byte (`POISON_END`).
pub(crate) const POISON_END: u8 = 0xa5;
/// Red zone of a free object (`SLUB_RED_INACTIVE`).
pub(crate) const RED_INACTIVE: u8 = 0xbb;
/// Red zone of an allocated object (`SLUB_RED_ACTIVE`).
pub(crate) const RED_ACTIVE: u8 = 0xcc;

/// Return addresses kept per owner record.
const TRACK_ADDRS: usize = 6;

/// Where an object was last allocated or freed (SLUB's `struct track`).
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct Track {
    addrs: [usize; TRACK_ADDRS],
    cpu: u32,
    pid: u32,
    when: usize,
}

const _: () = assert!(core::mem::size_of::<Track>() == crate::layout::TRACK_SIZE as usize);

/// What is wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum Problem {
    /// A free of an object that is free already.
    DoubleFree = 1,
    /// A free of an address in no slab of rslub.
    NotASlab = 2,
    /// A free of an object of another cache.
    WrongCache = 3,
    /// A free of an address inside a slab of this cache that is not the start of an
    /// object.
    NotAnObject = 4,
    /// A write past the end of an object, into its red zone.
    RedZone = 5,
    /// A write into a free object (its poison is changed).
    Poison = 6,
    /// A free pointer that does not point at an object of its slab.
    FreeList = 7,
    /// A slab whose count of objects in use disagrees with its free list (`validate`).
    Counts = 8,
}

impl Problem {
    /// The problem numbered `v` (as [`Problem`] `as u32`).
    #[cfg(rslub_inject)]
    pub(crate) fn from_u32(v: u32) -> Option<Self> {
        Some(match v {
            1 => Self::DoubleFree,
            2 => Self::NotASlab,
            3 => Self::WrongCache,
            4 => Self::NotAnObject,
            5 => Self::RedZone,
            6 => Self::Poison,
            7 => Self::FreeList,
            8 => Self::Counts,
            _ => return None,
        })
    }

    /// What the report says happened.
    pub(crate) fn what(self) -> &'static str {
        match self {
            Self::DoubleFree => "double free",
            Self::NotASlab => "free of a pointer that is not in any rslub slab",
            Self::WrongCache => "free of an object of another cache",
            Self::NotAnObject => "free of a pointer that is not the start of an object",
            Self::RedZone => "red zone overwritten (a write past the object)",
            Self::Poison => "free object written (poison overwritten; use after free)",
            Self::FreeList => "free list corrupt",
            Self::Counts => "slab counters disagree with its free list",
        }
    }
}

/// A byte found where another was expected, at `offset` from the object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BadByte {
    pub(crate) offset: u32,
    pub(crate) found: u8,
    pub(crate) expected: u8,
}

impl fmt::Display for BadByte {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "byte +{} is {:#04x}, not {:#04x}",
            self.offset, self.found, self.expected
        )
    }
}

/// The debug format of one cache's objects: its flags and where each part lies.
///
/// # Invariants
///
/// The fields come from the cache's [`Layout`], whose invariants place the red zone,
/// the free pointer and the owner records inside the stride without overlapping.
#[derive(Clone, Copy)]
pub(crate) struct Format {
    flags: u32,
    object_size: u32,
    inuse: u32,
    track_offset: u32,
}

impl Format {
    /// The format of a cache with layout `l`.
    pub(crate) fn new(l: &Layout) -> Self {
        // INVARIANT: taken from the layout.
        Self {
            flags: l.debug,
            object_size: l.object_size,
            inuse: l.inuse,
            track_offset: l.track_offset,
        }
    }

    /// The debug flags.
    pub(crate) fn flags(&self) -> u32 {
        self.flags
    }

    /// Whether flag `f` is on.
    pub(crate) fn has(&self, f: u32) -> bool {
        self.flags & f != 0
    }

    /// The first byte of `len` bytes at `obj + from` that is not `expected`.
    ///
    /// # Safety
    ///
    /// The bytes must be inside an object's stride the caller may read.
    unsafe fn find_not(obj: *const u8, from: u32, len: u32, expected: u8) -> Option<BadByte> {
        (from..from + len).find_map(|off| {
            // SAFETY: In the stride (caller).
            let found = unsafe { ptr::read_volatile(obj.add(off as usize)) };
            (found != expected).then_some(BadByte {
                offset: off,
                found,
                expected,
            })
        })
    }

    /// Fills `len` bytes at `obj + from` with `v`.
    ///
    /// # Safety
    ///
    /// The bytes must be inside an object's stride the caller owns.
    unsafe fn fill(obj: *mut u8, from: u32, len: u32, v: u8) {
        // SAFETY: In the stride (caller).
        unsafe { ptr::write_bytes(obj.add(from as usize), v, len as usize) };
    }

    /// Formats an object of a new slab as free: poisoned, red zone inactive, no owners.
    ///
    /// # Safety
    ///
    /// `obj` must be an object of a new slab of this cache, owned by the caller.
    pub(crate) unsafe fn init_free(&self, obj: *mut u8) {
        // SAFETY: Our object (caller); the records are in the stride (type invariant).
        unsafe {
            self.make_free(obj);
            if self.has(STORE_USER) {
                Self::fill(obj, self.track_offset, 2 * crate::layout::TRACK_SIZE, 0);
            }
        }
    }

    /// Poisons `obj` (`P`) and marks its red zone inactive (`Z`).
    ///
    /// # Safety
    ///
    /// As for [`Format::init_free`].
    unsafe fn make_free(&self, obj: *mut u8) {
        // SAFETY: As the caller guarantees.
        unsafe {
            self.poison(obj);
            self.set_red_zone(obj, RED_INACTIVE);
        }
    }

    /// Fills the red zone of `obj` with `v` (`Z`).
    ///
    /// # Safety
    ///
    /// As for [`Format::init_free`].
    unsafe fn set_red_zone(&self, obj: *mut u8, v: u8) {
        if self.has(RED_ZONE) {
            // SAFETY: The red zone is in the stride (type invariant) of our object.
            unsafe { Self::fill(obj, self.object_size, self.inuse - self.object_size, v) };
        }
    }

    /// Poisons the object with `P`.
    ///
    /// # Safety
    ///
    /// As for [`Format::init_free`].
    unsafe fn poison(&self, obj: *mut u8) {
        if self.has(POISON) {
            // SAFETY: Our object (caller); `object_size >= 1` bytes.
            unsafe {
                Self::fill(obj, 0, self.object_size - 1, POISON_FREE);
                Self::fill(obj, self.object_size - 1, 1, POISON_END);
            }
        }
    }

    /// Checks a free object about to be handed out: red zone inactive, poison intact.
    ///
    /// # Safety
    ///
    /// `obj` must be a free object of this cache the caller holds (under its node lock).
    pub(crate) unsafe fn check_free(&self, obj: *const u8) -> Result<(), (Problem, BadByte)> {
        // SAFETY: In the stride of an object we hold (caller).
        unsafe {
            if self.has(RED_ZONE) {
                let len = self.inuse - self.object_size;
                if let Some(b) = Self::find_not(obj, self.object_size, len, RED_INACTIVE) {
                    return Err((Problem::RedZone, b));
                }
            }
            if self.has(POISON) {
                let n = self.object_size;
                if let Some(b) = Self::find_not(obj, 0, n - 1, POISON_FREE)
                    .or_else(|| Self::find_not(obj, n - 1, 1, POISON_END))
                {
                    return Err((Problem::Poison, b));
                }
            }
        }
        Ok(())
    }

    /// Checks an allocated object being freed: its red zone must be active. A red zone
    /// wholly inactive is an object freed already.
    ///
    /// # Safety
    ///
    /// `obj` must be the start of an object of this cache.
    pub(crate) unsafe fn check_live(&self, obj: *const u8) -> Result<(), (Problem, BadByte)> {
        if !self.has(RED_ZONE) {
            return Ok(());
        }
        let len = self.inuse - self.object_size;
        // SAFETY: In the stride (caller).
        let Some(b) = (unsafe { Self::find_not(obj, self.object_size, len, RED_ACTIVE) }) else {
            return Ok(());
        };
        // SAFETY: As above.
        if unsafe { Self::find_not(obj, self.object_size, len, RED_INACTIVE) }.is_none() {
            return Err((Problem::DoubleFree, b));
        }
        Err((Problem::RedZone, b))
    }

    /// Marks an object handed out: red zone active, allocation owner recorded.
    ///
    /// # Safety
    ///
    /// `obj` must be an object of this cache the caller just took off a free list.
    pub(crate) unsafe fn mark_allocated(&self, obj: *mut u8) {
        // SAFETY: Our object (caller).
        unsafe {
            self.set_red_zone(obj, RED_ACTIVE);
            self.save_track(obj, 0);
        }
    }

    /// Marks an object being freed: poisoned, red zone inactive, free owner recorded.
    ///
    /// # Safety
    ///
    /// `obj` must be an allocated object of this cache that passed [`Format::check_live`],
    /// owned by the caller.
    pub(crate) unsafe fn mark_freed(&self, obj: *mut u8) {
        // SAFETY: Our object (caller).
        unsafe {
            self.make_free(obj);
            self.save_track(obj, 1);
        }
    }

    /// Owner record `which` (0: allocation, 1: free) of `obj`.
    fn track(&self, obj: *const u8, which: u32) -> *mut Track {
        obj.wrapping_add((self.track_offset + which * crate::layout::TRACK_SIZE) as usize)
            .cast_mut()
            .cast()
    }

    /// Records the current caller as owner `which` with `U`.
    ///
    /// # Safety
    ///
    /// `obj` must be an object of this cache owned by the caller.
    unsafe fn save_track(&self, obj: *mut u8, which: u32) {
        if !self.has(STORE_USER) {
            return;
        }
        let mut t = Track {
            addrs: [0; TRACK_ADDRS],
            cpu: 0,
            pid: 0,
            when: 0,
        };
        shim::track_save(&mut t.addrs, &mut t.cpu, &mut t.pid, &mut t.when);
        // SAFETY: The record is inside the stride (type invariant), 8-byte aligned (the
        // stride and `track_offset` are), in an object the caller owns.
        unsafe { self.track(obj, which).write(t) };
    }

    /// The allocation and free records of `obj`, if `U` is on.
    ///
    /// # Safety
    ///
    /// `obj` must be the start of an object of this cache.
    pub(crate) unsafe fn tracks(&self, obj: *const u8) -> Option<[Track; 2]> {
        if !self.has(STORE_USER) {
            return None;
        }
        // SAFETY: In the stride (caller, type invariant); plain words.
        Some(unsafe {
            [
                ptr::read_volatile(self.track(obj, 0)),
                ptr::read_volatile(self.track(obj, 1)),
            ]
        })
    }
}

impl Track {
    /// The first return address (0 if never recorded).
    #[cfg(rslub_inject)]
    pub(crate) fn addr(&self) -> usize {
        self.addrs[0]
    }

    /// Prints the record as a report line and its call chain.
    pub(crate) fn print(&self, what: &CStr) {
        if self.addrs[0] == 0 {
            pr_err!("  never {}\n", what);
            return;
        }
        shim::track_print(what, &self.addrs, self.cpu, self.pid, self.when);
    }
}

/// Prints the owner records of `obj` (with `U`).
///
/// # Safety
///
/// `obj` must be the start of an object of a cache of format `f`.
pub(crate) unsafe fn print_owners(f: &Format, obj: *const u8) {
    // SAFETY: As the caller guarantees.
    if let Some([a, fr]) = unsafe { f.tracks(obj) } {
        a.print(c"allocated");
        fr.print(c"freed");
    }
}

/// The `debug=` option, in `slub_debug`'s syntax: `<letters>[,<cache>,...]`.
///
/// Letters (either case): `F` sanity checks, `Z` red zones, `P` poisoning, `U` owner
/// tracking, `-` none; no letters before the comma mean all four. Without cache names
/// the flags apply to every cache; a name ending in `*` matches every cache whose name
/// starts with the rest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Spec {
    flags: u32,
    /// The cache names, comma separated (empty: all caches).
    names: &'static [u8],
}

/// A `debug=` value rslub cannot read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SpecError {
    /// The offending character.
    pub(crate) letter: u8,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid parameter debug: unknown flag '{}' (allowed: F Z P U -, then ,<cache>,...)",
            char::from(self.letter)
        )
    }
}

impl Spec {
    /// No debugging.
    pub(crate) const NONE: Self = Self {
        flags: 0,
        names: b"",
    };

    /// Parses `s`.
    #[cfg_attr(
        all(rslub_kunit, not(rslub_inject)),
        expect(dead_code, reason = "the benchmark module has no debug= parameter")
    )]
    pub(crate) fn parse(s: &'static [u8]) -> Result<Self, SpecError> {
        if s.is_empty() {
            return Ok(Self::NONE);
        }
        let (letters, names) = match s.iter().position(|&b| b == b',') {
            Some(i) => (&s[..i], &s[i + 1..]),
            None => (s, &b""[..]),
        };
        let mut flags = 0;
        let mut off = false;
        for &b in letters {
            flags |= match b.to_ascii_uppercase() {
                b'F' => SANITY,
                b'Z' => RED_ZONE,
                b'P' => POISON,
                b'U' => STORE_USER,
                b'-' => {
                    off = true;
                    0
                }
                _ => return Err(SpecError { letter: b }),
            };
        }
        if letters.is_empty() {
            flags = DEBUG_FLAGS;
        }
        if off {
            flags = 0;
        }
        Ok(Self { flags, names })
    }

    /// The debug flags for a cache named `name`.
    pub(crate) fn flags_for(&self, name: &[u8]) -> u32 {
        if self.flags == 0 {
            return 0;
        }
        if self.names.is_empty() {
            return self.flags;
        }
        let hit = self
            .names
            .split(|&b| b == b',')
            .any(|pat| match pat.strip_suffix(b"*") {
                Some(prefix) => name.starts_with(prefix),
                None => pat == name,
            });
        if hit {
            self.flags
        } else {
            0
        }
    }
}

impl core::fmt::Display for Spec {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        core::fmt::Display::fmt(&Letters(self.flags), f)?;
        if self.flags != 0 && !self.names.is_empty() {
            f.write_str(",")?;
            for &b in self.names {
                write!(f, "{}", char::from(b))?;
            }
        }
        Ok(())
    }
}

/// Debug flags as `slub_debug` letters, `-` for none.
pub(crate) struct Letters(pub(crate) u32);

impl core::fmt::Display for Letters {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        if self.0 == 0 {
            return f.write_str("-");
        }
        for (flag, letter) in [
            (SANITY, "F"),
            (RED_ZONE, "Z"),
            (POISON, "P"),
            (STORE_USER, "U"),
        ] {
            if self.0 & flag != 0 {
                f.write_str(letter)?;
            }
        }
        Ok(())
    }
}
