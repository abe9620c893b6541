//! The type of an expression, wherever its parts have known types: literals, typed inputs
//! and state fields, typed `wait` answers, operators and filters whose results have one
//! type. What cannot be known is [`Inferred::Unknown`], and nothing is reported about it:
//! the rules using this report only what can never convert.

use minijinja::machinery::{self, ast};
use serde_json::Value;

use crate::ir::{NodeKind, ValueType, Workflow, value};

/// What the checker knows of an expression's value.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Inferred {
    /// A constant: every run computes this value.
    Const(Value),
    /// A value of this type.
    Type(ValueType),
    /// Anything.
    Unknown,
}

impl Inferred {
    /// The type, when one is known.
    pub(crate) fn ty(&self) -> Option<ValueType> {
        match self {
            Self::Const(value) => type_of(value),
            Self::Type(ty) => Some(ty.clone()),
            Self::Unknown => None,
        }
    }

    /// Why a value of this kind can never become a `to`, if it never can: the conversion the
    /// runtime applies ([`value::coerce`]) judges a constant, [`value::never_fits`] a type.
    pub(crate) fn never_converts(&self, to: &ValueType) -> Option<String> {
        match self {
            Self::Const(value) => value::coerce(to, value.clone()).err(),
            Self::Type(ty) if value::never_fits(ty, to) => {
                Some(format!("{}, never {}", ty.article(), to.article()))
            }
            Self::Type(_) | Self::Unknown => None,
        }
    }

    /// How messages name it: "the string `'one more'`", "an integer".
    pub(crate) fn describe(&self) -> String {
        match self {
            Self::Const(Value::String(text)) => format!("the text `{text}`"),
            Self::Const(value) => format!("`{value}`"),
            Self::Type(ty) => ty.article().to_owned(),
            Self::Unknown => "a value".to_owned(),
        }
    }
}

/// What `source`, an expression, evaluates to as far as `workflow` says; `Unknown` when it
/// does not parse.
pub(crate) fn infer_expression(workflow: &Workflow, source: &str) -> Inferred {
    match machinery::parse_expr(source) {
        Ok(expr) => infer(workflow, &expr),
        Err(_) => Inferred::Unknown,
    }
}

fn infer(workflow: &Workflow, expr: &ast::Expr<'_>) -> Inferred {
    use Inferred::{Const, Type, Unknown};
    match expr {
        ast::Expr::Const(constant) => {
            serde_json::to_value(&constant.value).map_or(Unknown, |value| match value {
                // `none`: missing, written as such; every type takes it.
                Value::Null => Unknown,
                value => Const(value),
            })
        }
        ast::Expr::GetAttr(attr) => match &attr.expr {
            ast::Expr::Var(var) => declared(workflow, var.id, attr.name).map_or(Unknown, Type),
            _ => Unknown,
        },
        ast::Expr::List(_) | ast::Expr::Tuple(_) => Type(ValueType::Array),
        ast::Expr::Map(_) => Type(ValueType::Object),
        ast::Expr::Compare(_) | ast::Expr::Test(_) => Type(ValueType::Boolean),
        ast::Expr::UnaryOp(op) => match op.op {
            ast::UnaryOpKind::Not => Type(ValueType::Boolean),
            ast::UnaryOpKind::Neg => signed(infer(workflow, &op.expr).ty()),
        },
        ast::Expr::BinOp(op) => binary(workflow, op),
        ast::Expr::IfExpr(branches) => {
            let Some(otherwise) = &branches.false_expr else {
                // Without `else` the value may be undefined.
                return Unknown;
            };
            match (
                infer(workflow, &branches.true_expr).ty(),
                infer(workflow, otherwise).ty(),
            ) {
                (Some(left), Some(right)) if left == right => Type(left),
                _ => Unknown,
            }
        }
        ast::Expr::Filter(filter) => filtered(workflow, filter),
        ast::Expr::Call(call) => match &call.expr {
            ast::Expr::Var(var) if var.id == "range" => Type(ValueType::Array),
            _ => Unknown,
        },
        _ => Unknown,
    }
}

/// The declared type of `root.member`: a typed input or state field, or a typed answer.
fn declared(workflow: &Workflow, root: &str, member: &str) -> Option<ValueType> {
    let ty = match root {
        "input" => workflow.input(member)?.ty.clone(),
        "state" => workflow.field(member)?.ty.clone(),
        "outputs" => {
            let node = workflow.node(workflow.find_node(member)?);
            match &node.kind {
                NodeKind::Wait(wait) => value::answer_value_type(&wait.answer)?,
                _ => return None,
            }
        }
        _ => return None,
    };
    // `any` and schemas say nothing a rule could use.
    (!matches!(ty, ValueType::Any | ValueType::Schema(_))).then_some(ty)
}

fn binary(workflow: &Workflow, op: &ast::BinOp<'_>) -> Inferred {
    use ast::BinOpKind as K;
    let left = || infer(workflow, &op.left).ty();
    let right = || infer(workflow, &op.right).ty();
    match op.op {
        K::Eq | K::Ne | K::Lt | K::Lte | K::Gt | K::Gte | K::In => {
            Inferred::Type(ValueType::Boolean)
        }
        K::Concat => Inferred::Type(ValueType::String),
        K::Div => match numeric(left(), right()) {
            Inferred::Type(_) => Inferred::Type(ValueType::Number),
            other => other,
        },
        K::Add | K::Sub | K::Mul | K::FloorDiv | K::Rem | K::Pow => numeric(left(), right()),
        // `a and b` is one of its operands.
        K::ScAnd | K::ScOr => match (left(), right()) {
            (Some(left), Some(right)) if left == right => Inferred::Type(left),
            _ => Inferred::Unknown,
        },
    }
}

