//! What counts as a name. Node ids may contain `-` (`fix-until-clean`), read in templates
//! as `outputs["fix-until-clean"]`; state fields, inputs and environment variables are read
//! as `state.<name>`, so they are plain identifiers.

/// `[A-Za-z_][A-Za-z0-9_-]*`: node ids, provider and branch names.
pub(crate) fn is_node_id(text: &str) -> bool {
    let mut bytes = text.bytes();
    bytes
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == b'_')
        && bytes.all(|byte| byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-')
}

/// `[A-Za-z_][A-Za-z0-9_]*`: state fields, inputs, environment variables, `as=` names.
pub(crate) fn is_name(text: &str) -> bool {
    let mut bytes = text.bytes();
    bytes
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == b'_')
        && bytes.all(|byte| byte.is_ascii_alphanumeric() || byte == b'_')
}

/// The names every template sees at its root (`state.…`, `input.…`).
pub(crate) const TEMPLATE_ROOTS: &[&str] = &["input", "state", "outputs", "run", "env"];

/// Why `name` cannot name a for-each item or a task (`as=`): it would hide a name every
/// template reads, or the built-in `index`, from the body. `None`: it can.
pub(crate) fn hidden_by_as(name: &str) -> Option<String> {
    if name == "index" {
        return Some(
            "`index` is the built-in position of the item in the body: pick another name"
                .to_owned(),
        );
    }
    TEMPLATE_ROOTS.contains(&name).then(|| {
        format!("every template reads `{name}.…`: named so, the item would hide it from the body; pick another name")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_names() {
        assert!(is_node_id("fix-until-clean"));
        assert!(is_node_id("_x1"));
        assert!(!is_node_id("1st"));
        assert!(!is_node_id("a b"));
        assert!(!is_node_id(""));
        assert!(is_name("test_logs"));
        assert!(!is_name("test-logs"));
        assert!(!is_name("état"));
    }
}
