//! The run's template environment and its compiled templates.
//!
//! Templates are compiled once, when the run starts ([`Templates::add`]), and found again
//! by the address of their IR [`Template`]: the plan is shared immutably for the whole run,
//! so that address is a stable identity and a lookup costs one hash.

use std::sync::Arc;

use minijinja::{Environment, UndefinedBehavior, Value};
use rustc_hash::FxHashMap;

use super::fast::Fast;
use super::scope::ScopeSource;
use crate::ir::Template;
use crate::source::Span;

/// The top-level variable an expression template stores its value in.
const RESULT: &str = "__atomic_result";

/// How a template is used, which decides what evaluating it returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Rendered to text (prompts, command arguments).
    Text,
    /// A value: a lone `{{ expr }}` keeps the expression's type, anything else is text
    /// (`set` values, input mappings).
    Value,
    /// A bare expression (`when`, `until`, `for-each`, `set … expr=`).
    Expr,
}

#[derive(Clone, Debug)]
enum Compiled {
    /// No markup: rendering is a copy.
    Literal(Arc<str>),
    /// A template rendered to text; the name in the environment.
    Text(Arc<str>),
    /// An expression, compiled as `{% set RESULT = (expr) %}`; the name, and the
    /// expression's shortcut form if it has one (tried first).
    Expr(Arc<str>, Option<Arc<Fast>>),
}

/// A template that failed to compile or render.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct TemplateError {
    /// The template's string literal.
    pub span: Span,
    /// What went wrong (minijinja's message).
    pub message: String,
}

impl TemplateError {
    fn new(template: &Template, error: &minijinja::Error) -> Self {
        let mut message = error.kind().to_string();
        if let Some(detail) = error.detail() {
            message = format!("{message}: {detail}");
        }
        Self {
            span: template.span,
            message: format!("template `{}`: {message}", template.source),
        }
    }
}

/// The environment plus every compiled template of a run.
#[derive(Debug)]
pub struct Templates {
    env: Environment<'static>,
    compiled: FxHashMap<usize, Compiled>,
    /// Compiled templates by their text, for text templates and for expressions: a text
    /// that occurs many times (`state.n + 1` in a thousand `set`s) is compiled once, which
    /// keeps a large workflow's memory and start-up time down.
    texts: FxHashMap<String, Compiled>,
    exprs: FxHashMap<String, Compiled>,
}

impl Default for Templates {
    fn default() -> Self {
        Self::new()
    }
}

fn key(template: &Template) -> usize {
    std::ptr::from_ref(template) as usize
}

