//! A trace writer's loop: intern while emitting, and at each flush write only
//! the names new since the last one (a delta) to a snapshot file; a reader
//! merges the files back into the whole dictionary.
//!
//! `cargo run --release --example delta_to_file [DIR]`

use std::path::PathBuf;

use interned_string_db::{Cursor, InternedStringDb, Snapshot};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("interned-string-db-example"));
    std::fs::create_dir_all(&dir)?;
    let db = InternedStringDb::new();
    let mut cursor = Cursor::new();
    let mut files = Vec::new();
    for flush in 0..3 {
        for step in 0..1_000 {
            // A hot loop emits ids; names repeat across flushes.
            let name = format!("span/step_{}", (flush * 500) + step);
            db.intern(step % 8, &name)?;
        }
        let delta = db.delta(&mut cursor); // only what this cursor has not delivered
        let path = dir.join(format!("flush_{flush}.isdb"));
        delta.save(&path)?; // atomic: a temporary file, fsync, rename
        println!(
            "flush {flush}: {} new names -> {}",
            delta.len(),
            path.display()
        );
        files.push(path);
    }
    let loaded = files
        .iter()
        .map(Snapshot::load)
        .collect::<Result<Vec<_>, _>>()?;
    let merged = Snapshot::merge(&loaded);
    assert_eq!(merged, db.snapshot()); // the deltas add up to the whole
    println!("{} names in all, each written once", merged.len());
    Ok(())
}
