//! Keeping secrets out of recordings: the values of the variables providers read keys from,
//! and anything shaped like a well-known API key or bearer token, become `[REDACTED]`.

use std::borrow::Cow;
use std::fmt;

use serde_json::Value;

use super::env::Environment;
use crate::ir::ProviderDecl;

/// What replaces a secret.
pub const REDACTED: &str = "[REDACTED]";

/// Values shorter than this are never searched for: they are not real keys, and replacing
/// every `test` in a transcript would garble it.
const MIN_SECRET_LEN: usize = 8;

/// Prefixes of well-known key formats; a match needs 16 or more key characters after it.
const KEY_PREFIXES: &[&str] = &[
    "sk-ant-",
    "sk-proj-",
    "sk-",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "xoxb-",
    "xoxp-",
    "xoxa-",
    "glpat-",
    "AIza",
    "AKIA",
    "hf_",
    "pk-lf-",
    "sk-lf-",
];

/// The shortest text a key shape can be: the shortest prefix and 16 key characters (a
/// bearer token, `Bearer ` and 16, is longer).
const MIN_SHAPE_LEN: usize = {
    let mut shortest = usize::MAX;
    let mut at = 0;
    while at < KEY_PREFIXES.len() {
        if KEY_PREFIXES[at].len() < shortest {
            shortest = KEY_PREFIXES[at].len();
        }
        at += 1;
    }
    shortest + 16
};

/// Characters of a key or token.
fn is_key_char(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_')
}

/// Characters of a bearer token (RFC 6750 `b64token`).
fn is_token_char(byte: u8) -> bool {
    is_key_char(byte) || matches!(byte, b'.' | b'~' | b'+' | b'/' | b'=')
}

/// Replaces secrets in text. `Debug` never shows them.
#[derive(Clone, Default)]
pub struct Redactor {
    secrets: Vec<String>,
}

impl fmt::Debug for Redactor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Redactor({} secrets)", self.secrets.len())
    }
}

impl Redactor {
    /// Redacts key shapes only.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Also redacts this exact value (if at least 8 characters long).
    #[must_use]
    pub fn with_secret(mut self, value: &str) -> Self {
        if value.len() >= MIN_SECRET_LEN && !self.secrets.iter().any(|known| known == value) {
            self.secrets.push(value.to_owned());
            // Longest first, so a secret containing another is replaced whole.
            self.secrets
                .sort_by_key(|secret| std::cmp::Reverse(secret.len()));
        }
        self
    }

    /// Redacts the values of every `api-key-env=` variable of `providers`, and of every
    /// variable whose name says it holds a secret (`…KEY…`, `…TOKEN…`, `…SECRET…`,
    /// `…PASSWORD…`).
    #[must_use]
    pub fn for_workflow(env: &Environment, providers: &[ProviderDecl]) -> Self {
        let mut redactor = Self::new();
        for name in providers
            .iter()
            .filter_map(|decl| decl.api_key_env.as_ref())
        {
            if let Some(value) = env.get(&name.value) {
                redactor = redactor.with_secret(value);
            }
        }
        for (name, value) in env.iter() {
            let upper = name.to_ascii_uppercase();
            if ["KEY", "TOKEN", "SECRET", "PASSWORD"]
                .iter()
                .any(|word| upper.contains(word))
            {
                redactor = redactor.with_secret(value);
            }
        }
        redactor
    }

