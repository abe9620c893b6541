//! A fixed amount of parsing for load-independent measurement: parses the generated
//! workflow of `NODES` nodes `ITERATIONS` times (parse and free the tree), so
//! `valgrind --tool=callgrind` instruction counts and `perf stat` task-clock can be compared
//! across changes. Run the same command with `ITERATIONS=0` to subtract the setup.
//!
//! `cargo bench --bench parse_count --no-run`, then run the printed binary with
//! `<nodes> <iterations>` as arguments.

#[path = "support/gen.rs"]
mod generator;

use std::hint::black_box;

use atomic::source::SourceId;

fn main() {
    let mut args = std::env::args().skip(1);
    let mut number = |default: usize| {
        args.next()
            .and_then(|arg| arg.parse().ok())
            .unwrap_or(default)
    };
    let nodes = number(10_000);
    let iterations = number(100);
    let text = generator::generate_workflow(nodes);
    for _ in 0..iterations {
        let parsed = atomic::syntax::kdl::parse(black_box(&text), SourceId(0));
        assert!(parsed.diagnostics.is_empty(), "the generated text is valid");
        black_box(parsed);
    }
    let _ = std::io::Write::write_all(
        &mut std::io::stdout(),
        format!("{nodes} nodes, {} bytes, {iterations} parses\n", text.len()).as_bytes(),
    );
}
