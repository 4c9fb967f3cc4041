//! The machine a measurement ran on, as every results file and table names
//! it: the CPU model, its L2 and L3, the CPU count, the load average at
//! the start, and what a cache line's round trip between two threads costs
//! then. Hosts differ (a VM reporting a large L3 hides memory-bound costs
//! that a 32 MiB one shows), so figures are compared on one host only; and
//! one VM's cells where two threads write the same lines can change by 2
//! to 3 times from one hour to the next (`docs/benchmarks.md`, Method).
//! The round trip, measured at the start, flags some of those spells (on
//! the AMD EPYC VM it read 60 to 91 ns mostly and 372 to 466 at times);
//! it does not calibrate them, as a spell may begin or end within a run.

use std::fmt;
use std::hint::spin_loop;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// What is known of the host; `?` where Linux's files do not say.
#[derive(Debug, Clone)]
pub struct Host {
    /// `model name` of `/proc/cpuinfo`.
    pub cpu: String,
    /// L2 of CPU 0 (per core on current x86), as sysfs writes it (`1024K`).
    pub l2: String,
    /// L3 of CPU 0 (shared), as sysfs writes it (`32768K`).
    pub l3: String,
    /// CPUs this process may use.
    pub cpus: usize,
    /// The 1-minute load average when detected.
    pub load: f64,
    /// ns for one cache line to go from one thread to another and back
    /// ([`line_round_trip`]); `None` with one CPU, or if the measurement
    /// did not end in time.
    pub line_round_trip: Option<f64>,
}

impl Host {
    /// Reads `/proc` and `/sys`.
    pub fn detect() -> Host {
        let read = |path: &str| std::fs::read_to_string(path).unwrap_or_default();
        let cpu = read("/proc/cpuinfo")
            .lines()
            .find_map(|l| {
                l.strip_prefix("model name")
                    .map(|r| r.trim_start_matches([' ', '\t', ':']))
            })
            .unwrap_or("?")
            .to_owned();
        let cache = |level: &str| {
            (0..8)
                .map(|i| format!("/sys/devices/system/cpu/cpu0/cache/index{i}"))
                .find(|dir| read(&format!("{dir}/level")).trim() == level)
                .map(|dir| read(&format!("{dir}/size")).trim().to_owned())
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "?".into())
        };
        let load = read("/proc/loadavg")
            .split_whitespace()
            .next()
            .and_then(|l| l.parse().ok())
            .unwrap_or(f64::NAN);
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        Host {
            cpu,
            l2: cache("2"),
            l3: cache("3"),
            cpus,
            load,
            line_round_trip: (cpus >= 2).then(line_round_trip).flatten(),
        }
    }

    /// Whether the machine looked busy at the start: a load average of half
    /// a CPU or more (other work running would skew the figures).
    pub fn is_busy(&self) -> bool {
        self.load >= 0.5
    }
}

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}, {} CPUs, L2 {} a core, L3 {}, load {:.2} at the start",
            self.cpu, self.cpus, self.l2, self.l3, self.load
        )?;
        match self.line_round_trip {
            Some(ns) => write!(f, ", a line's round trip between two threads {ns:.0} ns"),
            None => Ok(()),
        }
    }
}

/// Round trips per batch, and batches, of [`line_round_trip`] (its doc
/// says them).
const TRIPS: u64 = 20_000;
const BATCHES: u64 = 5;

/// ns for one cache line to go from this thread to a second one and back:
/// the median of 5 batches of 20,000 round trips (this thread stores an
/// odd number, the other answers with the next even one), some 20 ms in
/// all. `None` if they have not all been made within a second (a
/// busy machine: descheduled spinners measure the scheduler). The clock
/// is read once every 1,024 spins of a wait, so that reading it does not
/// delay seeing the answer.
pub fn line_round_trip() -> Option<f64> {
    let line = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let give_up = Instant::now() + Duration::from_secs(1);
    let mut batches = Vec::new();
    std::thread::scope(|s| {
        s.spawn(|| {
            for i in 0..TRIPS * BATCHES {
                while line.load(Ordering::Acquire) != 2 * i + 1 {
                    if stop.load(Ordering::Relaxed) {
                        return;
                    }
                    spin_loop();
                }
                line.store(2 * i + 2, Ordering::Release);
            }
        });
        'batches: for batch in 0..BATCHES {
            let start = Instant::now();
            for i in batch * TRIPS..(batch + 1) * TRIPS {
                line.store(2 * i + 1, Ordering::Release);
                let mut spins = 0u32;
                while line.load(Ordering::Acquire) != 2 * i + 2 {
                    spins = spins.wrapping_add(1);
                    if spins.is_multiple_of(1024) && Instant::now() > give_up {
                        break 'batches;
                    }
                    spin_loop();
                }
            }
            batches.push(start.elapsed().as_nanos() as f64 / TRIPS as f64);
        }
        stop.store(true, Ordering::Relaxed);
    });
    if batches.len() < BATCHES as usize {
        return None;
    }
    batches.sort_by(f64::total_cmp);
    Some(batches[batches.len() / 2])
}

/// `git rev-parse --short HEAD` of the checkout a measurement runs in (or
/// was built from), `-dirty` if tracked files differ from it; `unknown` outside
/// a git checkout.
pub fn commit() -> String {
    let git = |dir: &Path, args: &[&str]| {
        std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
    };
    for dir in [Path::new("."), Path::new(env!("CARGO_MANIFEST_DIR"))] {
        if let Some(hash) = git(dir, &["rev-parse", "--short", "HEAD"]) {
            let dirty = git(dir, &["status", "--porcelain", "--untracked-files=no"])
                .is_some_and(|changes| !changes.is_empty());
            return if dirty { hash + "-dirty" } else { hash };
        }
    }
    "unknown".into()
}

/// The date and time now, UTC (`date -u`), or empty if `date` cannot run.
pub fn utc_now() -> String {
    std::process::Command::new("date")
        .args(["-u", "+%Y-%m-%d %H:%M UTC"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(line_round_trip: Option<f64>) -> Host {
        Host {
            cpu: "AMD EPYC".into(),
            l2: "512K".into(),
            l3: "32768K".into(),
            cpus: 2,
            load: 0.25,
            line_round_trip,
        }
    }

    #[test]
    fn the_host_line_names_the_round_trip_when_measured() {
        assert_eq!(
            host(Some(74.4)).to_string(),
            "AMD EPYC, 2 CPUs, L2 512K a core, L3 32768K, load 0.25 at the start, \
             a line's round trip between two threads 74 ns"
        );
        assert_eq!(
            host(None).to_string(),
            "AMD EPYC, 2 CPUs, L2 512K a core, L3 32768K, load 0.25 at the start"
        );
    }
}
