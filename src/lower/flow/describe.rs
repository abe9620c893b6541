//! Wording shared by the flow checks' messages.

use crate::ir::Jump;
use crate::lower::{Plan, StepIdx, StepKind};

/// How a step is named in a message: "`review`", "the end", "the join of `fan`".
pub(super) fn step_name(plan: &Plan, step: StepIdx) -> String {
    let node = plan.node(step).map(|node| node.id.value.as_str());
    match (plan.step(step).kind, node) {
        (StepKind::End, _) => "the end".to_owned(),
        (StepKind::Start, _) => "the start".to_owned(),
        (StepKind::LoopTail { .. }, Some(id)) => format!("the end of loop `{id}`"),
        (StepKind::Join { .. }, Some(id)) => format!("the join of `{id}`"),
        (_, Some(id)) => format!("`{id}`"),
        (_, None) => "a step".to_owned(),
    }
}

/// "`a`", "`a` and `b`", "`a`, `b` and `c`", "`a`, `b`, `c` and 2 more".
pub(super) fn list(names: &[String]) -> String {
    const SHOWN: usize = 3;
    match names {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] if names.len() <= SHOWN + 1 => format!("{} and {last}", init.join(", ")),
        _ => {
            let shown = names.get(..SHOWN).unwrap_or(names).join(", ");
            format!("{shown} and {} more", names.len() - SHOWN)
        }
    }
}

/// Where a jump goes, for messages: "`ship`", "the end", "the next statement".
pub(super) fn jump_name(plan: &Plan, jump: Jump) -> String {
    match jump {
        Jump::Node(node) => plan.workflow().nodes.get(node.index()).map_or_else(
            || "another node".to_owned(),
            |node| format!("`{}`", node.id.value),
        ),
        Jump::End => "the end".to_owned(),
        Jump::Next => "the next statement".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(items: &[&str]) -> Vec<String> {
        items.iter().map(|item| format!("`{item}`")).collect()
    }

    #[test]
    fn lists_read_naturally() {
        assert_eq!(list(&names(&[])), "");
        assert_eq!(list(&names(&["a"])), "`a`");
        assert_eq!(list(&names(&["a", "b"])), "`a` and `b`");
        assert_eq!(list(&names(&["a", "b", "c", "d"])), "`a`, `b`, `c` and `d`");
        assert_eq!(
            list(&names(&["a", "b", "c", "d", "e"])),
            "`a`, `b`, `c` and 2 more"
        );
    }
}
