//! Prints the crate's one list of strategies (`for_each_strategy`, every
//! strategy on: the examples see the features of the crate's
//! dev-dependency on itself), one line per strategy, tab-separated: its
//! `Strategy::NAME`, its `Strategy::RAW_MODULE` (`-` for none) and whether
//! it is `Strategy::COPY_ON_WRITE`. CI's shell scripts take their
//! strategies from it, so that none types a list of its own:
//!
//! ```sh
//! cargo run -q --example strategies             # every strategy
//! cargo run -q --example strategies -- --raw    # those with a module of src/raw/
//! ```
//!
//! A tool of this workspace (feature `test-util`), not an example of the
//! API.

use interned_string_db::{for_each_strategy, Strategy, StrategyVisitor};

struct Print {
    raw_only: bool,
}

impl StrategyVisitor for Print {
    fn visit<S: Strategy>(&mut self) {
        if self.raw_only && S::RAW_MODULE.is_none() {
            return;
        }
        println!(
            "{}\t{}\t{}",
            S::NAME,
            S::RAW_MODULE.unwrap_or("-"),
            S::COPY_ON_WRITE
        );
    }
}

fn main() {
    let mut raw_only = false;
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--raw" => raw_only = true,
            _ => {
                eprintln!("usage: strategies [--raw]");
                std::process::exit(2);
            }
        }
    }
    for_each_strategy(&mut Print { raw_only });
}
