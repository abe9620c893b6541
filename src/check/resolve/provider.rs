//! `provider "<name>" adapter=… model=… base-url=… api-key-env=… cassette=… latency=… { command …; option … }`.

use super::agent::options;
use super::ids::check_id;
use super::resolver::Resolver;
use crate::check::structure::Checked;
use crate::diagnostic::{Code, Diagnostic, did_you_mean, expected_one_of};
use crate::ir::{ADAPTERS, ProviderDecl, adapter_info};
use crate::source::Spanned;

/// The declared providers.
pub(super) fn resolve_providers(r: &mut Resolver<'_>, checked: &Checked<'_>) -> Vec<ProviderDecl> {
    let mut providers: Vec<ProviderDecl> = Vec::new();
    for provider in checked.children_of("provider") {
        let Some(name) = r.string(provider.arg(0)) else {
            continue;
        };
        check_id(r, &name, "provider");
        if let Some(first) = providers
            .iter()
            .find(|first| first.name.value == name.value)
        {
            r.report(
                Diagnostic::declared_twice("provider", &name.value, name.span, first.name.span)
                    .help("remove one, or rename it"),
            );
            continue;
        }
        let adapter = r
            .string(provider.prop("adapter"))
            .unwrap_or_else(|| Spanned::new(String::new(), provider.name_span()));
        if !adapter.value.is_empty() {
            check_adapter(r, provider, &adapter);
        }
        let mut options = options(r, provider);
        if let Some(latency) = r.string(provider.prop("latency")) {
            options.insert("latency".to_owned(), serde_json::Value::from(latency.value));
        }
        providers.push(ProviderDecl {
            name,
            adapter,
            model: r.string(provider.prop("model")),
            base_url: r.string(provider.prop("base-url")),
            api_key_env: r.string(provider.prop("api-key-env")),
            cassette: r.string(provider.prop("cassette")),
            command: provider
                .child("command")
                .map(|command| {
                    command
                        .args_from(0)
                        .filter_map(|arg| r.string(Some(arg)))
                        .collect()
                })
                .unwrap_or_default(),
            options,
            span: provider.node.span,
        });
    }
    providers
}

/// The adapter exists, and the settings it cannot work without are there.
fn check_adapter(r: &mut Resolver<'_>, provider: &Checked<'_>, adapter: &Spanned<String>) {
    if adapter_info(&adapter.value).is_none() {
        let names: Vec<&str> = ADAPTERS.iter().map(|info| info.name).collect();
        let expected = format!("expected one of {}", expected_one_of(&names));
        let near = did_you_mean(&adapter.value, names.iter().copied());
        r.report(
            Diagnostic::new(
                Code::UnknownAdapter,
                adapter.span,
                format!("unknown adapter `{}`", adapter.value),
            )
            .label("no such adapter")
            .help(match near {
                Some(near) => format!("did you mean `{near}`? {expected}"),
                None => expected,
            })
            .maybe_replace_with(near.map(str::to_owned)),
        );
        return;
    }
    check_foreign_parts(r, provider, &adapter.value);
    let needs = match adapter.value.as_str() {
        "command" if provider.child("command").is_none() => Some((
            "a `command \"program\" \"arg\"…` child",
            "the program that reads the prompt and writes the reply",
        )),
        "acp" if provider.child("command").is_none() => Some((
            "a `command \"program\" \"arg\"…` child",
            "the agent to start, e.g. `command \"gemini\" \"--acp\"`",
        )),
        name if provider.prop("api-key-env").is_none()
            && adapter_info(name).is_some_and(|info| info.needs_api_key) =>
        {
            Some((
                "`api-key-env=`",
                "the variable holding its model key (atomic holds the key; the CLI reads none of its own)",
            ))
        }
        _ => None,
    };
    if let Some((what, why)) = needs {
        r.report(
            Diagnostic::new(
                Code::MissingProperty,
                provider.name_span(),
                format!("the `{}` adapter needs {what}", adapter.value),
            )
            .label(format!("`{}` provider without it", adapter.value))
            .with_label(adapter.span, "adapter chosen here")
            .help(format!("add {what}: {why}")),
        );
    }
}

/// A provider setting, and the adapters that read it: on any other it would be ignored.
struct Part {
    /// The property or child, as written.
    name: &'static str,
    /// A child node (`command { … }`) rather than a property.
    child: bool,
    /// The adapters that read it.
    read_by: Readers,
    /// What it is for, in the help.
    purpose: &'static str,
}

/// Which adapters read a setting.
enum Readers {
    /// These.
    Only(&'static [&'static str]),
    /// Every adapter but these.
    AllBut(&'static [&'static str]),
}

impl Readers {
    fn include(&self, adapter: &str) -> bool {
        match self {
            Self::Only(names) => names.contains(&adapter),
            Self::AllBut(names) => !names.contains(&adapter),
        }
    }
}

/// The settings only some adapters read. `model=` and `option` are judged elsewhere (by the
/// model catalogue and each adapter's options).
const PARTS: &[Part] = &[
    Part {
        name: "command",
        child: true,
        read_by: Readers::Only(&["command", "acp"]),
        purpose: "starts the program of a `command` or `acp` provider; an agent CLI's adapter finds its own CLI (`option \"bin\"` names another executable)",
    },
    Part {
        name: "cassette",
        child: false,
        read_by: Readers::Only(&["replay"]),
        purpose: "names the recording a `replay` provider answers from; record any provider with `atomic run --record`",
    },
    Part {
        name: "latency",
        child: false,
        read_by: Readers::Only(&["in-process"]),
        purpose: "slows an `in-process` provider's replies for tests",
    },
    Part {
        name: "base-url",
        child: false,
        // Those that talk to no model endpoint.
        read_by: Readers::AllBut(&["command", "replay", "in-process"]),
        purpose: "points a model API or an agent CLI at another endpoint",
    },
    Part {
        name: "api-key-env",
        child: false,
        read_by: Readers::AllBut(&["replay", "in-process"]),
        purpose: "names the variable holding a model key",
    },
];