impl Templates {
    /// An empty environment: strict about printing undefined values (a typo must not
    /// silently render as nothing) but lenient in conditions (`{% if state.x %}`).
    #[must_use]
    pub fn new() -> Self {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::SemiStrict);
        // Prompts and command arguments keep their text exactly, trailing newline included.
        if let Ok(syntax) = minijinja::syntax::SyntaxConfig::builder()
            .keep_trailing_newline(true)
            .build()
        {
            env.set_syntax(syntax);
        }
        env.add_filter("fromjson", fromjson);
        Self {
            env,
            compiled: FxHashMap::default(),
            texts: FxHashMap::default(),
            exprs: FxHashMap::default(),
        }
    }

    /// Compiles `template` for `role`. Compiling the same template again is free.
    ///
    /// # Errors
    /// When the template does not parse.
    pub fn add(&mut self, template: &Template, role: Role) -> Result<(), TemplateError> {
        let key = key(template);
        if self.compiled.contains_key(&key) {
            return Ok(());
        }
        let compiled = match role {
            Role::Expr => self.add_expr(template, template.source.trim())?,
            Role::Value => match lone_expression(&template.source) {
                Some(expr) => self.add_expr(template, expr)?,
                None => self.add_text(template)?,
            },
            Role::Text => self.add_text(template)?,
        };
        self.compiled.insert(key, compiled);
        Ok(())
    }

    /// A fresh name in the environment.
    fn name(&self) -> Arc<str> {
        Arc::from(format!("t{}", self.texts.len() + self.exprs.len()))
    }

    fn add_text(&mut self, template: &Template) -> Result<Compiled, TemplateError> {
        if template.is_literal() {
            return Ok(Compiled::Literal(Arc::from(template.source.as_str())));
        }
        if let Some(compiled) = self.texts.get(template.source.as_str()) {
            return Ok(compiled.clone());
        }
        let name = self.name();
        self.env
            .add_template_owned(name.to_string(), template.source.clone())
            .map_err(|error| TemplateError::new(template, &error))?;
        let compiled = Compiled::Text(name);
        self.texts.insert(template.source.clone(), compiled.clone());
        Ok(compiled)
    }

    fn add_expr(&mut self, template: &Template, expr: &str) -> Result<Compiled, TemplateError> {
        if let Some(compiled) = self.exprs.get(expr) {
            return Ok(compiled.clone());
        }
        // Parse it as an expression first so a stray `%}` cannot escape the wrapper.
        self.env
            .compile_expression(expr)
            .map_err(|error| TemplateError::new(template, &error))?;
        let name = self.name();
        self.env
            .add_template_owned(name.to_string(), format!("{{% set {RESULT} = ({expr}) %}}"))
            .map_err(|error| TemplateError::new(template, &error))?;
        let compiled = Compiled::Expr(name, Fast::parse(expr).map(Arc::new));
        self.exprs.insert(expr.to_owned(), compiled.clone());
        Ok(compiled)
    }

    fn compiled(&self, template: &Template) -> Result<&Compiled, TemplateError> {
        self.compiled
            .get(&key(template))
            .ok_or_else(|| TemplateError {
                span: template.span,
                message: format!(
                    "template `{}` was not compiled for this run",
                    template.source
                ),
            })
    }

    /// Renders `template` to text.
    ///
    /// # Errors
    /// When rendering fails (an undefined variable, a filter error).
    pub fn render(
        &self,
        template: &Template,
        scope: &(impl ScopeSource + ?Sized),
    ) -> Result<String, TemplateError> {
        match self.compiled(template)? {
            Compiled::Literal(text) => Ok(text.to_string()),
            Compiled::Text(name) => self
                .env
                .get_template(name)
                .and_then(|compiled| compiled.render(scope.value()))
                .map_err(|error| TemplateError::new(template, &error)),
            Compiled::Expr(..) => {
                let value = self.eval(template, scope)?;
                Ok(match value.as_str() {
                    Some(text) => text.to_owned(),
                    None => value.to_string(),
                })
            }
        }
    }

    /// Evaluates `template`: an expression (or a lone `{{ expr }}` compiled as
    /// [`Role::Value`]) gives its value, anything else its rendered text.
    ///
    /// # Errors
    /// When evaluation fails.
    pub fn eval(
        &self,
        template: &Template,
        scope: &(impl ScopeSource + ?Sized),
    ) -> Result<Value, TemplateError> {
        match self.compiled(template)? {
            Compiled::Literal(text) => Ok(Value::from(text.clone())),
            Compiled::Text(_) => self.render(template, scope).map(Value::from),
            Compiled::Expr(name, fast) => {
                if let Some(value) = fast.as_ref().and_then(|fast| fast.eval(scope)) {
                    return Ok(value);
                }
                let fail = |error: minijinja::Error| TemplateError::new(template, &error);
                let compiled = self.env.get_template(name).map_err(fail)?;
                let captured = compiled.render_captured(scope.value()).map_err(fail)?;
                let value = captured.state().lookup(RESULT).unwrap_or(Value::UNDEFINED);
                if value.is_undefined() {
                    return Err(TemplateError {
                        span: template.span,
                        message: format!("template `{}`: the value is undefined", template.source),
                    });
                }
                Ok(value)
            }
        }
    }

    /// Evaluates `template` to JSON (see [`Templates::eval`]).
    ///
    /// # Errors
    /// When evaluation fails or the value has no JSON form.
    pub fn eval_json(
        &self,
        template: &Template,
        scope: &(impl ScopeSource + ?Sized),
    ) -> Result<serde_json::Value, TemplateError> {
        let value = self.eval(template, scope)?;
        to_json(&value).map_err(|message| TemplateError {
            span: template.span,
            message,
        })
    }

    /// Evaluates a condition: its truthiness (an undefined value is false).
    ///
    /// # Errors
    /// When evaluation fails.
    pub fn truthy(
        &self,
        template: &Template,
        scope: &(impl ScopeSource + ?Sized),
    ) -> Result<bool, TemplateError> {
        match self.eval(template, scope) {
            Ok(value) => Ok(value.is_true()),
            Err(error) if error.message.ends_with("the value is undefined") => Ok(false),
            Err(error) => Err(error),
        }
    }
}

