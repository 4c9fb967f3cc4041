//! The trait every measured subject implements (our db under each strategy,
//! each peer), and the visitor that the subject list (`crate::subjects`)
//! calls back with each one, statically dispatched.

/// Something that interns (nc, string) → a key.
pub trait Subject: Sync {
    /// Interns `s` for NC `nc`; returns a key (our id, or the peer's own).
    fn intern(&self, nc: usize, s: &str) -> u64;
    /// Whether the harness should hand it names a batch at a time
    /// ([`intern_batch`](Self::intern_batch)) rather than one by one.
    fn batched(&self) -> bool {
        false
    }
    /// Brings whatever the subject builds lazily up to date (our db's by-id
    /// index, which the optimistic strategy builds when the by-id direction
    /// is first read), so that a memory count includes it. Nothing, by
    /// default.
    fn settle(&self) {}
    /// Interns every name of `names` for NC `nc`, writing the keys to `keys`.
    fn intern_batch(&self, nc: usize, names: &[&str], keys: &mut [u64]) {
        for (key, s) in keys.iter_mut().zip(names) {
            *key = self.intern(nc, s);
        }
    }
}

/// Calls back with each subject, statically dispatched.
pub trait Visitor {
    /// Called once per subject.
    fn visit<T: Subject>(&mut self, subject: &T);
}