/// A setting the adapter never reads is refused rather than silently ignored: the author
/// meant it to change something.
fn check_foreign_parts(r: &mut Resolver<'_>, provider: &Checked<'_>, adapter: &str) {
    for part in PARTS.iter().filter(|part| !part.read_by.include(adapter)) {
        let (span, code, kind) = if part.child {
            let Some(child) = provider.child(part.name) else {
                continue;
            };
            (child.name_span(), Code::UnknownChild, "child")
        } else {
            let Some(span) = provider.entry_span(part.name) else {
                continue;
            };
            (span, Code::UnknownProperty, "property")
        };
        let readers: Vec<String> = ADAPTERS
            .iter()
            .filter(|info| part.read_by.include(info.name))
            .map(|info| format!("`{}`", info.name))
            .collect();
        r.report(
            Diagnostic::new(
                code,
                span,
                format!("the `{adapter}` adapter does not read `{}`", part.name),
            )
            .label(format!("ignored by `{adapter}`"))
            .help(format!(
                "remove this {kind}: it {} (read by {})",
                part.purpose,
                readers.join(", ")
            )),
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::check::testing::{codes, only, resolve_text};
    use crate::diagnostic::Code;

    fn flow(provider: &str) -> String {
        format!("workflow \"w\" {{\n{provider}\nset \"x\" \"1\"\nstate {{ field \"x\"; }}\n}}")
    }

    #[test]
    fn adapter_requirements() {
        // The replay adapter finds its cassette by convention when none is named.
        assert_eq!(codes(&flow("provider \"p\" adapter=\"replay\"")), []);
        assert_eq!(
            codes(&flow("provider \"p\" adapter=\"command\"")),
            [Code::MissingProperty]
        );
        assert_eq!(
            codes(&flow(
                "provider \"p\" adapter=\"command\" { command \"m\"; }"
            )),
            []
        );
        let (diagnostic, at) = only(
            &flow("provider \"p\" adapter=\"antropic\""),
            Code::UnknownAdapter,
        );
        assert_eq!(at, "\"antropic\"");
        assert!(
            diagnostic
                .help
                .unwrap()
                .starts_with("did you mean `anthropic`?")
        );
    }

    #[test]
    fn parts_an_adapter_does_not_read_are_refused() {
        let (diagnostic, at) = only(
            &flow("provider \"p\" adapter=\"codex\" { command \"codex\" \"--fast\"; }"),
            Code::UnknownChild,
        );
        assert_eq!(at, "command");
        assert_eq!(
            diagnostic.message,
            "the `codex` adapter does not read `command`"
        );
        assert_eq!(
            codes(&flow(
                "provider \"p\" adapter=\"openai\" cassette=\"x.cassette\" latency=\"1s\""
            )),
            [Code::UnknownProperty, Code::UnknownProperty]
        );
        assert_eq!(
            codes(&flow(
                "provider \"p\" adapter=\"in-process\" base-url=\"http://127.0.0.1:1\""
            )),
            [Code::UnknownProperty]
        );
        assert_eq!(
            codes(&flow(
                "provider \"p\" adapter=\"acp\" base-url=\"http://127.0.0.1:1\" { command \"agent\"; }"
            )),
            []
        );
    }

    #[test]
    fn a_gemini_provider_needs_its_key_variable() {
        let (diagnostic, at) = only(
            &flow("provider \"p\" adapter=\"gemini\""),
            Code::MissingProperty,
        );
        assert_eq!(at, "provider");
        assert!(diagnostic.help.unwrap().contains("api-key-env="));
        assert_eq!(
            codes(&flow(
                "provider \"p\" adapter=\"gemini\" api-key-env=\"GEMINI_API_KEY\""
            )),
            []
        );
        // Anthropic's key has a default variable.
        assert_eq!(codes(&flow("provider \"p\" adapter=\"anthropic\"")), []);
    }

    #[test]
    fn options_and_names() {
        let (outcome, _) = resolve_text(&flow(
            "provider \"p\" adapter=\"in-process\" latency=\"5ms\" { option \"fail-calls\" 7; option \"reply\" \"fast\"; }",
        ));
        assert_eq!(outcome.diagnostics, vec![]);
        let provider = &outcome.value.unwrap().providers[0];
        assert_eq!(provider.options["fail-calls"], 7);
        assert_eq!(provider.options["latency"], "5ms");
        assert_eq!(
            codes(&flow(
                "provider \"p\" adapter=\"openai\" { option \"seed\" 1; option \"seed\" 2; }"
            )),
            [Code::DuplicateProperty]
        );
        assert_eq!(
            codes(&flow(
                "provider \"p\" adapter=\"openai\"\nprovider \"p\" adapter=\"openai\""
            )),
            [Code::DuplicateId]
        );
        assert_eq!(
            codes(&flow("provider \"end\" adapter=\"openai\"")),
            [Code::InvalidId]
        );
    }
}