/// A template value as JSON.
///
/// # Errors
/// When the value cannot be serialised (a function, say).
pub(crate) fn to_json(value: &Value) -> Result<serde_json::Value, String> {
    serde_json::to_value(value).map_err(|error| format!("the value has no JSON form: {error}"))
}

/// The expression of a template that is exactly one `{{ … }}` (whitespace around allowed).
fn lone_expression(source: &str) -> Option<&str> {
    let inner = source.trim().strip_prefix("{{")?.strip_suffix("}}")?;
    if has_pair(inner, b'{', b'{')
        || has_pair(inner, b'}', b'}')
        || has_pair(source, b'{', b'%')
        || has_pair(source, b'{', b'#')
    {
        return None;
    }
    let inner = inner.strip_prefix('-').unwrap_or(inner);
    let inner = inner.strip_suffix('-').unwrap_or(inner);
    let inner = inner.trim();
    (!inner.is_empty()).then_some(inner)
}

/// Whether `text` contains the two bytes `a b` in a row: `str::contains` with a two-byte
/// needle, without its searcher's set-up, which dominated compiling a thousand short
/// `set` values.
fn has_pair(text: &str, a: u8, b: u8) -> bool {
    text.as_bytes()
        .windows(2)
        .any(|pair| pair[0] == a && pair[1] == b)
}

