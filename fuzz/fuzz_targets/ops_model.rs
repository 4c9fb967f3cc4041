//! Operation sequences decoded from arbitrary bytes, run on every strategy
//! (the crate's one list, `interned_string_db::for_each_strategy`) and
//! checked against the model the property tests use.
#![no_main]

#[path = "../../tests/it/common/model.rs"]
mod model;

use libfuzzer_sys::fuzz_target;
use model::{check_all, every_subject, Op};

const NCS: usize = 3;
const MASK: u64 = 0b11;

/// Decodes a byte stream into operations: a tag byte, then its operands.
fn decode(data: &[u8]) -> Vec<Op> {
    let mut bytes = data.iter().copied();
    let mut next = move || bytes.next();
    let mut ops = Vec::new();
    while let Some(tag) = next() {
        let nc = usize::from(next().unwrap_or(0) % (NCS as u8 + 1));
        let mut string = || {
            let len = next().unwrap_or(0) % 4;
            (0..len)
                .map(|_| next().unwrap_or(b'a') % 4 + b'a')
                .collect::<Vec<u8>>()
        };
        let op = match tag % 7 {
            0 => Op::Intern { nc, s: string() },
            1 => {
                let s = string();
                Op::Register {
                    nc,
                    id: u64::from(tag >> 3),
                    s,
                }
            }
            2 => Op::Lookup { nc, s: string() },
            3 => Op::Resolve {
                nc,
                id: u64::from(tag >> 3),
            },
            4 => Op::Close(nc),
            5 => Op::Open(nc),
            _ => Op::Snapshot,
        };
        ops.push(op);
    }
    ops
}

/// Set in the environment, the first execution prints the strategy of each
/// subject, one `ops_model strategy: NAME` line each, for `.ci/fuzz.sh` to
/// compare with the list.
const PRINT_STRATEGIES: &str = "ISDB_PRINT_STRATEGIES";

fuzz_target!(|data: &[u8]| {
    let ops = decode(data);
    // Only the list's strategies, each of them: the fuzz crate turns every
    // strategy feature on (`all-strategies`).
    let subjects = every_subject(NCS, MASK);
    static PRINTED: std::sync::Once = std::sync::Once::new();
    PRINTED.call_once(|| {
        if std::env::var_os(PRINT_STRATEGIES).is_some() {
            for subject in &subjects {
                eprintln!("ops_model strategy: {}", subject.name());
            }
        }
    });
    // Every strategy in lockstep against one model, the first disagreement
    // a panic.
    if let Err(disagreement) = check_all(NCS, MASK, &subjects, &ops) {
        panic!("{disagreement}");
    }
});
