//! The languages the highlighter knows, by the names a code fence gives them.

use super::highlight::Syntax;

/// The rules for a fence language (lower-case), if known.
pub(super) fn lookup(lang: &str) -> Option<&'static Syntax> {
    Some(match lang {
        "rust" | "rs" => &RUST,
        "python" | "py" | "python3" | "py3" => &PYTHON,
        "javascript" | "js" | "jsx" | "mjs" | "cjs" | "typescript" | "ts" | "tsx" | "mts" => &JS,
        "go" | "golang" => &GO,
        "sh" | "bash" | "shell" | "zsh" | "ksh" | "console" | "shell-session" => &SH,
        "json" | "jsonc" | "json5" | "jsonl" => &JSON,
        "toml" => &TOML,
        "yaml" | "yml" => &YAML,
        "kdl" => &KDL,
        "c" | "h" | "cpp" | "c++" | "cc" | "cxx" | "hpp" | "hh" | "objc" | "cuda" => &C,
        "java" => &JAVA,
        _ => return None,
    })
}

const C_LIKE: Syntax = Syntax {
    keywords: &[],
    types: &[],
    line_comments: &["//"],
    block_comment: Some(("/*", "*/")),
    quotes: &['"', '\''],
    multiline: &[],
    triple: false,
    dashes: false,
    hash_words: false,
    lifetimes: false,
};

static RUST: Syntax = Syntax {
    keywords: &[
        "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum",
        "extern", "false", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move",
        "mut", "pub", "ref", "return", "self", "Self", "static", "struct", "super", "trait",
        "true", "type", "unsafe", "use", "where", "while", "yield",
    ],
    types: &[
        "bool", "char", "str", "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32",
        "i64", "i128", "isize", "f32", "f64",
    ],
    lifetimes: true,
    ..C_LIKE
};

static PYTHON: Syntax = Syntax {
    keywords: &[
        "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class",
        "continue", "def", "del", "elif", "else", "except", "finally", "for", "from", "global",
        "if", "import", "in", "is", "lambda", "match", "case", "nonlocal", "not", "or", "pass",
        "raise", "return", "try", "while", "with", "yield", "self",
    ],
    types: &[
        "int", "float", "str", "bool", "bytes", "list", "dict", "set", "tuple", "object",
    ],
    line_comments: &["#"],
    block_comment: None,
    triple: true,
    ..C_LIKE
};

static JS: Syntax = Syntax {
    keywords: &[
        "async",
        "await",
        "break",
        "case",
        "catch",
        "class",
        "const",
        "continue",
        "debugger",
        "default",
        "delete",
        "do",
        "else",
        "enum",
        "export",
        "extends",
        "false",
        "finally",
        "for",
        "from",
        "function",
        "if",
        "implements",
        "import",
        "in",
        "instanceof",
        "interface",
        "let",
        "new",
        "null",
        "of",
        "private",
        "protected",
        "public",
        "readonly",
        "return",
        "static",
        "super",
        "switch",
        "this",
        "throw",
        "true",
        "try",
        "type",
        "typeof",
        "undefined",
        "var",
        "void",
        "while",
        "with",
        "yield",
        "as",
    ],
    types: &[
        "string", "number", "boolean", "any", "unknown", "never", "object", "bigint",
    ],
    quotes: &['"', '\'', '`'],
    multiline: &['`'],
    ..C_LIKE
};

static GO: Syntax = Syntax {
    keywords: &[
        "break",
        "case",
        "chan",
        "const",
        "continue",
        "default",
        "defer",
        "else",
        "fallthrough",
        "for",
        "func",
        "go",
        "goto",
        "if",
        "import",
        "interface",
        "map",
        "package",
        "range",
        "return",
        "select",
        "struct",
        "switch",
        "type",
        "var",
        "true",
        "false",
        "nil",
    ],
    types: &[
        "bool", "byte", "error", "float32", "float64", "int", "int8", "int16", "int32", "int64",
        "rune", "string", "uint", "uint8", "uint16", "uint32", "uint64", "uintptr", "any",
    ],
    quotes: &['"', '\'', '`'],
    multiline: &['`'],
    ..C_LIKE
};

static SH: Syntax = Syntax {
    keywords: &[
        "if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac",
        "in", "function", "return", "local", "export", "readonly", "set", "unset", "exit",
        "source", "true", "false",
    ],
    types: &[],
    line_comments: &["#"],
    block_comment: None,
    multiline: &['"', '\''],
    dashes: true,
    ..C_LIKE
};

static JSON: Syntax = Syntax {
    keywords: &["true", "false", "null"],
    types: &[],
    quotes: &['"'],
    ..C_LIKE
};

static TOML: Syntax = Syntax {
    keywords: &["true", "false"],
    types: &[],
    line_comments: &["#"],
    block_comment: None,
    triple: true,
    dashes: true,
    ..C_LIKE
};

static YAML: Syntax = Syntax {
    keywords: &["true", "false", "null", "yes", "no", "on", "off"],
    types: &[],
    line_comments: &["#"],
    block_comment: None,
    dashes: true,
    ..C_LIKE
};

static KDL: Syntax = Syntax {
    keywords: &[
        "#true", "#false", "#null", "#inf", "#-inf", "#nan", "true", "false", "null",
    ],
    types: &[],
    quotes: &['"'],
    triple: true,
    dashes: true,
    hash_words: true,
    ..C_LIKE
};

static C: Syntax = Syntax {
    keywords: &[
        "auto",
        "break",
        "case",
        "catch",
        "class",
        "const",
        "constexpr",
        "continue",
        "default",
        "delete",
        "do",
        "else",
        "enum",
        "explicit",
        "extern",
        "false",
        "for",
        "friend",
        "goto",
        "if",
        "inline",
        "namespace",
        "new",
        "nullptr",
        "operator",
        "private",
        "protected",
        "public",
        "register",
        "return",
        "sizeof",
        "static",
        "struct",
        "switch",
        "template",
        "this",
        "throw",
        "true",
        "try",
        "typedef",
        "typename",
        "union",
        "using",
        "virtual",
        "volatile",
        "while",
        "NULL",
        "#include",
        "#define",
        "#if",
        "#ifdef",
        "#ifndef",
        "#else",
        "#elif",
        "#endif",
        "#pragma",
        "#undef",
    ],
    types: &[
        "bool", "char", "double", "float", "int", "long", "short", "signed", "unsigned", "void",
        "size_t", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t",
        "uint64_t",
    ],
    hash_words: true,
    ..C_LIKE
};

static JAVA: Syntax = Syntax {
    keywords: &[
        "abstract",
        "assert",
        "break",
        "case",
        "catch",
        "class",
        "const",
        "continue",
        "default",
        "do",
        "else",
        "enum",
        "extends",
        "final",
        "finally",
        "for",
        "if",
        "implements",
        "import",
        "instanceof",
        "interface",
        "native",
        "new",
        "package",
        "private",
        "protected",
        "public",
        "record",
        "return",
        "static",
        "super",
        "switch",
        "synchronized",
        "this",
        "throw",
        "throws",
        "try",
        "var",
        "void",
        "volatile",
        "while",
        "true",
        "false",
        "null",
    ],
    types: &[
        "boolean", "byte", "char", "double", "float", "int", "long", "short",
    ],
    triple: true,
    ..C_LIKE
};
