//! Property test: random operation sequences on every strategy agree with a
//! simple model (tests/it/common/model.rs). Few NCs, short strings from a small
//! alphabet and a 4-id mask make repeats, conflicts and cross-NC conflicts
//! common.

use crate::common::model::{check_all, every_subject, Op};
use proptest::prelude::*;

const NCS: usize = 3;
const MASK: u64 = 0b11;

fn op() -> impl Strategy<Value = Op> {
    // One past the last NC, sometimes: out of range is an operation too.
    let nc = 0..=NCS;
    let s = proptest::collection::vec(prop_oneof![Just(b'a'), Just(b'b'), Just(0xff)], 0..3);
    prop_oneof![
        6 => (nc.clone(), s.clone()).prop_map(|(nc, s)| Op::Intern { nc, s }),
        2 => (nc.clone(), 0..6u64, s.clone()).prop_map(|(nc, id, s)| Op::Register { nc, id, s }),
        2 => (nc.clone(), s).prop_map(|(nc, s)| Op::Lookup { nc, s }),
        1 => (nc.clone(), 0..6u64).prop_map(|(nc, id)| Op::Resolve { nc, id }),
        1 => nc.clone().prop_map(Op::Close),
        1 => nc.prop_map(Op::Open),
        2 => Just(Op::Snapshot),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Every strategy in lockstep against the model: the first
    /// disagreement names the strategy.
    #[test]
    fn agrees_with_the_model(ops in proptest::collection::vec(op(), 0..60)) {
        let subjects = every_subject(NCS, MASK);
        check_all(NCS, MASK, &subjects, &ops).map_err(TestCaseError::fail)?;
    }
}
