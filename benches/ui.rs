//! Drawing the terminal view of `atomic ui` (issue 16): a run of 10,000 events — 100 agent
//! steps, each streaming text, thinking, tool calls and results, its state changes — folded
//! into a `RunView`, then drawn into a ratatui `TestBackend` frame again and again, as the
//! view redraws (layout, the steps around the selection, the end of the selected step's
//! output wrapped to the pane, the state, the last events, and the diff against the frame
//! before). Target: ≥ 30 frames/s, i.e. ≤ 33 ms a frame.
//!
//! - `ui/redraw/160x48`, `ui/redraw/80x24`: the same view drawn again (nothing changed).
//! - `ui/live/160x48`: two views of the run 10 events apart drawn in turn, so each frame
//!   changes (the output tail, the events, the totals), as when the store moves on.
//!
//! Criterion reports each as time per frame and frames per second (`elem/s`).
//! Run with `cargo bench --bench ui`.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use atomic::cli::ui::TerminalView;
use atomic::ir::NodeKeyword;
use atomic::lower::{Outline, OutlineStep};
use atomic::providers::{AgentEvent, Usage};
use atomic::runtime::state::{Change, Delta, FieldChange};
use atomic::runtime::{RunEvent, StepOutcome};
use atomic::view::RunView;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;

const EVENTS: usize = 10_000;
const STEPS: usize = 100;

/// The events of the run, in order: [`STEPS`] agent steps of `EVENTS / STEPS` events each,
/// the last one still running.
fn events() -> Vec<RunEvent> {
    let per_step = EVENTS / STEPS;
    let mut events = Vec::with_capacity(EVENTS);
    for step in 0..STEPS {
        let node: Arc<str> = Arc::from(format!("agent-{step:03}"));
        let number = step as u64 + 1;
        events.push(RunEvent::StepStarted {
            step: number,
            node: node.clone(),
            kind: NodeKeyword::Agent,
            attempt: 1,
            branch: None,
        });
        let last = step == STEPS - 1;
        let body = if last { per_step - 1 } else { per_step - 2 };
        for n in 0..body {
            let event = match n % 10 {
                0 => AgentEvent::ThinkingDelta {
                    text: format!("Considering part {n} of the change before answering. "),
                },
                1 => AgentEvent::ToolStart {
                    id: format!("t{n}"),
                    name: "Read".to_owned(),
                    input: json!({"path": format!("src/module_{n}.rs"), "limit": 200}),
                },
                2 => AgentEvent::ToolComplete {
                    id: format!("t{n}"),
                    name: "Read".to_owned(),
                    summary: format!("{} lines", 40 + n),
                    is_error: n % 20 == 2,
                },
                9 => AgentEvent::Usage {
                    usage: Usage {
                        input_tokens: 1_000 * n as u64,
                        output_tokens: 300 * n as u64,
                        ..Usage::default()
                    },
                    cost_usd: Some(0.001 * n as f64),
                },
                _ => AgentEvent::TextDelta {
                    text: format!(
                        "Line {n} of the review: the function at src/module_{n}.rs checks its \
                         input and returns early on an empty list, which is what the caller \
                         expects.\n"
                    ),
                },
            };
            events.push(RunEvent::Agent {
                node: node.clone(),
                event,
            });
        }
        if !last {
            let mut delta = Delta::default();
            delta.fields.push(FieldChange {
                field: Arc::from(format!("verdict_{}", step % 12)),
                change: Change::Set(json!(format!("step {step}: looks good"))),
            });
            events.push(RunEvent::StepFinished {
                step: number,
                node,
                status: StepOutcome::Completed,
                delta,
                files: None,
                branch: None,
            });
        }
    }
    assert_eq!(events.len(), EVENTS);
    events
}

/// The view of the run's first `count` events.
fn view(events: &[RunEvent], count: usize) -> RunView {
    let outline = Outline {
        steps: (0..STEPS)
            .map(|step| OutlineStep {
                key: format!("agent-{step:03}"),
                node: Some(format!("agent-{step:03}")),
                kind: "agent",
                label: format!("agent-{step:03}"),
            })
            .collect(),
        edges: Vec::new(),
    };
    let mut view = RunView::new("01bench0000000", &outline);
    view.workflow = "bench".to_owned();
    for event in &events[..count] {
        view.apply(event);
    }
    view
}

fn ui(c: &mut Criterion) {
    let events = events();
    let full = view(&events, EVENTS);
    assert_eq!(full.event_count, EVENTS as u64);
    let earlier = view(&events, EVENTS - 10);
    let mut group = c.benchmark_group("ui");
    group
        .throughput(Throughput::Elements(1))
        .sample_size(50)
        .measurement_time(Duration::from_secs(5));
    for (width, height) in [(160, 48), (80, 24)] {
        let shown = TerminalView::new(full.clone(), true);
        let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("a test terminal");
        group.bench_function(format!("redraw/{width}x{height}"), |b| {
            b.iter(|| {
                terminal.draw(|frame| shown.draw(frame)).expect("drawn");
                black_box(terminal.backend().buffer().area);
            });
        });
    }
    let views = [
        TerminalView::new(full.clone(), true),
        TerminalView::new(earlier, true),
    ];
    let mut terminal = Terminal::new(TestBackend::new(160, 48)).expect("a test terminal");
    let mut turn = 0;
    group.bench_function("live/160x48", |b| {
        b.iter(|| {
            turn ^= 1;
            terminal
                .draw(|frame| views[turn].draw(frame))
                .expect("drawn");
            black_box(terminal.backend().buffer().area);
        });
    });
    group.finish();
}

criterion_group!(benches, ui);
criterion_main!(benches);
