//! What a secret looks like: the shapes of API keys and tokens of the common providers,
//! found in any text (templates, values, properties the grammar does not know).

/// A credential shape: prefix, the characters its body may use, the shortest body.
struct Shape {
    prefix: &'static str,
    body: fn(u8) -> bool,
    min_body: usize,
    kind: &'static str,
}

fn key_char(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_'
}

fn alnum(byte: u8) -> bool {
    byte.is_ascii_alphanumeric()
}

fn github_pat_char(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_'
}

fn upper_alnum(byte: u8) -> bool {
    byte.is_ascii_uppercase() || byte.is_ascii_digit()
}

/// Known shapes, most specific first (`sk-ant-` before `sk-`).
const SHAPES: &[Shape] = &[
    Shape {
        prefix: "sk-ant-",
        body: key_char,
        min_body: 20,
        kind: "an Anthropic API key",
    },
    Shape {
        prefix: "sk-",
        body: key_char,
        min_body: 20,
        kind: "an OpenAI API key",
    },
    Shape {
        prefix: "github_pat_",
        body: github_pat_char,
        min_body: 22,
        kind: "a GitHub token",
    },
    Shape {
        prefix: "ghp_",
        body: alnum,
        min_body: 30,
        kind: "a GitHub token",
    },
    Shape {
        prefix: "gho_",
        body: alnum,
        min_body: 30,
        kind: "a GitHub token",
    },
    Shape {
        prefix: "ghu_",
        body: alnum,
        min_body: 30,
        kind: "a GitHub token",
    },
    Shape {
        prefix: "ghs_",
        body: alnum,
        min_body: 30,
        kind: "a GitHub token",
    },
    Shape {
        prefix: "ghr_",
        body: alnum,
        min_body: 30,
        kind: "a GitHub token",
    },
    Shape {
        prefix: "AKIA",
        body: upper_alnum,
        min_body: 16,
        kind: "an AWS access key id",
    },
    Shape {
        prefix: "xoxb-",
        body: key_char,
        min_body: 10,
        kind: "a Slack token",
    },
    Shape {
        prefix: "xoxp-",
        body: key_char,
        min_body: 10,
        kind: "a Slack token",
    },
    Shape {
        prefix: "xoxa-",
        body: key_char,
        min_body: 10,
        kind: "a Slack token",
    },
    Shape {
        prefix: "xoxs-",
        body: key_char,
        min_body: 10,
        kind: "a Slack token",
    },
    Shape {
        prefix: "xoxo-",
        body: key_char,
        min_body: 10,
        kind: "a Slack token",
    },
];

/// Byte ranges of secret-looking substrings of `text` and what each looks like.
pub(crate) fn find_secrets(text: &str) -> Vec<(std::ops::Range<usize>, &'static str)> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let boundary = at == 0 || !key_char(bytes[at - 1]);
        let shape = boundary
            .then(|| {
                SHAPES
                    .iter()
                    .find(|shape| bytes[at..].starts_with(shape.prefix.as_bytes()))
            })
            .flatten();
        if let Some(shape) = shape {
            let body_start = at + shape.prefix.len();
            let mut end = body_start;
            while end < bytes.len() && (shape.body)(bytes[end]) {
                end += 1;
            }
            let has_digit = bytes[body_start..end].iter().any(u8::is_ascii_digit);
            if end - body_start >= shape.min_body && has_digit {
                found.push((at..end, shape.kind));
                at = end;
                continue;
            }
        }
        at += 1;
    }
    found
}
