//! The process-global db: the reference's static `CONTEXTS[256]`.

use crate::db::InternedStringDb;
use crate::sync::OnceLock;

static GLOBAL: OnceLock<InternedStringDb> = OnceLock::new();

/// The process-global db ([`DEFAULT_NCS`](crate::DEFAULT_NCS) NCs, the
/// default strategy), created on first use.
///
/// For callers that want one interner per process, as the Neuron runtime has;
/// build an [`InternedStringDb`] yourself for anything else (tests, several
/// independent interners, other NC counts).
///
/// ```
/// let id = interned_string_db::global().intern(0, "model").unwrap();
/// assert_eq!(id, interned_string_db::get_id(b"model"));
/// ```
pub fn global() -> &'static InternedStringDb {
    GLOBAL.get_or_init(InternedStringDb::new)
}
