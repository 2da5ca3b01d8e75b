//! A rendered chat message: what a judge request holds, what a chat model
//! reads and what the cache key is made of. One type serves the prompts
//! (`assay-metrics`), the models (`assay-llm`, `assay-local`) and the
//! engine between them. A conversation read from the input is
//! [`crate::conversation`]'s, which is wider: it has tool messages, tool
//! calls and the message's place in the input, which a prompt never has.

use crate::conversation;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Who speaks in a chat message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions.
    System,
    /// The asking side.
    User,
    /// The model's own earlier answer.
    Assistant,
}

impl Role {
    /// The OpenAI-protocol role name (a conversation's role's).
    pub fn name(self) -> &'static str {
        conversation::Role::from(self).name()
    }
}

impl From<Role> for conversation::Role {
    fn from(role: Role) -> conversation::Role {
        match role {
            Role::System => conversation::Role::System,
            Role::User => conversation::Role::User,
            Role::Assistant => conversation::Role::Assistant,
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One rendered chat message.
///
/// ```
/// use assay_core::chat::{Message, Role};
/// assert_eq!(Message::user("Hi").role, Role::User);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Message {
    /// Who speaks.
    pub role: Role,
    /// What is said.
    pub content: String,
}

impl Message {
    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Message {
            role: Role::System,
            content: content.into(),
        }
    }
    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Message {
            role: Role::User,
            content: content.into(),
        }
    }
    /// An assistant message.
    pub fn assistant(content: impl Into<String>) -> Self {
        Message {
            role: Role::Assistant,
            content: content.into(),
        }
    }
}
