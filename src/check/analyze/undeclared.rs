//! The variable paths a parsed template or expression reads.
//!
//! This is minijinja's own `undeclared_variables(true)` (`compiler/meta.rs`, 3.1), ported to
//! walk an AST we parsed ourselves: minijinja's version re-parses the source, so checking a
//! template (compile it for the syntax error, then list its variables) parsed it twice, and
//! compiled it to bytecode nobody ran. Parsing once here roughly halves the cost of the
//! analysis pass. The port keeps minijinja's rules exactly (including its quirks), and
//! `tests::matches_minijinja` compares both on every kind of statement and expression.
//! The AST is minijinja's `unstable_machinery`: a minijinja upgrade that changes it fails to
//! compile here rather than silently diverging.

use std::collections::HashSet;
use std::ops::Range;

use minijinja::machinery::ast;

use crate::check::template_env::Callee;

/// Which names are bound in each open scope, and the paths found so far.
struct Tracker<'a> {
    assigned: Vec<HashSet<&'a str>>,
    out: HashSet<String>,
    /// The filters and tests used, with the byte range of the expression applying them.
    callees: Vec<(Callee, &'a str, Range<usize>)>,
}

impl<'a> Tracker<'a> {
    fn is_assigned(&self, name: &str) -> bool {
        self.assigned.iter().any(|scope| scope.contains(name))
    }

    fn assign(&mut self, name: &'a str) {
        if let Some(scope) = self.assigned.last_mut() {
            scope.insert(name);
        }
    }

    fn push(&mut self) {
        self.assigned.push(HashSet::new());
    }

    fn pop(&mut self) {
        self.assigned.pop();
    }
}

fn tracker<'a>() -> Tracker<'a> {
    Tracker {
        assigned: vec![HashSet::new()],
        out: HashSet::new(),
        callees: Vec::new(),
    }
}

/// Every path `template` reads: what `Template::undeclared_variables(true)` returns.
pub(super) fn in_template(template: &ast::Stmt<'_>) -> HashSet<String> {
    let mut tracker = tracker();
    walk(template, &mut tracker);
    tracker.out
}

/// Every path `expr` reads: what `Expression::undeclared_variables(true)` returns.
pub(super) fn in_expression(expr: &ast::Expr<'_>) -> HashSet<String> {
    let mut tracker = tracker();
    visit_expr(expr, &mut tracker);
    tracker.out
}

/// Every filter and test `template` uses, with the byte range of the expression using it.
pub(super) fn callees_in_template<'a>(
    template: &ast::Stmt<'a>,
) -> Vec<(Callee, &'a str, Range<usize>)> {
    let mut tracker = tracker();
    walk(template, &mut tracker);
    tracker.callees
}

/// Every filter and test `expr` uses.
pub(super) fn callees_in_expression<'a>(
    expr: &ast::Expr<'a>,
) -> Vec<(Callee, &'a str, Range<usize>)> {
    let mut tracker = tracker();
    visit_expr(expr, &mut tracker);
    tracker.callees
}

fn range(span: minijinja::machinery::Span) -> Range<usize> {
    span.start_offset as usize..span.end_offset as usize
}

fn visit_opt<'a>(expr: Option<&ast::Expr<'a>>, state: &mut Tracker<'a>) {
    if let Some(expr) = expr {
        visit_expr(expr, state);
    }
}

fn visit_macro<'a>(m: &ast::Macro<'a>, state: &mut Tracker<'a>) {
    // minijinja assumes `caller` is there: it cannot tell whether the macro is only ever
    // used from a call block.
    state.assign("caller");
    m.args.iter().for_each(|arg| assign(arg, state));
    m.defaults.iter().for_each(|expr| visit_expr(expr, state));
    m.body.iter().for_each(|node| walk(node, state));
}

fn visit_arg<'a>(arg: &ast::CallArg<'a>, state: &mut Tracker<'a>) {
    match arg {
        ast::CallArg::Pos(expr)
        | ast::CallArg::Kwarg(_, expr)
        | ast::CallArg::PosSplat(expr)
        | ast::CallArg::KwargSplat(expr) => visit_expr(expr, state),
    }
}

