//! Context switches of the calling thread, from `getrusage(RUSAGE_THREAD)`.

/// Voluntary and involuntary context switches so far.
#[derive(Debug, Clone, Copy, Default)]
pub struct Switches {
    /// The thread gave up the CPU (blocked, e.g. on a lock).
    pub voluntary: u64,
    /// The scheduler took the CPU away (preempted).
    pub involuntary: u64,
}

impl Switches {
    /// This thread's counts now (zero where the OS does not report them).
    pub fn now() -> Switches {
        #[cfg(target_os = "linux")]
        {
            // SAFETY: `getrusage` writes into the zeroed struct we own.
            let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
            // SAFETY: a valid `who` and a valid pointer.
            if unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) } == 0 {
                return Switches {
                    voluntary: usage.ru_nvcsw as u64,
                    involuntary: usage.ru_nivcsw as u64,
                };
            }
        }
        Switches::default()
    }

    /// The switches since `earlier`.
    pub fn since(self, earlier: Switches) -> Switches {
        Switches {
            voluntary: self.voluntary.saturating_sub(earlier.voluntary),
            involuntary: self.involuntary.saturating_sub(earlier.involuntary),
        }
    }
}
