//! The checked-in C header matches what cbindgen generates from this crate
//! (`capi/src/`). `UPDATE_HEADER=1 cargo test -p interned-string-db-capi
//! --test header` rewrites it.

use std::path::Path;

#[test]
fn header_is_up_to_date() {
    let capi = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = capi.parent().expect("the repository root");
    let config = cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("cbindgen.toml");
    let mut generated = Vec::new();
    cbindgen::Builder::new()
        .with_crate(capi)
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header")
        .write(&mut generated);
    let generated = String::from_utf8(generated).expect("UTF-8 header");
    let path = root.join("include/interned_string_db.h");
    if std::env::var_os("UPDATE_HEADER").is_some() {
        std::fs::write(&path, &generated).expect("writing the header");
        return;
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        checked_in == generated,
        "include/interned_string_db.h is out of date: run \
         `UPDATE_HEADER=1 cargo test -p interned-string-db-capi --test header`"
    );
}