fn visit_expr<'a>(expr: &ast::Expr<'a>, state: &mut Tracker<'a>) {
    match expr {
        ast::Expr::Var(var) => {
            if !state.is_assigned(var.id) {
                state.out.insert(var.id.to_owned());
            }
        }
        ast::Expr::Const(_) => {}
        ast::Expr::UnaryOp(expr) => visit_expr(&expr.expr, state),
        ast::Expr::BinOp(expr) => {
            visit_expr(&expr.left, state);
            visit_expr(&expr.right, state);
        }
        ast::Expr::Compare(expr) => {
            visit_expr(&expr.expr, state);
            expr.ops.iter().for_each(|op| visit_expr(&op.expr, state));
        }
        ast::Expr::IfExpr(expr) => {
            visit_expr(&expr.test_expr, state);
            visit_expr(&expr.true_expr, state);
            visit_opt(expr.false_expr.as_ref(), state);
        }
        ast::Expr::Filter(expr) => {
            state
                .callees
                .push((Callee::Filter, expr.name, range(expr.span())));
            visit_opt(expr.expr.as_ref(), state);
            expr.args.iter().for_each(|arg| visit_arg(arg, state));
        }
        ast::Expr::Test(expr) => {
            state
                .callees
                .push((Callee::Test, expr.name, range(expr.span())));
            visit_expr(&expr.expr, state);
            expr.args.iter().for_each(|arg| visit_arg(arg, state));
        }
        ast::Expr::GetAttr(attr) => {
            // A chain of attribute lookups ending in an unbound variable is one path.
            let mut names = vec![attr.name];
            let mut inner = &attr.expr;
            loop {
                match inner {
                    ast::Expr::Var(var) => {
                        if state.is_assigned(var.id) {
                            break;
                        }
                        let mut path = var.id.to_owned();
                        for name in names.iter().rev() {
                            path.push('.');
                            path.push_str(name);
                        }
                        state.out.insert(path);
                        return;
                    }
                    ast::Expr::GetAttr(attr) => {
                        names.push(attr.name);
                        inner = &attr.expr;
                    }
                    _ => break,
                }
            }
            visit_expr(&attr.expr, state);
        }
        ast::Expr::GetItem(expr) => {
            visit_expr(&expr.expr, state);
            visit_expr(&expr.subscript_expr, state);
        }
        ast::Expr::Slice(slice) => {
            visit_opt(slice.start.as_ref(), state);
            visit_opt(slice.stop.as_ref(), state);
            visit_opt(slice.step.as_ref(), state);
        }
        ast::Expr::Call(expr) => {
            visit_expr(&expr.expr, state);
            expr.args.iter().for_each(|arg| visit_arg(arg, state));
        }
        ast::Expr::List(expr) => expr.items.iter().for_each(|x| visit_expr(x, state)),
        ast::Expr::Tuple(expr) => expr.items.iter().for_each(|x| visit_expr(x, state)),
        ast::Expr::Map(expr) => expr.keys.iter().zip(expr.values.iter()).for_each(|(k, v)| {
            visit_expr(k, state);
            visit_expr(v, state);
        }),
    }
}

fn assign<'a>(expr: &ast::Expr<'a>, state: &mut Tracker<'a>) {
    match expr {
        ast::Expr::Var(var) => state.assign(var.id),
        ast::Expr::List(list) => list.items.iter().for_each(|x| assign(x, state)),
        ast::Expr::Tuple(tuple) => tuple.items.iter().for_each(|x| assign(x, state)),
        _ => {}
    }
}

fn walk_scoped<'a>(body: &[ast::Stmt<'a>], state: &mut Tracker<'a>) {
    state.push();
    body.iter().for_each(|x| walk(x, state));
    state.pop();
}

fn walk<'a>(node: &ast::Stmt<'a>, state: &mut Tracker<'a>) {
    match node {
        ast::Stmt::Template(stmt) => {
            state.assign("self");
            stmt.children.iter().for_each(|x| walk(x, state));
        }
        ast::Stmt::EmitExpr(expr) => visit_expr(&expr.expr, state),
        ast::Stmt::EmitRaw(_) | ast::Stmt::Extends(_) | ast::Stmt::Include(_) => {}
        ast::Stmt::ForLoop(stmt) => {
            state.push();
            state.assign("loop");
            visit_expr(&stmt.iter, state);
            assign(&stmt.target, state);
            visit_opt(stmt.filter_expr.as_ref(), state);
            stmt.body.iter().for_each(|x| walk(x, state));
            state.pop();
            walk_scoped(&stmt.else_body, state);
        }
        ast::Stmt::IfCond(stmt) => {
            visit_expr(&stmt.expr, state);
            walk_scoped(&stmt.true_body, state);
            walk_scoped(&stmt.false_body, state);
        }
        ast::Stmt::WithBlock(stmt) => {
            state.push();
            for (target, expr) in &stmt.assignments {
                assign(target, state);
                visit_expr(expr, state);
            }
            stmt.body.iter().for_each(|x| walk(x, state));
            state.pop();
        }
        ast::Stmt::Set(stmt) => {
            assign(&stmt.target, state);
            visit_expr(&stmt.expr, state);
        }
        ast::Stmt::AutoEscape(stmt) => walk_scoped(&stmt.body, state),
        ast::Stmt::FilterBlock(stmt) => walk_scoped(&stmt.body, state),
        ast::Stmt::SetBlock(stmt) => {
            assign(&stmt.target, state);
            walk_scoped(&stmt.body, state);
        }
        ast::Stmt::Block(stmt) => {
            state.push();
            state.assign("super");
            stmt.body.iter().for_each(|x| walk(x, state));
            state.pop();
        }
        ast::Stmt::Import(stmt) => assign(&stmt.name, state),
        ast::Stmt::FromImport(stmt) => stmt.names.iter().for_each(|(name, alias)| {
            assign(alias.as_ref().unwrap_or(name), state);
        }),
        ast::Stmt::Macro(stmt) => {
            state.assign(stmt.name);
            state.push();
            visit_macro(stmt, state);
            state.pop();
        }
        ast::Stmt::CallBlock(stmt) => {
            visit_expr(&stmt.call.expr, state);
            stmt.call.args.iter().for_each(|arg| visit_arg(arg, state));
            state.push();
            visit_macro(&stmt.macro_decl, state);
            state.pop();
        }
        ast::Stmt::Do(stmt) => {
            visit_expr(&stmt.call.expr, state);
            stmt.call.args.iter().for_each(|arg| visit_arg(arg, state));
        }
    }
}

