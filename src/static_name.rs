//! Names whose id is computed at compile time: [`StaticName`] and the
//! macros `intern!` and `static_id!`, each call site registering its name
//! in the global db once per NC.

use crate::config::DEFAULT_NCS;
use crate::db::InternedStringDb;
use crate::error::Error;
use crate::global::global;
use crate::id::get_id_const;
use crate::strategy::Strategy;
use crate::sync::{AtomicU64, Ordering};

/// A `'static` name with its id computed at compile time, which remembers
/// which NCs of the [process-global db](crate::global()) it was registered
/// in.
///
/// After the first successful [`intern`](Self::intern) into an NC, interning
/// it there again costs two loads (the bit, and the NC's open flag, since a
/// closed NC refuses even the strings it holds): no hashing, no table probe.
/// Use the [`intern!`](crate::intern!) macro to make one per call site.
///
/// ```
/// use interned_string_db::{get_id, StaticName};
/// static FORWARD: StaticName = StaticName::new("span/forward");
/// assert_eq!(FORWARD.id(), get_id(b"span/forward")); // a constant
/// assert_eq!(FORWARD.intern(7), Ok(FORWARD.id()));
/// assert_eq!(interned_string_db::global().lookup(7, "span/forward"), Some(FORWARD.id()));
/// ```
#[derive(Debug)]
pub struct StaticName {
    name: &'static str,
    id: u64,
    /// Bit `nc` set: registered in the global db's NC `nc`.
    registered: [AtomicU64; DEFAULT_NCS / 64],
}

impl StaticName {
    /// A name and its compile-time id.
    ///
    /// # Panics
    ///
    /// If `name` is empty (at compile time, in a `static` or `const`).
    pub const fn new(name: &'static str) -> Self {
        assert!(!name.is_empty(), "the empty string cannot be interned");
        StaticName {
            name,
            id: get_id_const(name.as_bytes()),
            registered: [const { AtomicU64::new(0) }; DEFAULT_NCS / 64],
        }
    }

    /// The name.
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// The id, computed at compile time.
    pub const fn id(&self) -> u64 {
        self.id
    }

    /// Interns the name into NC `nc` of the process-global db, once.
    ///
    /// The check is an acquire load, not a relaxed one: a thread that skips
    /// registration because another thread did it must still
    /// *happen after* that registration, or a snapshot it triggers could
    /// miss the name. On x86-64 the two are the same instruction.
    ///
    /// A set bit does not bypass the open check: on a closed NC this returns
    /// [`Error::NcClosed`], as [`InternedStringDb::intern`] does.
    ///
    /// # Errors
    ///
    /// As [`InternedStringDb::intern`]; a failed registration is retried on
    /// the next call.
    #[inline]
    pub fn intern(&self, nc: usize) -> Result<u64, Error> {
        if let Some(word) = self.registered.get(nc / 64) {
            if word.load(Ordering::Acquire) & (1 << (nc % 64)) != 0
                && global().is_open(nc) == Ok(true)
            {
                return Ok(self.id);
            }
        }
        self.register_in_global(nc)
    }

    #[cold]
    fn register_in_global(&self, nc: usize) -> Result<u64, Error> {
        let id = self.intern_in(global(), nc)?;
        // Release: pairs with the acquire in `intern`. A once-per-NC RMW.
        self.registered[nc / 64].fetch_or(1 << (nc % 64), Ordering::Release);
        Ok(id)
    }

    /// Interns the name into NC `nc` of `db`, with the precomputed id (no
    /// hashing; the table is probed every time).
    ///
    /// # Errors
    ///
    /// As [`InternedStringDb::intern`].
    pub fn intern_in<S: Strategy>(
        &self,
        db: &InternedStringDb<S>,
        nc: usize,
    ) -> Result<u64, Error> {
        db.register(nc, self.id, self.name.as_bytes())?;
        Ok(self.id)
    }
}

/// Interns a string literal into an NC of the [process-global
/// db](crate::global()), with its id computed at compile time and the
/// registration done once per call site and NC.
///
/// `intern!(nc, "literal")` evaluates to `Result<u64, Error>`.
///
/// ```
/// use interned_string_db::{get_id, intern};
/// for _ in 0..3 {
///     assert_eq!(intern!(0, "tensor_0"), Ok(635820126496557));
/// }
/// ```
#[macro_export]
macro_rules! intern {
    ($nc:expr, $name:literal) => {{
        static NAME: $crate::StaticName = $crate::StaticName::new($name);
        NAME.intern($nc)
    }};
}

/// The id of a string literal, as a compile-time constant.
///
/// ```
/// const MODEL: u64 = interned_string_db::static_id!("model");
/// assert_eq!(MODEL, 402710577667408);
/// ```
#[macro_export]
macro_rules! static_id {
    ($name:literal) => {
        $crate::get_id_const($name.as_bytes())
    };
}
