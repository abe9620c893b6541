//! The budget guard: every provider [`super::build`] makes is wrapped in [`Budgeted`], so a
//! call stops spending as soon as it passes its budget, on any adapter and either engine.
//!
//! The guard watches the call's cumulative [`AgentEvent::Usage`] events. Their cost is the
//! backend's own where it reports one (Claude Code, OpenCode, the HTTP adapters given
//! `price-*` options); otherwise it is priced from the [`PriceTable`] by the model the
//! backend says it used, or the request's (and the event is passed on with that cost). When
//! the cost passes the node's `budget-usd` ([`AgentRequest::budget_usd`]) or what is left
//! of the run's `max-budget-usd` ([`AgentRequest::run_budget_left_usd`]), the guard drops
//! the call's future — which kills a CLI's process group or closes the HTTP stream — and
//! fails with [`ProviderError::OverBudget`] (class `budget`). The reply of a call that
//! finished is checked the same way, and given the priced cost when its backend had none.
//!
//! A model no table prices is not metered (a warning says so once per call when a budget
//! is set); Claude Code also enforces `--max-budget-usd` itself.

use std::future::poll_fn;
use std::sync::{Arc, Mutex};
use std::task::Poll;

use super::prices::{FoundPrice, PriceSource, PriceTable};
use super::{
    AgentEvent, AgentReply, AgentRequest, EventSink, Provider, ProviderError, ProviderFuture, Usage,
};

/// A provider whose calls stop at their budget.
#[derive(Debug)]
pub(crate) struct Budgeted {
    inner: Arc<dyn Provider>,
    prices: Arc<PriceTable>,
}

impl Budgeted {
    /// Wraps `inner`, pricing unpriced usage from `prices`.
    pub(crate) fn new(inner: Arc<dyn Provider>, prices: Arc<PriceTable>) -> Self {
        Self { inner, prices }
    }
}

impl Provider for Budgeted {
    fn adapter(&self) -> &'static str {
        self.inner.adapter()
    }

    fn can_compact(&self) -> bool {
        self.inner.can_compact()
    }

    fn is_instant(&self) -> bool {
        self.inner.is_instant()
    }

    fn run<'a>(
        &'a self,
        request: &'a AgentRequest,
        events: &'a dyn EventSink,
    ) -> ProviderFuture<'a> {
        Box::pin(async move {
            let meter = Meter {
                adapter: self.inner.adapter(),
                request,
                prices: &self.prices,
                state: Mutex::new(Metered::default()),
            };
            let sink = |event: AgentEvent| events.emit(meter.observe(event));
            let mut call = self.inner.run(request, &sink);
            // Checked after every poll of the call: the events of that poll are in.
            let result = poll_fn(|cx| {
                let polled = call.as_mut().poll(cx);
                match meter.over() {
                    Some(error) => Poll::Ready(Err(error)),
                    None => polled,
                }
            })
            .await;
            // Stops the call (its process group, its stream) before anything else happens.
            drop(call);
            let mut reply: AgentReply = result?;
            if reply.cost_usd.is_none() {
                reply.cost_usd = meter.price(reply.usage).map(|(cost, _)| cost);
            }
            if let Some(cost) = reply.cost_usd
                && let Some(error) = meter.judge(cost, reply.usage)
            {
                return Err(error);
            }
            Ok(reply)
        })
    }
}

/// What the guard has seen of one call.
#[derive(Default)]
struct Metered {
    /// The model the backend reported at the session's start.
    reported_model: Option<String>,
    /// The budget it passed, once it did.
    over: Option<ProviderError>,
    /// Whether the unpriced-model warning was given.
    warned: bool,
}

struct Meter<'a> {
    adapter: &'static str,
    request: &'a AgentRequest,
    prices: &'a PriceTable,
    state: Mutex<Metered>,
}

