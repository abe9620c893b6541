//! Which filters and tests templates may use: minijinja's built-in ones, plus those the
//! runtime adds ([`ADDED_FILTERS`], registered by `runtime::template` from this list). The
//! checker asks minijinja itself (`'name' is filter`), so its answer cannot drift from the
//! minijinja the runtime renders with; a runtime test holds the added list to the engine.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// Filters the runtime adds to minijinja's own.
pub const ADDED_FILTERS: &[&str] = &["fromjson"];

/// A filter or a test.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Callee {
    /// `x | name`.
    Filter,
    /// `x is name`.
    Test,
}

/// Whether templates may use the filter or test `name`.
pub fn is_known(callee: Callee, name: &str) -> bool {
    if callee == Callee::Filter && ADDED_FILTERS.contains(&name) {
        return true;
    }
    static ANSWERS: OnceLock<Mutex<HashMap<(Callee, String), bool>>> = OnceLock::new();
    let answers = ANSWERS.get_or_init(Mutex::default);
    let key = (callee, name.to_owned());
    if let Some(known) = answers.lock().ok().and_then(|map| map.get(&key).copied()) {
        return known;
    }
    let known = ask_minijinja(callee, name);
    if let Ok(mut map) = answers.lock() {
        map.insert(key, known);
    }
    known
}

fn ask_minijinja(callee: Callee, name: &str) -> bool {
    let env = minijinja::Environment::new();
    let test = match callee {
        Callee::Filter => "name is filter",
        Callee::Test => "name is test",
    };
    env.compile_expression(test)
        .and_then(|expr| expr.eval(minijinja::context! { name => name }))
        .is_ok_and(|value| value.is_true())
}

/// minijinja's built-in filters and tests, for "did you mean" suggestions only (whether a
/// name exists is always asked of minijinja).
pub const SUGGESTIONS: &[&str] = &[
    "abs",
    "attr",
    "batch",
    "bool",
    "capitalize",
    "chain",
    "count",
    "d",
    "default",
    "dictsort",
    "e",
    "escape",
    "first",
    "float",
    "format",
    "fromjson",
    "indent",
    "int",
    "items",
    "join",
    "last",
    "length",
    "lines",
    "list",
    "lower",
    "map",
    "max",
    "min",
    "pprint",
    "reject",
    "rejectattr",
    "replace",
    "reverse",
    "round",
    "safe",
    "select",
    "selectattr",
    "slice",
    "sort",
    "split",
    "string",
    "sum",
    "title",
    "tojson",
    "trim",
    "unique",
    "upper",
    "urlencode",
    "zip",
    "defined",
    "undefined",
    "none",
    "boolean",
    "odd",
    "even",
    "divisibleby",
    "number",
    "integer",
    "sequence",
    "iterable",
    "mapping",
    "startingwith",
    "endingwith",
    "containing",
    "sameas",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "in",
    "true",
    "false",
    "filter",
    "test",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asks_minijinja_and_knows_the_added_filters() {
        assert!(is_known(Callee::Filter, "tojson"));
        assert!(is_known(Callee::Filter, "length"));
        assert!(is_known(Callee::Filter, "fromjson"));
        assert!(!is_known(Callee::Filter, "shout"));
        assert!(is_known(Callee::Test, "defined"));
        assert!(!is_known(Callee::Test, "shouty"));
        assert!(
            !is_known(Callee::Test, "fromjson"),
            "a filter is not a test"
        );
    }
}