#[cfg(test)]
mod tests {
    use minijinja::Environment;
    use minijinja::machinery::{parse, parse_expr};
    use minijinja::syntax::SyntaxConfig;

    use super::{in_expression, in_template};

    /// One of each statement and expression kind, with bound and unbound names.
    const TEMPLATES: &[&str] = &[
        "Review {{ input.target }} part 1. Findings: {{ state.findings | length }}",
        "{{ state.a.b.c }} {{ outputs['x'].text }} {{ a[0].b }} {{ f(x).y }} {{ range(3) }}",
        "{% for item in state.items if item.ok %}{{ loop.index }} {{ item.name }} {{ other.x }}\
         {% else %}{{ item }}{% endfor %}{{ item }}",
        "{% if state.ok %}{% set x = 1 %}{{ x }}{% else %}{{ x.y }}{% endif %}{{ x }}",
        "{% with a = state.a, b = a %}{{ a.b }} {{ b }}{% endwith %}{{ a }}",
        "{% set (p, q) = pair %}{{ p.z }} {{ q }} {% set r = l %}{{ r.s }}",
        "{% set block %}{{ state.x }}{{ block }}{% endset %}{{ block.y }}",
        "{% autoescape true %}{{ esc.x }}{% endautoescape %}{% filter upper %}{{ f.y }}{% endfilter %}",
        "{% block body %}{{ super() }} {{ self.x }} {{ page.title }}{% endblock %}",
        "{% extends layout %}{% include part %}{% import 'm' as m %}{{ m.x }}\
         {% from 'n' import a, b as c %}{{ a }} {{ c.d }} {{ b }}",
        "{% macro show(v, w=default.w) %}{{ v.x }} {{ caller() }} {{ outer.y }}{% endmacro %}\
         {{ show(1) }}{% call(u) show(arg.z) %}{{ u.v }} {{ here.h }}{% endcall %}",
        "{% do ns.update(k=val.x) %}{{ -n.a }} {{ a ~ b }} {{ c < d.e <= f }}",
        "{{ t if cond.x else fb.y }} {{ t2 if c2 }} {{ s[lo:hi:st] }} {{ [l1, (t1, t2)] }}",
        "{{ {'k': mv.x, mk: 1} }} {{ v is divisibleby(dv.x) }} {{ x | default(dflt.y, kw=kv.z) }}",
        "{{ 'state.nope' }} {# comment.x #}{% raw %}{{ raw.x }}{% endraw %}",
    ];

    const EXPRESSIONS: &[&str] = &[
        "state.rounds < 3 and not state.approved",
        "outputs.review.text | lower == 'yes'",
        "state.items[0].name in input.names",
        "x.y.z if a.b else c",
        "f(k=v.w)",
        "range(3)",
    ];

    #[test]
    fn matches_minijinja() {
        let env = Environment::new();
        for source in TEMPLATES {
            let expected = env
                .template_from_str(source)
                .expect("parses")
                .undeclared_variables(true);
            let ast = parse(source, "<string>", SyntaxConfig::default()).expect("parses");
            assert_eq!(in_template(&ast), expected, "{source}");
        }
        for source in EXPRESSIONS {
            let expected = env
                .compile_expression(source)
                .expect("parses")
                .undeclared_variables(true);
            let ast = parse_expr(source).expect("parses");
            assert_eq!(in_expression(&ast), expected, "{source}");
        }
    }
}
