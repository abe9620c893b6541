//! The environment of a run, read once from the process: the full snapshot for providers
//! (each adapter takes only what it needs, secrets only from the variable its
//! `api-key-env=` names), and for templates only the variables the workflows declare
//! with `env "NAME"`.

use std::collections::HashMap;

use crate::lower::Plan;
use crate::providers::Environment;

/// The variables templates may read: those `plans` declare, where set.
pub(crate) fn for_templates<'a>(
    env: &Environment,
    plans: impl IntoIterator<Item = &'a Plan>,
) -> HashMap<String, String> {
    let mut vars = HashMap::new();
    for plan in plans {
        for name in &plan.workflow().env {
            if let Some(value) = env.get(&name.value) {
                vars.insert(name.value.clone(), value.to_owned());
            }
        }
    }
    vars
}
