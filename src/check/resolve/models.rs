//! `model=` on providers and agents, judged by the model catalogue
//! ([`crate::ir::models`]) against the adapter that will run it (unless `base-url=` points
//! the provider at a server of the user's own): a known model of another
//! vendor, or one OpenCode needs written `provider/model`, is an error with the fix; a model
//! atomic does not know is a warning (the backend may know it: it runs as written). Each
//! model is then written as its backend needs it (`sonnet` → `claude-sonnet-4-5` for the
//! Anthropic API), so a swap of adapters carries the model over.

use crate::diagnostic::{Code, Diagnostic, did_you_mean};
use crate::ir::models::{self, ModelProblem};
use crate::ir::{NodeKind, ProviderDecl, Workflow};
use crate::source::Spanned;

/// Judges every `model=` of a provider and of the agents on it, rewriting the ones that
/// are fine to the form their adapter needs. `swapped` gives, by provider name, the adapter
/// a swap moved it to, for the messages.
pub fn check_models<'s>(
    workflow: &mut Workflow,
    swapped: impl Fn(&str) -> Option<&'s str>,
) -> Vec<Diagnostic> {
    // Each judged provider: its name, the adapter that runs it, the swap that put it there.
    let judged: Vec<(String, String, Option<&str>)> = workflow
        .providers
        .iter()
        .filter_map(|provider| {
            let name = provider.name.value.clone();
            let swap = swapped(&name);
            Some((name, judged_adapter(provider)?, swap))
        })
        .collect();
    let of = |name: &str| {
        judged
            .iter()
            .find(|(judged, ..)| judged == name)
            .map(|(_, adapter, swap)| (adapter.as_str(), *swap))
    };
    let mut out = Vec::new();
    for provider in &mut workflow.providers {
        if let (Some((adapter, swap)), Some(model)) =
            (of(&provider.name.value), &mut provider.model)
        {
            judge(adapter, model, swap, &mut out);
        }
    }
    let providers: Vec<Option<String>> = workflow
        .nodes
        .iter()
        .map(|node| match &node.kind {
            NodeKind::Agent(agent) => workflow
                .agent_provider_name(agent)
                .map(|name| name.value.clone()),
            _ => None,
        })
        .collect();
    for (node, provider) in workflow.nodes.iter_mut().zip(providers) {
        if let NodeKind::Agent(agent) = &mut node.kind
            && let (Some((adapter, swap)), Some(model)) =
                (provider.as_deref().and_then(of), &mut agent.model)
        {
            judge(adapter, model, swap, &mut out);
        }
    }
    out
}

/// The adapter whose catalogue a provider's models are judged by: none when `base-url=`
/// points it at a server of the user's own (a proxy or a local model server names its
/// models as it likes).
fn judged_adapter(provider: &ProviderDecl) -> Option<String> {
    provider
        .base_url
        .is_none()
        .then(|| provider.adapter.value.clone())
}

fn judge(
    adapter: &str,
    model: &mut Spanned<String>,
    swapped: Option<&str>,
    out: &mut Vec<Diagnostic>,
) {
    let written = model.value.clone();
    let list = format!("`atomic list models --adapter {adapter}` lists them");
    let swap_note = |help: String| match swapped {
        Some(_) => format!("{help}; or pass the model with `--model` alongside `--provider`"),
        None => help,
    };
    let runs_on = match swapped {
        Some(adapter) => format!(
            " (its provider runs on `{adapter}` instead of the adapter written: `--provider`, or `adapter` in `.atomic/config.kdl`)"
        ),
        None => String::new(),
    };
    match models::written_for(adapter, &written) {
        Ok(form) => model.value = form,
        // A swap carries a known model over in the form its new backend needs.
        Err(ModelProblem::NeedsPrefix { fix: Some(fix) }) if swapped.is_some() => {
            model.value = fix;
        }
        Err(ModelProblem::NeedsPrefix { fix }) => out.push(
            Diagnostic::new(
                Code::WrongModel,
                model.span,
                format!(
                    "`{adapter}` needs the model written `provider/model`, not `{written}`{runs_on}"
                ),
            )
            .label("no provider before the model")
            .help(swap_note(match &fix {
                Some(fix) => format!("write `{fix}`"),
                None => {
                    "write the provider's name first, e.g. `anthropic/claude-sonnet-4-5`".to_owned()
                }
            }))
            .maybe_replace_with(fix),
        ),
        Err(ModelProblem::WrongVendor { vendor, instead }) => out.push(
            Diagnostic::new(
                Code::WrongModel,
                model.span,
                format!(
                    "`{adapter}` cannot run `{written}`, a model of {}{runs_on}",
                    vendor.display()
                ),
            )
            .label(format!("{} model", vendor.display()))
            .help(swap_note(format!(
                "write a model `{adapter}` runs, e.g. `{instead}` ({list})"
            )))
            .replace_with(instead),
        ),
        Err(ModelProblem::Unknown { vendors }) => {
            let bare = written
                .split_once('/')
                .map_or(written.as_str(), |(_, rest)| rest);
            let near = did_you_mean(&bare.to_ascii_lowercase(), models::names(vendors));
            let help = match near {
                Some(near) => format!("did you mean `{near}`? ({list})"),
                None => format!("if `{adapter}`'s backend knows it, it runs as written ({list})"),
            };
            let fix = near.map(|near| match written.split_once('/') {
                Some((prefix, _)) => format!("{prefix}/{near}"),
                None => near.to_owned(),
            });
            out.push(
                Diagnostic::new(
                    Code::UnknownModel,
                    model.span,
                    format!("`{written}` is not a model atomic knows for `{adapter}`{runs_on}"),
                )
                .label("not in the model catalogue")
                .help(help)
                .maybe_replace_with(fix),
            );
        }
    }
}
