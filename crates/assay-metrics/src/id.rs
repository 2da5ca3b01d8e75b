//! What users type that names no metric, and what every metric id is: a
//! handle on its registry entry, equal, hashed and shown by its name, and
//! ordered as its registry lists it.

/// Not a metric id; the message lists the known ones.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown metric '{0}' (known: {known})", known = crate::AnyId::all().map(crate::AnyId::name).collect::<Vec<_>>().join(", "))]
pub struct UnknownMetric(pub String);

/// Equality, hashing, `Debug` and `Display` of an id type by its
/// `name()`.
macro_rules! by_name {
    ($id:ident) => {
        impl PartialEq for $id {
            fn eq(&self, other: &Self) -> bool {
                self.name() == other.name()
            }
        }

        impl Eq for $id {}

        impl std::hash::Hash for $id {
            fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
                self.name().hash(state);
            }
        }

        impl std::fmt::Debug for $id {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}({})", stringify!($id), self.name())
            }
        }

        impl std::fmt::Display for $id {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

/// The order of an id type as its registry lists it (its `position()`),
/// then by name.
macro_rules! in_registry_order {
    ($id:ident) => {
        impl PartialOrd for $id {
            fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
                Some(self.cmp(other))
            }
        }

        impl Ord for $id {
            fn cmp(&self, other: &Self) -> std::cmp::Ordering {
                (self.position(), self.name()).cmp(&(other.position(), other.name()))
            }
        }
    };
}

pub(crate) use {by_name, in_registry_order};
