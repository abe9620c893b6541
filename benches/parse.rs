//! KDL parse throughput on workflow-shaped documents: atomic's parser against the `kdl`
//! crate on the same text. Run with `cargo bench --bench parse`.
//!
//! `atomic` and `kdl` time parsing plus freeing the tree; `atomic-keep` times parsing alone.

#[path = "support/gen.rs"]
mod generator;

use std::hint::black_box;
use std::time::Duration;

use atomic::source::SourceId;
use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

fn parse(c: &mut Criterion) {
    let mut group = c.benchmark_group("parse");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(5));
    for nodes in [1_000, 10_000, 100_000] {
        let text = generator::generate_workflow(nodes);
        let parsed = atomic::syntax::kdl::parse(&text, SourceId(0));
        assert!(
            parsed.diagnostics.is_empty(),
            "the generated workflow is valid KDL"
        );
        assert_eq!(
            count(&parsed.document),
            nodes,
            "the generator writes exactly `nodes` nodes"
        );
        group.throughput(Throughput::Bytes(text.len() as u64));
        // Parse and free the tree, like the `kdl` measurement below.
        group.bench_with_input(BenchmarkId::new("atomic", nodes), &text, |b, text| {
            b.iter(|| atomic::syntax::kdl::parse(black_box(text), SourceId(0)));
        });
        // Parse only: the tree is freed outside the timed part (a CLI run keeps it until exit).
        group.bench_with_input(BenchmarkId::new("atomic-keep", nodes), &text, |b, text| {
            b.iter_batched(
                || (),
                |()| atomic::syntax::kdl::parse(black_box(text), SourceId(0)),
                BatchSize::PerIteration,
            );
        });
        // The reference parser runs at ~2 MB/s: 100,000 nodes would take minutes per sample.
        if nodes <= 10_000 {
            assert!(
                kdl::KdlDocument::parse_v2(&text).is_ok(),
                "the kdl crate accepts it too"
            );
            group.bench_with_input(BenchmarkId::new("kdl", nodes), &text, |b, text| {
                b.iter(|| kdl::KdlDocument::parse_v2(black_box(text)).map(|doc| doc.nodes().len()));
            });
        }
    }
    group.finish();
}

/// Nodes in a document, nested ones included.
fn count(doc: &atomic::syntax::kdl::Document) -> usize {
    doc.nodes
        .iter()
        .map(|node| 1 + node.children.as_ref().map_or(0, count))
        .sum()
}

criterion_group!(benches, parse);
criterion_main!(benches);
