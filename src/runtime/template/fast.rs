//! A shortcut for the commonest expressions: a name path (`item`, `state.n`), alone or
//! against an integer literal (`state.n + 1`, `state.n >= 10000`).
//!
//! Why: minijinja's evaluator costs about 2,500 instructions per call (a VM state, a frame,
//! a captured output), several times a whole step's budget; these expressions are most of
//! what loops and `set`s evaluate. The shortcut answers only where its answer is certainly
//! minijinja's: every name resolves to a defined value and the arithmetic is on integers
//! that do not overflow. Anything else (an undefined name, a string, a float, an overflow)
//! returns `None`, and the caller asks minijinja, so errors and edge cases stay its own.

use minijinja::Value;

use super::scope::ScopeSource;

/// What an expression does with its path's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Add,
    Sub,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// A parsed shortcut expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Fast {
    /// The variable and its attributes, in order (`state`, `n`).
    path: Box<[Box<str>]>,
    /// The operator and its integer operand, if any.
    op: Option<(Op, i64)>,
}

/// Names minijinja treats as literals or operators, never as variables.
const KEYWORDS: &[&str] = &[
    "true", "false", "none", "True", "False", "None", "and", "or", "not", "in", "is", "if", "else",
];

impl Fast {
    /// The shortcut form of `expr`, if it has one.
    pub(super) fn parse(expr: &str) -> Option<Self> {
        let expr = expr.trim();
        let path_end = expr
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
            .unwrap_or(expr.len());
        let path: Box<[Box<str>]> = expr[..path_end].split('.').map(Box::from).collect();
        if !path.iter().all(|name| is_name(name)) {
            return None;
        }
        let rest = expr[path_end..].trim_start();
        if rest.is_empty() {
            return Some(Self { path, op: None });
        }
        let (op, operand) = [
            (">=", Op::Ge),
            ("<=", Op::Le),
            ("==", Op::Eq),
            ("!=", Op::Ne),
            (">", Op::Gt),
            ("<", Op::Lt),
            ("+", Op::Add),
            ("-", Op::Sub),
        ]
        .into_iter()
        .find_map(|(text, op)| Some((op, rest.strip_prefix(text)?)))?;
        let operand = operand.trim_start();
        // Plain decimal digits only: no sign, underscores or leading zeros to interpret.
        let plain = !operand.is_empty()
            && operand.bytes().all(|b| b.is_ascii_digit())
            && (operand == "0" || !operand.starts_with('0'));
        if !plain {
            return None;
        }
        let operand: i64 = operand.parse().ok()?;
        Some(Self {
            path,
            op: Some((op, operand)),
        })
    }

    /// The value, when it is certainly what minijinja would compute; `None` otherwise.
    pub(super) fn eval(&self, scope: &(impl ScopeSource + ?Sized)) -> Option<Value> {
        let Some((op, operand)) = self.op else {
            return self.lookup(scope);
        };
        let left = match self.state_integer(scope) {
            Some(left) => left,
            None => {
                let value = self.lookup(scope)?;
                if !value.is_integer() {
                    return None;
                }
                value.as_i64()?
            }
        };
        Some(match op {
            Op::Add => Value::from(left.checked_add(operand)?),
            Op::Sub => Value::from(left.checked_sub(operand)?),
            Op::Eq => Value::from(left == operand),
            Op::Ne => Value::from(left != operand),
            Op::Lt => Value::from(left < operand),
            Op::Le => Value::from(left <= operand),
            Op::Gt => Value::from(left > operand),
            Op::Ge => Value::from(left >= operand),
        })
    }

    /// The path's value, read through the template objects.
    fn lookup(&self, scope: &(impl ScopeSource + ?Sized)) -> Option<Value> {
        let mut value = scope.value().clone();
        for name in &self.path {
            value = value.get_attr(name).ok()?;
            if value.is_undefined() {
                return None;
            }
        }
        Some(value)
    }

    /// `state.<field>` as an integer, read straight from the run's state: the commonest
    /// operand (loop counters), without the template objects a lookup goes through
    /// (minijinja sees a JSON integer as the same `i64`). `None` for anything else.
    fn state_integer(&self, scope: &(impl ScopeSource + ?Sized)) -> Option<i64> {
        let [variable, field] = &*self.path else {
            return None;
        };
        if &**variable != "state" {
            return None;
        }
        let scope = scope.run_scope()?;
        if scope
            .locals
            .as_ref()
            .is_some_and(|locals| locals.iter().any(|(name, _)| &**name == "state"))
        {
            return None;
        }
        scope.state.get_by_name(field)?.as_i64()
    }
}

