//! The run's graph as SVG, drawn by the binary (no script or CDN): steps in layers by their
//! longest distance from the start along forward edges, in source order within a layer;
//! each step a box with a `data-key` the page uses to colour it by its state.

use std::collections::HashMap;
use std::fmt::Write as _;

use crate::lower::Outline;

const BOX_W: u32 = 168;
const BOX_H: u32 = 40;
const GAP_X: u32 = 28;
const GAP_Y: u32 = 44;
const MARGIN: u32 = 16;

/// Each step's position in `outline.steps`, by key.
fn positions(outline: &Outline) -> HashMap<&str, usize> {
    outline
        .steps
        .iter()
        .enumerate()
        .map(|(at, step)| (step.key.as_str(), at))
        .collect()
}

/// Where each step goes: (layer, position in the layer).
fn layout(outline: &Outline, index: &HashMap<&str, usize>) -> Vec<(usize, usize)> {
    let mut layer = vec![0_usize; outline.steps.len()];
    // Forward edges only (back edges would make layers unbounded); they follow source
    // order, so one pass per step bounds the relaxation.
    for _ in 0..outline.steps.len().max(1) {
        let mut changed = false;
        for edge in outline.edges.iter().filter(|edge| !edge.backward) {
            if let (Some(&from), Some(&to)) =
                (index.get(edge.from.as_str()), index.get(edge.to.as_str()))
                && layer[to] < layer[from] + 1
            {
                layer[to] = layer[from] + 1;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let mut filled: HashMap<usize, usize> = HashMap::new();
    layer
        .iter()
        .map(|&depth| {
            let slot = filled.entry(depth).or_default();
            *slot += 1;
            (depth, *slot - 1)
        })
        .collect()
}

/// The SVG of `outline`.
#[must_use]
pub(super) fn svg(outline: &Outline) -> String {
    let index = positions(outline);
    let places = layout(outline, &index);
    let layers = places.iter().map(|(depth, _)| depth + 1).max().unwrap_or(0);
    let widest = places.iter().map(|(_, slot)| slot + 1).max().unwrap_or(0);
    let width = MARGIN * 2 + to_u32(widest) * (BOX_W + GAP_X);
    let height = MARGIN * 2 + to_u32(layers) * (BOX_H + GAP_Y);
    let at = |step: usize| {
        let (depth, slot) = places[step];
        (
            MARGIN + to_u32(slot) * (BOX_W + GAP_X),
            MARGIN + to_u32(depth) * (BOX_H + GAP_Y),
        )
    };
    let mut out = String::new();
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="graph" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" aria-label="workflow graph">"#
    );
    out.push_str(r#"<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z"/></marker></defs>"#);
    for edge in &outline.edges {
        let (Some(&from), Some(&to)) = (index.get(edge.from.as_str()), index.get(edge.to.as_str()))
        else {
            continue;
        };
        let ((fx, fy), (tx, ty)) = (at(from), at(to));
        let (x1, y1) = (fx + BOX_W / 2, fy + BOX_H);
        let (x2, y2) = (tx + BOX_W / 2, ty);
        let _ = write!(
            out,
            r#"<path class="edge {style}" d="M {x1} {y1} C {x1} {c1} {x2} {c2} {x2} {y2}" marker-end="url(#arrow)"><title>{title}</title></path>"#,
            style = edge.style,
            c1 = y1 + GAP_Y / 2,
            c2 = y2.saturating_sub(GAP_Y / 2),
            title = escape(edge.label.as_deref().unwrap_or_default()),
        );
    }
    for (step_at, step) in outline.steps.iter().enumerate() {
        let (x, y) = at(step_at);
        let label = step.label.lines().next().unwrap_or_default();
        let _ = write!(
            out,
            r#"<g class="step kind-{kind} pending" data-key="{key}" tabindex="0"><rect x="{x}" y="{y}" width="{BOX_W}" height="{BOX_H}" rx="8"/><text x="{tx}" y="{ty}">{label}</text><title>{title}</title></g>"#,
            kind = step.kind,
            key = escape(&step.key),
            tx = x + BOX_W / 2,
            ty = y + BOX_H / 2 + 4,
            label = escape(&shorten(label, 22)),
            title = escape(&step.label),
        );
    }
    out.push_str("</svg>");
    out
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX / 1024)
}

fn shorten(text: &str, most: usize) -> String {
    if text.chars().count() <= most {
        return text.to_owned();
    }
    let mut short: String = text.chars().take(most - 1).collect();
    short.push('…');
    short
}

/// Escapes text for XML/HTML content and attributes.
pub(super) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::{OutlineEdge, OutlineStep};

    fn step(key: &str) -> OutlineStep {
        OutlineStep {
            key: key.to_owned(),
            node: Some(key.to_owned()),
            kind: "agent",
            label: format!("{key} <b>"),
        }
    }

    fn edge(from: &str, to: &str, backward: bool) -> OutlineEdge {
        OutlineEdge {
            from: from.to_owned(),
            to: to.to_owned(),
            label: None,
            style: "plain",
            backward,
        }
    }

    #[test]
    fn steps_are_layered_by_their_longest_forward_path() {
        let outline = Outline {
            steps: vec![step("a"), step("b"), step("c"), step("d")],
            edges: vec![
                edge("a", "b", false),
                edge("a", "c", false),
                edge("b", "d", false),
                edge("c", "d", false),
                edge("d", "a", true),
            ],
        };
        assert_eq!(
            layout(&outline, &positions(&outline)),
            [(0, 0), (1, 0), (1, 1), (2, 0)]
        );
        let svg = svg(&outline);
        assert_eq!(svg.matches(r#"class="step kind-agent pending""#).count(), 4);
        assert!(svg.contains(r#"data-key="d""#));
        // Labels are escaped.
        assert!(svg.contains("a &lt;b&gt;") && !svg.contains("a <b>"));
    }
}
