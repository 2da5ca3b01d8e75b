//! assay's metrics: ids, what each needs and accepts, its signature, and
//! per-sample scoring.
//!
//! Two registries, neither holding the other's metrics:
//! [`lexical::LEXICAL`] lists the lexical and tool-call metrics
//! ([`MetricId`]), [`judged::registry`] the judged metrics and their
//! prompts ([`judged::JudgedId`]). Each metric is one module, registered
//! by one line.
//! [`registry`] keeps no list: it joins the two ([`AnyId`]) for what
//! users type and `assay metrics` lists.
//!
//! The lexical metrics wrap the pure algorithms of `assay-text`; scoring is
//! a function of the sample alone, so it is tested without any model.
//!
//! ```
//! use assay_metrics::Metric;
//! let metric = Metric::configure(assay_metrics::lexical::exact_match::ID, &Default::default()).unwrap();
//! let mut scorer = metric.scorer();
//! let row = serde_json::json!({"response": "Paris", "reference": "Paris"});
//! let sample = assay_core::Sample::from_json(1, row.as_object().unwrap()).unwrap();
//! let outcomes = scorer.score(&sample);
//! assert!(matches!(outcomes[0], assay_core::Outcome::Scored { value, .. } if value == 1.0));
//! ```

pub mod id;
pub mod judged;
pub mod lexical;
pub mod params;
pub mod registry;
pub mod spec;
pub mod tools;
pub mod unit;

pub use id::UnknownMetric;
pub use params::{ParamError, Setting};
pub use registry::{AnyId, MetricDoc};
pub use spec::Direction;
pub use unit::{Corpus, CorpusScore, Metric, MetricId, MetricSpec, Scorer};
