// SPDX-License-Identifier: GPL-2.0

//! KUnit suite `rslub_params`: module parameter validation, defaults and derived values.

use kernel::prelude::*;

#[kunit_tests(rslub_params)]
mod tests {
    use crate::params::{
        auto_min_objects, ParamError, Params, RawParams, MAX_MIN_PARTIAL, MAX_OBJECTS,
        MAX_PAGE_ORDER,
    };
    use crate::topology::Topology;

    fn with(f: impl FnOnce(&mut RawParams)) -> Result<Params, ParamError> {
        let mut raw = RawParams::DEFAULT;
        f(&mut raw);
        Params::new(raw)
    }

    fn rejected_name(r: Result<Params, ParamError>) -> Option<&'static str> {
        r.err().map(|e| e.name)
    }

    #[test]
    fn defaults_are_valid_and_automatic() {
        let p = Params::new(RawParams::DEFAULT).expect("defaults must validate");
        assert_eq!(p.max_order(), 3);
        assert_eq!(p.min_order(), 0);
        assert_eq!(p.min_objects_override(), None);
        assert_eq!(p.min_partial_override(), None);
    }

    #[test]
    fn max_order_range() {
        assert_eq!(rejected_name(with(|r| r.max_order = 99)), Some("max_order"));
        assert_eq!(rejected_name(with(|r| r.max_order = -1)), Some("max_order"));
        assert_eq!(
            rejected_name(with(|r| r.max_order = MAX_PAGE_ORDER + 1)),
            Some("max_order")
        );
        let p = with(|r| r.max_order = MAX_PAGE_ORDER).expect("MAX_PAGE_ORDER is allowed");
        assert_eq!(p.max_order(), MAX_PAGE_ORDER as u32);
        let p = with(|r| r.max_order = 0).expect("order 0 is allowed");
        assert_eq!(p.max_order(), 0);
    }

    #[test]
    fn min_order_not_above_max_order() {
        let e = with(|r| {
            r.max_order = 2;
            r.min_order = 3;
        })
        .expect_err("min_order above max_order must fail");
        assert_eq!(
            e,
            ParamError {
                name: "min_order",
                value: 3,
                min: 0,
                max: 2
            }
        );
        let p = with(|r| {
            r.max_order = 2;
            r.min_order = 2;
        })
        .expect("min_order == max_order is allowed");
        assert_eq!(p.min_order(), 2);
        assert_eq!(rejected_name(with(|r| r.min_order = -3)), Some("min_order"));
    }

    #[test]
    fn min_objects_range() {
        assert_eq!(
            rejected_name(with(|r| r.min_objects = -1)),
            Some("min_objects")
        );
        assert_eq!(
            rejected_name(with(|r| r.min_objects = MAX_OBJECTS + 1)),
            Some("min_objects")
        );
        let p = with(|r| r.min_objects = MAX_OBJECTS).expect("32767 is allowed");
        assert_eq!(p.min_objects_override(), Some(32767));
        assert_eq!(p.min_objects(64), 32767);
    }

    #[test]
    fn min_partial_range() {
        assert_eq!(
            rejected_name(with(|r| r.min_partial = -1)),
            Some("min_partial")
        );
        assert_eq!(
            rejected_name(with(|r| r.min_partial = MAX_MIN_PARTIAL + 1)),
            Some("min_partial")
        );
        let p = with(|r| r.min_partial = 5).expect("5 is allowed");
        assert_eq!(p.min_partial_override(), Some(5));
    }

    /// Formats `args` into `buf`, returning the bytes written.
    fn format<'a>(buf: &'a mut [u8], args: core::fmt::Arguments<'_>) -> &'a [u8] {
        let mut w = kernel::str::Formatter::new(buf);
        core::fmt::write(&mut w, args).expect("fits");
        let n = w.bytes_written();
        &buf[..n]
    }

    #[test]
    fn first_bad_parameter_is_named_in_the_message() {
        let e = with(|r| r.min_objects = -4).expect_err("must fail");
        let mut buf = [0u8; 96];
        assert_eq!(
            format(&mut buf, kernel::prelude::fmt!("{e}")),
            b"invalid parameter min_objects=-4: allowed range is 0..=32767"
        );
    }

    #[test]
    fn effective_values_are_printed_with_their_origin() {
        let mut buf = [0u8; 96];
        let p = Params::new(RawParams::DEFAULT).expect("defaults");
        assert_eq!(
            format(&mut buf, kernel::prelude::fmt!("{}", p.effective(4))),
            b"max_order=3 min_order=0 min_objects=16 (auto) min_partial=auto profile=classic"
        );
        let p = with(|r| {
            r.min_objects = 9;
            r.min_partial = 6;
        })
        .expect("valid");
        assert_eq!(
            format(&mut buf, kernel::prelude::fmt!("{}", p.effective(4))),
            b"max_order=3 min_order=0 min_objects=9 min_partial=6 profile=classic"
        );
        let p = p.with_profile(crate::params::Profile::Tuned);
        assert_eq!(
            format(&mut buf, kernel::prelude::fmt!("{}", p.effective(4))),
            b"max_order=3 min_order=0 min_objects=9 min_partial=6 profile=tuned"
        );
    }

    #[test]
    fn auto_min_objects_scales_with_cpus() {
        // 4 * (fls(cpus) + 1), worked out by hand.
        let table: [(u32, u32); 9] = [
            (1, 8),
            (2, 12),
            (3, 12),
            (4, 16),
            (7, 16),
            (8, 20),
            (16, 24),
            (64, 32),
            (4096, 56),
        ];
        for (cpus, want) in table {
            assert_eq!((cpus, auto_min_objects(cpus)), (cpus, want));
        }
        let p = Params::new(RawParams::DEFAULT).expect("defaults");
        assert_eq!(p.min_objects(4), 16);
        let p = with(|r| r.min_objects = 5).expect("5 is allowed");
        assert_eq!(p.min_objects(4), 5);
    }

    #[test]
    fn scaling_cpus_follows_present_cpus() {
        let t = Topology {
            present_cpus: 1,
            online_cpus: 1,
            possible_cpus: 8,
            online_nodes: 1,
        };
        assert_eq!(t.scaling_cpus(), 8);
        let t = Topology {
            present_cpus: 4,
            online_cpus: 4,
            possible_cpus: 64,
            online_nodes: 2,
        };
        assert_eq!(t.scaling_cpus(), 4);
        let live = Topology::read();
        assert!(live.present_cpus >= 1);
        assert!(live.online_nodes >= 1);
        assert!(live.scaling_cpus() >= live.present_cpus.min(live.possible_cpus));
    }
}
