//! The repository's documents, `docs/*.md`, as pages of these API docs:
//! built only by rustdoc (`cfg(doc)`), so that the crate page links to them
//! with intra-doc links that rustdoc checks and that work on docs.rs and in
//! `cargo doc` alike. The same files read as they are on a repository host;
//! links between them are reference-style, and each page here first defines
//! their labels as the pages of this module (the first definition of a
//! label wins). `docs/history.md` records the choice.

/// The labels the documents link each other by, as this module's pages.
macro_rules! page {
    ($(#[$meta:meta])* $name:ident, $file:literal) => {
        #[doc = "[design.md]: crate::docs::design"]
        #[doc = "[history.md]: crate::docs::history"]
        #[doc = "[reliability.md]: crate::docs::reliability"]
        #[doc = "[benchmarks.md]: crate::docs::benchmarks"]
        #[doc = "[c-api.md]: crate::docs::c_api"]
        #[doc = "[snapshot-format.md]: crate::docs::snapshot_format"]
        #[doc = "[offline-analysis.md]: crate::docs::offline_analysis"]
        #[doc = ""]
        #[doc = include_str!($file)]
        $(#[$meta])*
        pub mod $name {}
    };
}

page!(design, "../docs/design.md");
page!(reliability, "../docs/reliability.md");
page!(history, "../docs/history.md");
page!(benchmarks, "../docs/benchmarks.md");
page!(snapshot_format, "../docs/snapshot-format.md");
page!(c_api, "../docs/c-api.md");
page!(offline_analysis, "../docs/offline-analysis.md");