/// An identifier that is a variable (or attribute) name to minijinja.
fn is_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !KEYWORDS.contains(&name)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use minijinja::{Environment, UndefinedBehavior, context};
    use serde_json::json;

    use super::*;
    use crate::ir::{Reducer, ValueType};
    use crate::runtime::state::{FieldSpec, State, StateSchema};
    use crate::runtime::template::{Locals, RunInfo, Scope};

    #[test]
    fn parses_only_the_simple_forms() {
        for simple in [
            "item",
            " state.n + 1 ",
            "state.n>=10000",
            "a.b_2.c - 0",
            "x != 3",
            "_x == 12",
        ] {
            assert!(Fast::parse(simple).is_some(), "{simple}");
        }
        for other in [
            "",
            "true",
            "state.n + 1.5",
            "state.n + -1",
            "state.n + 01",
            "state.n + 1_000",
            "state.n * 2",
            "state.n + 1 + 1",
            "state.items | length",
            "state['n']",
            "state.n >= 99999999999999999999",
            "a..b",
            "1 + state.n",
            "not x",
            "x is defined",
        ] {
            assert!(Fast::parse(other).is_none(), "{other}");
        }
    }

    /// The shortcut agrees with minijinja wherever it answers.
    #[test]
    fn agrees_with_minijinja() {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::SemiStrict);
        let values = [
            Value::from(0),
            Value::from(9999),
            Value::from(10000),
            Value::from(-5),
            Value::from(i64::MAX),
            Value::from(u64::MAX),
            Value::from(1.5),
            Value::from(2.0),
            Value::from("7"),
            Value::from(true),
            Value::from(()),
            Value::from(vec![1, 2]),
            Value::UNDEFINED,
        ];
        let exprs = [
            "state.n",
            "state.n + 1",
            "state.n - 1",
            "state.n >= 10000",
            "state.n > 0",
            "state.n < 0",
            "state.n <= 9999",
            "state.n == 10000",
            "state.n != 0",
            "state.missing",
            "nothing + 1",
        ];
        let mut answered = 0;
        for value in &values {
            let scope = context! { state => context! { n => value.clone() } };
            for expr in exprs {
                let fast = Fast::parse(expr).expect("a simple form");
                let Some(got) = fast.eval(&scope) else {
                    continue;
                };
                answered += 1;
                let want = env
                    .compile_expression(expr)
                    .unwrap()
                    .eval(scope.clone())
                    .unwrap();
                assert_eq!(got, want, "{expr} with state.n = {value:?}");
                assert_eq!(got.kind(), want.kind(), "{expr} with state.n = {value:?}");
            }
        }
        assert!(answered > 30, "the shortcut answered only {answered} times");
    }

    /// Over the run's own scope, where `state.<field>` is read straight from the state,
    /// the shortcut still agrees with minijinja, and a local named `state` hides it.
    #[test]
    fn reads_state_as_minijinja_does() {
        let values = [
            json!(0),
            json!(9999),
            json!(10000),
            json!(-5),
            json!(i64::MAX),
            json!(u64::MAX),
            json!(1.5),
            json!(2.0),
            json!("7"),
            json!(true),
            json!(null),
            json!([1, 2]),
        ];
        let mut schema = StateSchema::default();
        for (i, value) in values.iter().enumerate() {
            schema.push(spec(&format!("f{i}"), Some(value.clone())));
        }
        schema.push(spec("unset", None));
        let schema = Arc::new(schema);
        let scope = |locals: Option<Locals>| {
            Scope {
                input: Value::UNDEFINED,
                env: Value::UNDEFINED,
                state: Arc::new(State::new(Arc::clone(&schema))),
                outputs: Arc::default(),
                run: RunInfo {
                    id: Arc::from("r1"),
                    step: 1,
                    iteration: 0,
                },
                locals,
            }
            .into_value()
        };
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::SemiStrict);
        let plain = scope(None);
        let mut answered = 0;
        let names = (0..values.len())
            .map(|i| format!("f{i}"))
            .chain(["unset".into()]);
        for name in names {
            for op in ["+ 1", "- 1", ">= 10000", "< 0", "== 9999", "!= 0"] {
                let expr = format!("state.{name} {op}");
                let Some(got) = Fast::parse(&expr).unwrap().eval(&plain) else {
                    continue;
                };
                answered += 1;
                let want = env.compile_expression(&expr).unwrap().eval(&plain).unwrap();
                assert_eq!(got, want, "{expr}");
                assert_eq!(got.kind(), want.kind(), "{expr}");
            }
        }
        // Five integers fit an i64 (u64::MAX does not), six operators each, but for
        // `i64::MAX + 1`, which overflows.
        assert_eq!(answered, 29);
        let shadowed = scope(Some(Arc::new(vec![(
            Arc::from("state"),
            context! { f0 => 41 },
        )])));
        let fast = Fast::parse("state.f0 + 1").unwrap();
        assert_eq!(fast.eval(&shadowed), Some(Value::from(42)));
        assert_eq!(fast.eval(&plain), Some(Value::from(1)));
        assert_eq!(
            fast.state_integer(&plain),
            Some(0),
            "read straight from the state"
        );
        assert_eq!(fast.state_integer(&shadowed), None);
    }

    fn spec(name: &str, default: Option<serde_json::Value>) -> FieldSpec {
        FieldSpec {
            name: Arc::from(name),
            ty: ValueType::Any,
            default,
            reducer: Reducer::Replace,
            max_items: None,
        }
    }
}
