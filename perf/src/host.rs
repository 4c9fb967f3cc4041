//! The machine a measurement ran on, as every results file and table names
//! it: the CPU model, its L2 and L3, the CPU count and the load average at
//! the start. Hosts differ (a VM reporting a large L3 hides memory-bound
//! costs that a 32 MiB one shows), so figures are compared on one host only.

use std::fmt;
use std::path::Path;

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
        Host {
            cpu,
            l2: cache("2"),
            l3: cache("3"),
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
            load,
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
        )
    }
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