/// Arithmetic on numbers: an integer when both are, a number otherwise; unknown when an
/// operand is not known to be a number (`+` also joins strings and lists).
fn numeric(left: Option<ValueType>, right: Option<ValueType>) -> Inferred {
    match (left, right) {
        (Some(ValueType::Integer), Some(ValueType::Integer)) => Inferred::Type(ValueType::Integer),
        (
            Some(ValueType::Integer | ValueType::Number),
            Some(ValueType::Integer | ValueType::Number),
        ) => Inferred::Type(ValueType::Number),
        _ => Inferred::Unknown,
    }
}

/// `-x` and `x | abs`: the number's own type.
fn signed(operand: Option<ValueType>) -> Inferred {
    match operand {
        Some(ty @ (ValueType::Integer | ValueType::Number)) => Inferred::Type(ty),
        _ => Inferred::Unknown,
    }
}

/// Filters whose result has one type whatever they are given.
fn filtered(workflow: &Workflow, filter: &ast::Filter<'_>) -> Inferred {
    let ty = match filter.name {
        "length" | "count" | "int" | "wordcount" => ValueType::Integer,
        "float" | "round" => ValueType::Number,
        "bool" => ValueType::Boolean,
        "string" | "upper" | "lower" | "title" | "capitalize" | "trim" | "join" | "replace"
        | "tojson" | "urlencode" | "escape" | "e" | "safe" | "indent" | "format" => {
            ValueType::String
        }
        "list" | "sort" | "split" | "lines" | "items" | "unique" | "dictsort" | "map"
        | "select" | "reject" | "selectattr" | "rejectattr" | "batch" | "slice" => ValueType::Array,
        "abs" => {
            return filter
                .expr
                .as_ref()
                .map_or(Inferred::Unknown, |expr| signed(infer(workflow, expr).ty()));
        }
        _ => return Inferred::Unknown,
    };
    Inferred::Type(ty)
}

/// The type of a JSON value.
fn type_of(value: &Value) -> Option<ValueType> {
    Some(match value {
        Value::Null => return None,
        Value::Bool(_) => ValueType::Boolean,
        Value::Number(number) if number.is_f64() => ValueType::Number,
        Value::Number(_) => ValueType::Integer,
        Value::String(_) => ValueType::String,
        Value::Array(_) => ValueType::Array,
        Value::Object(_) => ValueType::Object,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::analyze::testing::Builder;
    use crate::ir::AnswerType;
    use serde_json::json;

    fn workflow() -> Workflow {
        let mut b = Builder::new();
        b.input("count", ValueType::Integer, None);
        b.input("name", ValueType::String, None);
        b.field("ratio", ValueType::Number, None);
        b.field("notes", ValueType::Any, None);
        b.wait("ok", AnswerType::YesNo, None);
        b.finish()
    }

    #[test]
    fn types_of_expressions() {
        let workflow = workflow();
        let infer = |source: &str| infer_expression(&workflow, source);
        assert_eq!(infer("'one more'"), Inferred::Const(json!("one more")));
        assert_eq!(infer("3"), Inferred::Const(json!(3)));
        assert_eq!(infer("input.count"), Inferred::Type(ValueType::Integer));
        assert_eq!(infer("input.count + 1"), Inferred::Type(ValueType::Integer));
        assert_eq!(infer("input.count / 2"), Inferred::Type(ValueType::Number));
        assert_eq!(infer("state.ratio * 2"), Inferred::Type(ValueType::Number));
        assert_eq!(infer("-input.count"), Inferred::Type(ValueType::Integer));
        assert_eq!(infer("input.name ~ '!'"), Inferred::Type(ValueType::String));
        assert_eq!(infer("input.count > 2"), Inferred::Type(ValueType::Boolean));
        assert_eq!(infer("not input.name"), Inferred::Type(ValueType::Boolean));
        assert_eq!(
            infer("input.name | length"),
            Inferred::Type(ValueType::Integer)
        );
        assert_eq!(
            infer("input.name | upper"),
            Inferred::Type(ValueType::String)
        );
        assert_eq!(infer("[1, 2]"), Inferred::Type(ValueType::Array));
        assert_eq!(infer("outputs.ok"), Inferred::Type(ValueType::Boolean));
        assert_eq!(
            infer("1 if input.count else 2"),
            Inferred::Type(ValueType::Integer)
        );
        // What cannot be known is not guessed.
        assert_eq!(infer("state.notes"), Inferred::Unknown);
        assert_eq!(infer("input.name + 1"), Inferred::Unknown);
        assert_eq!(infer("input.count + state.notes"), Inferred::Unknown);
        assert_eq!(infer("1 if input.count"), Inferred::Unknown);
        assert_eq!(infer("input.name | default(3)"), Inferred::Unknown);
        assert_eq!(infer("none"), Inferred::Unknown);
        assert_eq!(infer("(("), Inferred::Unknown);
    }

    #[test]
    fn what_never_converts() {
        let workflow = workflow();
        let infer = |source: &str| infer_expression(&workflow, source);
        assert!(
            infer("'one more'")
                .never_converts(&ValueType::Integer)
                .is_some()
        );
        assert!(infer("'12'").never_converts(&ValueType::Integer).is_none());
        assert!(
            infer("input.count > 1")
                .never_converts(&ValueType::Integer)
                .is_some()
        );
        assert!(
            infer("input.count")
                .never_converts(&ValueType::Number)
                .is_none()
        );
        assert!(
            infer("input.name")
                .never_converts(&ValueType::Integer)
                .is_none()
        );
        assert!(infer("[1]").never_converts(&ValueType::Object).is_some());
    }
}
