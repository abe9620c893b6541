//! Stage 2: the checks of `atomic check` that turn a KDL document into a resolved workflow
//! and judge it. `analyze` runs the data, safety and lint rules over the resolved IR.

mod analyze;

pub use analyze::{
    AnalyzeContext, LoadWorkflow, Read, TemplateError, analyze, expression_reads, template_reads,
};
