//! `get_id` against bare `siphasher` SipHash-1-3 (same key, without the
//! terminator and mask) and std's `DefaultHasher` hashing a `&str` (the
//! oracle: same function, std's implementation), by input size. Also the
//! `const fn` evaluated at run time, for reference.

use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher, Hasher};
use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use interned_string_db::{get_id, get_id_const};

fn by_size(c: &mut Criterion) {
    let mut group = c.benchmark_group("get_id");
    for size in [8usize, 16, 32, 64, 256, 4096] {
        let input: String = (0..size).map(|i| (b'a' + (i % 26) as u8) as char).collect();
        group.throughput(Throughput::Bytes(size as u64));
        group.bench_with_input(BenchmarkId::new("get_id", size), &input, |b, s| {
            b.iter(|| get_id(black_box(s.as_bytes())))
        });
        group.bench_with_input(
            BenchmarkId::new("siphasher SipHash-1-3", size),
            &input,
            |b, s| {
                b.iter(|| {
                    let mut h = siphasher::sip::SipHasher13::new_with_keys(0, 0);
                    h.write(black_box(s.as_bytes()));
                    h.finish()
                })
            },
        );
        group.bench_with_input(
            BenchmarkId::new("std DefaultHasher(&str)", size),
            &input,
            |b, s| {
                let state = BuildHasherDefault::<DefaultHasher>::default();
                b.iter(|| state.hash_one(black_box(s.as_str())))
            },
        );
        group.bench_with_input(
            BenchmarkId::new("get_id_const at run time", size),
            &input,
            |b, s| b.iter(|| get_id_const(black_box(s.as_bytes()))),
        );
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(2)).warm_up_time(Duration::from_millis(500));
    targets = by_size
}
criterion_main!(benches);