    /// `text` with every secret and key shape replaced.
    #[must_use]
    pub fn redact<'t>(&self, text: &'t str) -> Cow<'t, str> {
        // Most strings a store writes (keys, ids, statuses) are too short to hold anything.
        let shortest_secret = self.secrets.last().map_or(usize::MAX, String::len);
        if text.len() < MIN_SHAPE_LEN.min(shortest_secret) {
            return Cow::Borrowed(text);
        }
        let mut text = Cow::Borrowed(text);
        for secret in &self.secrets {
            if text.contains(secret.as_str()) {
                text = Cow::Owned(text.replace(secret.as_str(), REDACTED));
            }
        }
        match redact_shapes(&text) {
            Some(clean) => Cow::Owned(clean),
            None => text,
        }
    }

    /// Redacts every string (keys included) inside a JSON value.
    pub fn redact_value(&self, value: &mut Value) {
        match value {
            Value::String(text) => {
                if let Cow::Owned(clean) = self.redact(text) {
                    *text = clean;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|item| self.redact_value(item)),
            Value::Object(map) => {
                map.values_mut().for_each(|item| self.redact_value(item));
                // Keys are rebuilt only when one holds a secret (rare): rebuilding every
                // object was most of what redacting a cursor cost.
                if map
                    .keys()
                    .any(|key| matches!(self.redact(key), Cow::Owned(_)))
                {
                    let entries = std::mem::take(map);
                    for (key, item) in entries {
                        map.insert(self.redact(&key).into_owned(), item);
                    }
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }
}

/// `text` with key shapes and bearer tokens replaced, or `None` when it has none.
fn redact_shapes(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut at = 0;
    while at < bytes.len() {
        let starts_word = at == 0 || !is_key_char(bytes[at - 1]);
        let found = if starts_word && may_start_secret(bytes[at]) {
            secret_at(bytes, at)
        } else {
            None
        };
        let Some((keep, end)) = found else {
            at += 1;
            continue;
        };
        let out = out.get_or_insert_with(|| String::with_capacity(text.len()));
        out.push_str(&text[copied..at + keep]);
        out.push_str(REDACTED);
        copied = end;
        at = end;
    }
    out.map(|mut out| {
        out.push_str(&text[copied..]);
        out
    })
}

/// The first bytes of the key prefixes and of `Bearer`, built from [`KEY_PREFIXES`].
const SECRET_STARTS: [bool; 256] = {
    let mut starts = [false; 256];
    let mut at = 0;
    while at < KEY_PREFIXES.len() {
        starts[KEY_PREFIXES[at].as_bytes()[0] as usize] = true;
        at += 1;
    }
    starts[b'b' as usize] = true;
    starts[b'B' as usize] = true;
    starts
};

/// Whether a key prefix or `Bearer` can start with `byte` (most word starts cannot, and are
/// passed over without trying every prefix).
fn may_start_secret(byte: u8) -> bool {
    SECRET_STARTS[usize::from(byte)]
}

/// A secret starting at `at`: how many bytes of it to keep (`Bearer `) and where it ends.
fn secret_at(bytes: &[u8], at: usize) -> Option<(usize, usize)> {
    let rest = &bytes[at..];
    let run = |from: usize, class: fn(u8) -> bool| {
        rest[from..].iter().take_while(|byte| class(**byte)).count()
    };
    if rest.len() > 7 && rest[..7].eq_ignore_ascii_case(b"bearer ") {
        let token = run(7, is_token_char);
        return (token >= 16).then_some((7, at + 7 + token));
    }
    KEY_PREFIXES.iter().find_map(|prefix| {
        let prefix = prefix.as_bytes();
        let key = rest
            .starts_with(prefix)
            .then(|| run(prefix.len(), is_key_char))?;
        (key >= 16).then_some((0, at + prefix.len() + key))
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The length below which `redact` looks no further is a real bound: the shortest
    /// shapes, and the shortest secret, are still found.
    #[test]
    fn the_shortest_secrets_are_still_found() {
        let shortest_key = format!("hf_{}", "a".repeat(16));
        assert_eq!(shortest_key.len(), MIN_SHAPE_LEN);
        assert_eq!(Redactor::new().redact(&shortest_key), REDACTED);
        assert_eq!(
            Redactor::new().redact(&shortest_key[1..]),
            &shortest_key[1..]
        );
        let redactor = Redactor::new()
            .with_secret("hunter22")
            .with_secret("a-much-longer-secret");
        assert_eq!(redactor.redact("hunter22"), REDACTED);
        assert_eq!(
            redactor.redact("x a-much-longer-secret"),
            format!("x {REDACTED}")
        );
    }

    #[test]
    fn every_key_prefix_can_start_a_secret() {
        for prefix in KEY_PREFIXES.iter().chain(&["Bearer ", "bearer "]) {
            assert!(may_start_secret(prefix.as_bytes()[0]), "{prefix}");
        }
    }

    #[test]
    fn known_key_shapes_are_redacted() {
        let redactor = Redactor::new();
        let cases = [
            (
                "key sk-ant-api03-abcdefghijklmnopqrstuv end",
                "key [REDACTED] end",
            ),
            (
                "OPENAI=sk-proj-ABCDEFGHIJKLMNOPQRST1234",
                "OPENAI=[REDACTED]",
            ),
            (
                "token ghp_0123456789abcdefghijABCDEFGHIJ",
                "token [REDACTED]",
            ),
            (
                "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.x",
                "Authorization: Bearer [REDACTED]",
            ),
            ("aws AKIAABCDEFGHIJKLMNOP", "aws [REDACTED]"),
        ];
        for (input, expected) in cases {
            assert_eq!(redactor.redact(input), expected, "{input}");
        }
    }

    #[test]
    fn ordinary_text_is_untouched() {
        let redactor = Redactor::new();
        for text in [
            "task-list",
            "sk-short",
            "ask-me-anything-about-this",
            "a bearer of news",
            "é sk-",
        ] {
            assert!(matches!(redactor.redact(text), Cow::Borrowed(_)), "{text}");
        }
    }

    #[test]
    fn environment_secrets_are_redacted_everywhere() {
        let env = Environment::default()
            .with("MY_PROVIDER_CRED", "hunter2-correct-horse")
            .with("GITHUB_TOKEN", "plain-token-value")
            .with("SHORT_KEY", "abc")
            .with("HOME", "/home/someone");
        let mut decl = crate::providers::registry::test_decl("p", "openai");
        decl.api_key_env = Some(crate::source::Spanned::new(
            "MY_PROVIDER_CRED".into(),
            crate::source::Span::default(),
        ));
        let redactor = Redactor::for_workflow(&env, &[decl]);
        let mut value = json!({
            "prompt": "use hunter2-correct-horse and plain-token-value at /home/someone",
            "list": ["abc", {"hunter2-correct-horse": 1}]
        });
        redactor.redact_value(&mut value);
        assert_eq!(
            value,
            json!({
                "prompt": "use [REDACTED] and [REDACTED] at /home/someone",
                "list": ["abc", {"[REDACTED]": 1}]
            })
        );
        assert!(!format!("{redactor:?}").contains("hunter2"));
    }
}
