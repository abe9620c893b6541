//! An OTLP/HTTP trace receiver on 127.0.0.1: `POST /v1/traces` bodies decoded with the
//! official OpenTelemetry protobuf definitions (`opentelemetry-proto`'s
//! `ExportTraceServiceRequest`), answered 200 with an empty `ExportTraceServiceResponse`.
//! Every request is kept, so a test can also search the raw bytes that were sent.

use std::collections::BTreeMap;
use std::sync::Arc;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use prost::Message;
use serde_json::Value;

use super::http_server::{HttpServer, Reply, Request};

/// A receiver; dropping it stops it.
pub struct OtlpReceiver {
    server: HttpServer,
}

/// One exported span, flattened.
#[derive(Clone, Debug)]
pub struct Span {
    /// Its name.
    pub name: String,
    /// The trace id, hex.
    pub trace_id: String,
    /// The span id, hex.
    pub span_id: String,
    /// The parent's span id, hex ("" for a root).
    pub parent: String,
    /// `SPAN_KIND_*` as the protobuf number (1 internal, 3 client).
    pub kind: i32,
    /// Attributes, values as JSON.
    pub attributes: BTreeMap<String, Value>,
    /// Status code (0 unset, 1 ok, 2 error) and message.
    pub status: (i32, String),
    /// Events: name and attributes.
    pub events: Vec<(String, BTreeMap<String, Value>)>,
    /// The resource's attributes.
    pub resource: BTreeMap<String, Value>,
}

impl Span {
    /// An attribute, `Null` when absent.
    pub fn attr(&self, key: &str) -> Value {
        self.attributes.get(key).cloned().unwrap_or(Value::Null)
    }

    /// Whether the status is error.
    pub fn is_error(&self) -> bool {
        self.status.0 == 2
    }
}

impl OtlpReceiver {
    /// Starts listening on a free port.
    pub fn start() -> Self {
        let handler = Arc::new(|request: &Request| {
            if request.method == "POST" && request.path() == "/v1/traces" {
                Reply::Full {
                    status: 200,
                    headers: vec![(
                        "content-type".to_owned(),
                        "application/x-protobuf".to_owned(),
                    )],
                    body: Vec::new(),
                }
            } else {
                Reply::json(404, &serde_json::json!({"error": "not found"}))
            }
        });
        Self {
            server: HttpServer::start(handler),
        }
    }

    /// The base URL, for `OTEL_EXPORTER_OTLP_ENDPOINT` or `endpoint=`.
    pub fn endpoint(&self) -> String {
        self.server.url()
    }

    /// Every request received (any path).
    pub fn requests(&self) -> Vec<Request> {
        self.server.requests()
    }

    /// Every span received, in order. Panics on a body that is not an OTLP protobuf
    /// export request.
    pub fn spans(&self) -> Vec<Span> {
        let mut spans = Vec::new();
        for request in self.requests() {
            assert_eq!(request.path(), "/v1/traces", "only traces are sent");
            assert_eq!(
                request.header("content-type"),
                Some("application/x-protobuf"),
                "OTLP/HTTP protobuf"
            );
            let decoded = ExportTraceServiceRequest::decode(request.body.as_slice())
                .expect("an OTLP ExportTraceServiceRequest");
            for resource_spans in decoded.resource_spans {
                let resource = resource_spans
                    .resource
                    .map(|resource| attributes(&resource.attributes))
                    .unwrap_or_default();
                for scope in resource_spans.scope_spans {
                    for span in scope.spans {
                        spans.push(Span {
                            name: span.name,
                            trace_id: hex(&span.trace_id),
                            span_id: hex(&span.span_id),
                            parent: hex(&span.parent_span_id),
                            kind: span.kind,
                            attributes: attributes(&span.attributes),
                            status: span
                                .status
                                .map(|status| (status.code, status.message))
                                .unwrap_or_default(),
                            events: span
                                .events
                                .into_iter()
                                .map(|event| (event.name, attributes(&event.attributes)))
                                .collect(),
                            resource: resource.clone(),
                        });
                    }
                }
            }
        }
        spans
    }

    /// Every byte sent, as lossy text (to search for what must never be exported).
    pub fn raw_text(&self) -> String {
        self.requests()
            .iter()
            .map(|request| String::from_utf8_lossy(&request.body).into_owned())
            .collect()
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn attributes(list: &[KeyValue]) -> BTreeMap<String, Value> {
    list.iter()
        .map(|kv| (kv.key.clone(), kv.value.as_ref().map_or(Value::Null, value)))
        .collect()
}

fn value(any: &AnyValue) -> Value {
    match &any.value {
        Some(any_value::Value::StringValue(text)) => Value::from(text.clone()),
        Some(any_value::Value::BoolValue(flag)) => Value::from(*flag),
        Some(any_value::Value::IntValue(number)) => Value::from(*number),
        Some(any_value::Value::DoubleValue(number)) => Value::from(*number),
        Some(any_value::Value::ArrayValue(array)) => {
            Value::Array(array.values.iter().map(value).collect())
        }
        Some(other) => Value::from(format!("{other:?}")),
        None => Value::Null,
    }
}
