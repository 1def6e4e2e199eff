//! Building the CLI's JSON records ([`TreeRecord`], [`ContextRecord`]) from a session, so the CLI and
//! the conformance tests share one definition.

use ctxkit_protocol::{ContextRecord, TreeNodeRecord, TreeRecord};

use crate::error::Result;
use crate::llm::convert_values_to_llm;
use crate::session::{LeafSelector, Session};

/// How context messages are rendered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContextForm {
    /// As the session holds them (Pi's `buildSessionContext`).
    Session,
    /// As a provider receives them (Pi's `convertToLlm`).
    Llm,
}

impl Session {
    /// The whole tree as `ctxkit tree --json` prints it.
    pub fn tree_record(&self) -> TreeRecord {
        let index = self.index();
        let nodes = self
            .tree()
            .into_iter()
            .filter_map(|node| {
                let entry = index.get(node.index)?;
                Some(TreeNodeRecord {
                    id: entry.id().to_owned(),
                    parent_id: entry.parent_id().map(str::to_owned),
                    depth: node.depth as u64,
                    kind: entry.type_name().to_owned(),
                    role: entry.role().map(str::to_owned),
                    label: index.label(entry.id()).map(str::to_owned),
                    children: node.children as u64,
                })
            })
            .collect();
        TreeRecord {
            leaf_id: self.leaf_id().map(str::to_owned),
            nodes,
        }
    }

    /// The context at `leaf` as `ctxkit context --json` prints it.
    pub fn context_record(
        &self,
        leaf: LeafSelector<'_>,
        form: ContextForm,
    ) -> Result<ContextRecord> {
        let context = self.context_at(leaf);
        let messages = self.message_values(&context.messages)?;
        let messages = match form {
            ContextForm::Session => messages,
            ContextForm::Llm => convert_values_to_llm(&messages),
        };
        let leaf_id = match leaf {
            LeafSelector::Current => self.leaf_id().map(str::to_owned),
            LeafSelector::BeforeFirst => None,
            LeafSelector::Entry(id) => Some(id.to_owned()),
        };
        Ok(ContextRecord {
            leaf_id,
            thinking_level: context.thinking_level,
            model: context.model,
            messages,
        })
    }
}