impl Meter<'_> {
    fn state(&self) -> std::sync::MutexGuard<'_, Metered> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Notes what `event` says of the model and the spend, and returns it to pass on (a
    /// `Usage` without a cost gets the priced one).
    fn observe(&self, event: AgentEvent) -> AgentEvent {
        match event {
            AgentEvent::SessionStart {
                session_id,
                model: Some(model),
            } => {
                self.state().reported_model = Some(model.clone());
                AgentEvent::SessionStart {
                    session_id,
                    model: Some(model),
                }
            }
            AgentEvent::Usage { usage, cost_usd } => {
                let cost_usd = cost_usd.or_else(|| self.price(usage).map(|(cost, _)| cost));
                if let Some(cost) = cost_usd
                    && let Some(error) = self.judge(cost, usage)
                {
                    let mut state = self.state();
                    if state.over.is_none() {
                        state.over = Some(error);
                    }
                }
                AgentEvent::Usage { usage, cost_usd }
            }
            other => other,
        }
    }

    /// The budget passed, if one was.
    fn over(&self) -> Option<ProviderError> {
        self.state().over.take()
    }

    /// The tightest limit on this call: the node's, or what is left of the run's.
    fn limit(&self) -> Option<(f64, Limit)> {
        let node = self.request.limits.budget_usd.map(|usd| (usd, Limit::Node));
        let run = self
            .request
            .limits
            .run_budget_left_usd
            .map(|usd| (usd.max(0.0), Limit::Run));
        match (node, run) {
            (Some(node), Some(run)) => Some(if run.0 < node.0 { run } else { node }),
            (node, run) => node.or(run),
        }
    }

    /// The priced cost of `usage`, with the entry used; warns once when a budget is set
    /// and no table prices the model.
    fn price(&self, usage: Usage) -> Option<(f64, FoundPrice)> {
        let reported = self.state().reported_model.clone();
        let found = reported
            .as_deref()
            .and_then(|model| self.prices.lookup(model))
            .or_else(|| {
                self.request
                    .model
                    .as_deref()
                    .and_then(|model| self.prices.lookup(model))
            });
        if found.is_none() && self.limit().is_some() {
            let mut state = self.state();
            if !state.warned {
                state.warned = true;
                let model = reported.or_else(|| self.request.model.clone());
                tracing::warn!(
                    node = %self.request.call.node_id,
                    model = model.as_deref().unwrap_or("(none)"),
                    "no price for this model: its budget is checked only against a cost the backend reports (add it to `prices` in .atomic/config.kdl)"
                );
            }
        }
        found.map(|found| (found.cost(usage), found))
    }

    /// The error when `cost` passes the call's limit.
    fn judge(&self, cost: f64, usage: Usage) -> Option<ProviderError> {
        let (limit, which) = self.limit()?;
        if cost <= limit {
            return None;
        }
        let node = &self.request.call.node_id;
        let how = match self.price(usage) {
            Some((_, found)) => format!(
                " ({} input, {} output, {} cache-read, {} cache-write tokens at the {} price of `{}`: ${}/${} per million input/output tokens)",
                usage.input_tokens,
                usage.output_tokens,
                usage.cache_read_tokens,
                usage.cache_write_tokens,
                match found.source {
                    PriceSource::Config => "configured",
                    PriceSource::Shipped => "shipped",
                },
                found.entry,
                found.price.input,
                found.price.output,
            ),
            None => String::new(),
        };
        let message = match which {
            Limit::Node => format!(
                "`{node}` spent ${cost:.4}{how}, over its `budget-usd` of ${limit:.4}; raise `budget-usd` on the node or ask for less"
            ),
            Limit::Run => format!(
                "`{node}` spent ${cost:.4}{how}, over the ${limit:.4} left of the run's `limits max-budget-usd`; raise `max-budget-usd`"
            ),
        };
        Some(ProviderError::over_budget(self.adapter, message))
    }
}

/// Which budget limits a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Limit {
    /// The node's `budget-usd`.
    Node,
    /// The run's `max-budget-usd`, less what the run spent before the call.
    Run,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{ErrorClass, ModelPrice, PriceOverride};
    use crate::providers::InProcess;
    use crate::providers::{CallId, Limits, Prompt};

    fn request(model: &str, budget: Option<f64>, run_left: Option<f64>) -> AgentRequest {
        AgentRequest {
            call: CallId {
                node_id: "write".to_owned(),
                ..CallId::default()
            },
            prompt: Prompt {
                text: "hello".to_owned(),
                ..Prompt::default()
            },
            model: Some(model.to_owned()),
            limits: Limits {
                budget_usd: budget,
                run_budget_left_usd: run_left,
                ..Limits::default()
            },
            ..AgentRequest::default()
        }
    }

    fn guarded(prices: Vec<PriceOverride>) -> Budgeted {
        let inner: Arc<dyn Provider> = Arc::new(InProcess::new());
        Budgeted::new(inner, PriceTable::with_overrides(prices))
    }

    fn dear(model: &str) -> PriceOverride {
        PriceOverride {
            model: model.to_owned(),
            price: ModelPrice {
                input: 1_000_000.0,
                output: 1_000_000.0,
                cache_read: None,
                cache_write: None,
            },
        }
    }

    #[tokio::test]
    async fn a_priced_call_over_its_budget_fails_with_the_budget_class() {
        let provider = guarded(vec![dear("pricey")]);
        let seen = Mutex::new(Vec::new());
        let sink = |event: AgentEvent| seen.lock().expect("lock").push(event);
        let error = provider
            .run(&request("pricey", Some(0.5), None), &sink)
            .await
            .expect_err("over budget");
        assert_eq!(error.class(), ErrorClass::Budget);
        let text = error.to_string();
        assert!(text.contains("`budget-usd` of $0.5000"), "{text}");
        assert!(text.contains("configured price of `pricey`"), "{text}");
        // The usage event was passed on with the priced cost.
        assert!(seen.lock().expect("lock").iter().any(|event| matches!(
            event,
            AgentEvent::Usage { cost_usd: Some(cost), .. } if *cost > 0.5
        )));
    }

    #[tokio::test]
    async fn the_run_budget_left_limits_when_it_is_tighter() {
        let provider = guarded(vec![dear("pricey")]);
        let error = provider
            .run(&request("pricey", Some(1_000_000.0), Some(0.25)), &|_| {})
            .await
            .expect_err("over the run's budget");
        assert!(
            error
                .to_string()
                .contains("left of the run's `limits max-budget-usd`"),
            "{error}"
        );
    }

    #[tokio::test]
    async fn within_budget_the_reply_gets_its_priced_cost() {
        let provider = guarded(vec![]);
        let reply = provider
            .run(&request("claude-haiku-4-5", Some(1.0), None), &|_| {})
            .await
            .expect("cheap");
        assert!(reply.cost_usd.is_some_and(|cost| cost > 0.0 && cost < 1.0));
        // An unpriced model is not metered.
        let reply = provider
            .run(&request("my-local-model", Some(0.0), None), &|_| {})
            .await
            .expect("unpriced");
        assert_eq!(reply.cost_usd, None);
    }
}
