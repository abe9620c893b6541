//! `check` end to end — parse, resolve, analyze, lower — on generated workflows of 1,000,
//! 10,000 and 100,000 nodes. Run with `cargo bench --bench check`; the target is 10,000
//! nodes in ≤ 50 ms with linear growth. Peak memory is measured separately by
//! `cargo bench --bench check_memory` (criterion cannot see it).

#[path = "support/gen.rs"]
mod generator;

use std::hint::black_box;
use std::time::Duration;

use atomic::compile::{self, Config};
use atomic::source::{MemoryFiles, Sources};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

fn check(c: &mut Criterion) {
    let mut group = c.benchmark_group("check");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(8));
    let files = MemoryFiles::new();
    for nodes in [1_000, 10_000, 100_000] {
        let text = generator::generate_workflow(nodes);
        let compiled = compile_once(&text, &files);
        assert!(
            !compiled.has_errors(),
            "the generated workflow checks without errors: {:?}",
            compiled.diagnostics.iter().take(3).collect::<Vec<_>>()
        );
        group.throughput(Throughput::Elements(nodes as u64));
        group.bench_with_input(BenchmarkId::from_parameter(nodes), &text, |b, text| {
            b.iter(|| compile_once(black_box(text), &files));
        });
    }
    group.finish();
}

fn compile_once(text: &str, files: &MemoryFiles) -> compile::Compiled {
    let mut sources = Sources::new();
    let file = sources.add("bench.kdl", text);
    compile::compile(&mut sources, file, files, &Config::new())
}

criterion_group!(benches, check);
criterion_main!(benches);