fn fromjson(text: &str) -> Result<Value, minijinja::Error> {
    let parsed: serde_json::Value = serde_json::from_str(text).map_err(|error| {
        minijinja::Error::new(
            minijinja::ErrorKind::InvalidOperation,
            format!("fromjson: {error}"),
        )
    })?;
    Ok(Value::from(minijinja::value::Serde(parsed)))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;
    use crate::ir::{Reducer, ValueType};
    use crate::runtime::state::{FieldSpec, State, StateSchema};
    use crate::runtime::template::{Outputs, RunInfo, Scope};
    use crate::source::SourceId;

    fn template(source: &str) -> Template {
        Template {
            source: source.to_owned(),
            span: Span::new(SourceId(0), 0, 0),
            exact: false,
            offset: 0,
            shifts: None,
        }
    }

    fn scope() -> Value {
        let mut schema = StateSchema::default();
        schema.push(FieldSpec {
            name: Arc::from("rounds"),
            ty: ValueType::Integer,
            default: Some(json!(2)),
            reducer: Reducer::Replace,
            max_items: None,
        });
        schema.push(FieldSpec {
            name: Arc::from("items"),
            ty: ValueType::Array,
            default: Some(json!([{"id": 1}, {"id": 2}])),
            reducer: Reducer::Append,
            max_items: None,
        });
        let mut outputs = Outputs::default();
        outputs.insert(Arc::from("review"), json!({"text": "fine"}));
        Scope {
            input: Value::from(minijinja::value::Serde(json!({"target": "src/"}))),
            env: Value::from(minijinja::value::Serde(json!({"HOME": "/h"}))),
            state: Arc::new(State::new(Arc::new(schema))),
            outputs: Arc::new(outputs),
            run: RunInfo {
                id: Arc::from("r1"),
                step: 7,
                iteration: 3,
            },
            locals: Some(Arc::new(vec![(Arc::from("item"), Value::from("a.rs"))])),
        }
        .into_value()
    }

    #[test]
    fn identical_texts_compile_once() {
        let mut templates = Templates::new();
        let sets: Vec<Template> = (0..100).map(|_| template("state.rounds + 1")).collect();
        let prompts: Vec<Template> = (0..100)
            .map(|_| template("Round {{ state.rounds }}"))
            .collect();
        for set in &sets {
            templates.add(set, Role::Expr).unwrap();
        }
        for prompt in &prompts {
            templates.add(prompt, Role::Text).unwrap();
        }
        // The same text as a prompt and as an expression are different templates.
        let as_text = template("state.rounds + 1");
        templates.add(&as_text, Role::Text).unwrap();
        assert_eq!(templates.env.templates().count(), 2);
        assert_eq!(templates.texts.len() + templates.exprs.len(), 2);
        let scope = scope();
        assert_eq!(templates.eval(&sets[99], &scope).unwrap(), Value::from(3));
        assert_eq!(templates.render(&prompts[42], &scope).unwrap(), "Round 2");
        assert_eq!(
            templates.render(&as_text, &scope).unwrap(),
            "state.rounds + 1"
        );
    }

    #[test]
    fn renders_every_name() {
        let mut templates = Templates::new();
        let text = template(
            "{{ input.target }} {{ state.rounds }} {{ outputs.review.text }} {{ run.id }}/{{ run.step }}/{{ run.iteration }} {{ env.HOME }} {{ item }} {{ state.items | length }}",
        );
        templates.add(&text, Role::Text).unwrap();
        assert_eq!(
            templates.render(&text, &scope()).unwrap(),
            "src/ 2 fine r1/7/3 /h a.rs 2"
        );
    }

    #[test]
    fn lone_expressions_keep_their_type() {
        let mut templates = Templates::new();
        let number = template(" {{ state.rounds + 1 }} ");
        let list = template("{{- state.items | map(attribute='id') | list -}}");
        let text = template("n={{ state.rounds }}");
        let literal = template("plain");
        for t in [&number, &list, &text, &literal] {
            templates.add(t, Role::Value).unwrap();
        }
        let scope = scope();
        assert_eq!(templates.eval_json(&number, &scope).unwrap(), json!(3));
        assert_eq!(templates.eval_json(&list, &scope).unwrap(), json!([1, 2]));
        assert_eq!(templates.eval_json(&text, &scope).unwrap(), json!("n=2"));
        assert_eq!(
            templates.eval_json(&literal, &scope).unwrap(),
            json!("plain")
        );
    }

    #[test]
    fn conditions_and_errors() {
        let mut templates = Templates::new();
        let yes = template("state.rounds > 1 and state.items | length == 2");
        let missing = template("state.nope");
        let bad = template("state.rounds +");
        let printed = template("{{ state.nope }}");
        templates.add(&yes, Role::Expr).unwrap();
        templates.add(&missing, Role::Expr).unwrap();
        templates.add(&printed, Role::Text).unwrap();
        assert!(templates.add(&bad, Role::Expr).is_err());
        let scope = scope();
        assert!(templates.truthy(&yes, &scope).unwrap());
        assert!(
            !templates.truthy(&missing, &scope).unwrap(),
            "undefined is false"
        );
        assert!(
            templates.render(&printed, &scope).is_err(),
            "printing undefined fails"
        );
        let never = template("x");
        assert!(templates.render(&never, &scope).is_err());
    }

    /// The checker's judgement of filters (`check::template_env`) is this engine's: what
    /// it adds is registered here, and what it calls unknown fails here.
    #[test]
    fn the_checker_knows_exactly_the_filters_the_engine_has() {
        use crate::check::template_env::{ADDED_FILTERS, Callee, is_known};
        for name in ADDED_FILTERS {
            let mut templates = Templates::new();
            let t = template(&format!("{{{{ '[1]' | {name} }}}}"));
            templates.add(&t, Role::Text).unwrap();
            assert!(templates.render(&t, &scope()).is_ok(), "{name}");
        }
        for (name, known) in [("upper", true), ("tojson", true), ("shout", false)] {
            assert_eq!(is_known(Callee::Filter, name), known, "{name}");
            let mut templates = Templates::new();
            let t = template(&format!("{{{{ 'x' | {name} }}}}"));
            templates.add(&t, Role::Text).unwrap();
            assert_eq!(templates.render(&t, &scope()).is_ok(), known, "{name}");
        }
    }

    #[test]
    fn fromjson_and_tojson() {
        let mut templates = Templates::new();
        let t = template("{{ ('{\"a\": [1]}' | fromjson).a | tojson }}");
        templates.add(&t, Role::Text).unwrap();
        assert_eq!(templates.render(&t, &scope()).unwrap(), "[1]");
    }

    #[test]
    fn lone_expression_detection() {
        assert_eq!(lone_expression("{{ a }}"), Some("a"));
        assert_eq!(lone_expression(" {{- a + 1 -}}\n"), Some("a + 1"));
        assert_eq!(lone_expression("{{ a }} {{ b }}"), None);
        assert_eq!(lone_expression("x {{ a }}"), None);
        assert_eq!(lone_expression("{{ }}"), None);
    }
}
